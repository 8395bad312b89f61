"""`inferqa rerank` (the function of `inferqa.reranking.stage`): its printing."""

from __future__ import annotations

from typing import Any

import typer

from ..parameters import RERANK_WINDOW
from ..reranking.stage import rerank
from .stage_command import stage_command


def show(done: Any, s: Any, _fmt: Any) -> None:
    from rich.console import Console

    window = "top passages" if s.window == RERANK_WINDOW.default else f"one per {s.window}" + (
        ", all its hints" if s.representative == "all-hints" else "")
    Console().print(f"[bold]{s.out}[/]: {len(done.run):,} questions, {done.scored:,} reranker calls "
                    f"({window}, at most {s.depth} per question) by {s.reranker} in {done.seconds:.1f} s")
    typer.echo(done.counts.line(done.seconds))


stage_command(rerank, show)
