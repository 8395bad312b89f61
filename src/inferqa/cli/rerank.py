"""`inferqa rerank`: a TREC run in, a reranked TREC run out."""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from ..defaults import RERANK_DEPTH
from ..options import parse_key_values
from .app import allow_partial_opt, app
from ..retrieve.diversify import FLAGS as DIVERSIFY_FLAGS, GROUPING as DIVERSIFY_BY, MARGIN as DIVERSIFY_MARGIN
from ..retrieve.diversify import SHARE as DIVERSIFY_SHARE
from ..retrieve.diversify import PER_GROUP as DIVERSIFY_N
from .flags import option_flag
from .llm_options import backend_opt, cache_opt, no_cache_opt, num_actors_opt, ray_address_opt

RERANKER_HELP = ("llm-pointwise | llm-listwise | upr | cross-encoder | monot5 | rankt5 | lit5 | oracle "
                 "(`inferqa plugins reranker` lists them with their options).")
LLM_HELP = ("LLM rerankers: LLM spec (smollm2, gemma3-270m, llama-cpp:/x.gguf, openai:MODEL, "
            "transformers:ID); default: the reranker's own (`inferqa plugins reranker`).")
MODEL_HELP = ("cross-encoder and the T5 family: HF id or local folder of the weights; default: the "
              "reranker's own.")


def checkpoint_path(out: Path) -> Path:
    return out.with_name(f".{out.name}.rerank-checkpoint.jsonl")


@app.command("rerank")
def rerank_cmd(
    run_file: Path = typer.Argument(..., metavar="RUN", help="TREC run to rerank (e.g. from `inferqa retrieve`)."),
    bench: Path = typer.Option(..., "--bench", "-b", help="Benchmark directory the run was made on."),
    reranker: str = typer.Option(..., "--reranker", "-r", help=RERANKER_HELP),
    out: Path = typer.Option(..., "--out", "-o", help="Reranked TREC run to write (atomically)."),
    llm: Optional[str] = typer.Option(None, "--llm", help=LLM_HELP),
    model: Optional[str] = typer.Option(None, "--model", "-m", help=MODEL_HELP),
    depth: int = option_flag(RERANK_DEPTH, "--depth", filled=True),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", help="Batch size (cross-encoder, T5 family)."),
    split: Optional[str] = typer.Option(None, "--split", help="Only the questions of this split "
                                                              "(the output holds only them)."),
    options: List[str] = typer.Option([], "--option", help="Extra reranker option KEY=VALUE, repeatable "
                                                           "(e.g. window=10, reduction=mean)."),
    cache: Optional[Path] = cache_opt, no_cache: bool = no_cache_opt, backend: str = backend_opt,
    ray_address: Optional[str] = ray_address_opt, num_actors: int = num_actors_opt,
    diversify: Optional[int] = option_flag(DIVERSIFY_N, "--diversify"),
    diversify_by: Optional[str] = option_flag(DIVERSIFY_BY, "--diversify-by"),
    diversify_margin: Optional[float] = option_flag(DIVERSIFY_MARGIN, "--diversify-margin",
                                                    note="needs --diversify; `inferqa tune-diversify` chooses it"),
    diversify_share: Optional[float] = option_flag(DIVERSIFY_SHARE, "--diversify-share",
                                                   note="needs --diversify; not with --diversify-margin; "
                                                        "`inferqa tune-diversify` chooses it"),
    allow_partial: bool = allow_partial_opt,
) -> None:
    """Rerank the top --depth passages of every question of RUN; the passage set is kept.

    Resumable: finished questions go to a checkpoint beside --out, LLM calls to the call cache.
    """
    from rich.console import Console

    from .. import registry
    from ..formats.benchmark import Benchmark
    from ..formats import open_run
    from ..io import check_output
    from ..rerank import rerank_run
    from ..retrieve.diversify import check_diversify, diversify as diversify_run
    from ..scale import Executor

    check_output(out)
    if cache is not None and not no_cache:
        check_output(cache)
    plugin = registry.get("reranker", reranker)
    given = {"llm": llm, "model": model, "batch_size": batch_size}
    extra = {**{k: v for k, v in given.items() if v is not None}, **parse_key_values(options, "option")}
    if "llm_options" in plugin.options:
        extra.setdefault("llm_options", {"cache": None} if no_cache else ({"cache": str(cache)} if cache else {}))
    plugin.settings(extra)  # option errors before the run is read
    executor = Executor(backend, ray_address=ray_address, num_actors=num_actors)
    per_group, grouping, margin, share = check_diversify(diversify, diversify_by, diversify_margin,
                                                         diversify_share, names=DIVERSIFY_FLAGS)
    benchmark = Benchmark(bench)
    run = open_run(run_file, benchmark, split, allow_partial=allow_partial)
    ckpt = checkpoint_path(out)
    t0 = time.perf_counter()
    reranked = rerank_run(run, benchmark, reranker, options=extra, depth=depth, qids=run.qids, checkpoint=ckpt,
                          progress=True, executor=executor)
    seconds = time.perf_counter() - t0
    if per_group is not None:
        reranked = diversify_run(reranked, benchmark, per_group, grouping, margin, share)
    reranked.to_file(out, against=benchmark)
    ckpt.unlink(missing_ok=True)
    scored = sum(min(depth, len(reranked[q])) for q in reranked)
    Console().print(f"[bold]{out}[/]: {len(reranked):,} questions, {scored:,} passages reranked by {reranker} "
                    f"in {seconds:.1f} s ({scored / max(seconds, 1e-9):.1f} passages/s)")
