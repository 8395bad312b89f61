"""`inferqa index`, `retrieve`, `oracle` and `fuse` (the functions of `inferqa.retrieve.stage`): their printing."""

from __future__ import annotations

from typing import Any

import typer

from .. import registry
from ..parameters import RETRIEVER, SHORTCUTS
from ..retrieve.stage import fuse, index, oracle, retrieve
from .stage_command import declared_help, stage_command

# Help only the registry can write: the plugins installed and what each declares.
RETRIEVER_HELPS = {
    "retriever": " | ".join(registry.available("retriever")) + " (`inferqa plugins retriever NAME`: its "
                 f"options; default {RETRIEVER.default}).",
    **{o.name: declared_help("retriever", o.name) for o in SHORTCUTS},
    "dedup": "bm25: index the expanded corpus as it is (plain bm25s), not each hint subset once as it does "
             "without this flag.",
}
FUSION_HELPS = {
    "method": " | ".join(registry.available("fusion")) + " (`inferqa plugins fusion`: what each computes; "
              f"default {fuse.stage.default('method')}).",
    "weights": "Comma-separated weight ≥ 0 per run (default 1 each): "
               + ", ".join(p.name for p in registry.plugins("fusion") if p.meta.get("weights")) + ".",
    "rrf_k": declared_help("fusion", "rrf_k"), "norm": declared_help("fusion", "norm"),
}


def show_index(out: Any, _s: Any, _fmt: str | None) -> None:
    typer.echo(f"index written: {out}")


def show_run(run: Any, s: Any, _fmt: str | None) -> None:
    typer.echo(f"{len(run)} questions × up to {s.depth} passages → {s.out}")


def show_oracle(run: Any, s: Any, _fmt: str | None) -> None:
    typer.echo(f"{s.kind} oracle: {len(run)} questions → {s.out}")


def show_fused(run: Any, s: Any, _fmt: str | None) -> None:
    typer.echo(f"{len(s.runs)} runs fused ({s.method}): {len(run)} questions → {s.out}")


stage_command(index, show_index, helps=RETRIEVER_HELPS)
stage_command(retrieve, show_run, helps=RETRIEVER_HELPS)
stage_command(oracle, show_oracle)
stage_command(fuse, show_fused, helps=FUSION_HELPS)
