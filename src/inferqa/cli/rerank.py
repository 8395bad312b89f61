"""`inferqa rerank`: a TREC run in, a reranked TREC run out."""

from __future__ import annotations

import time
from pathlib import Path
from typing import List, Optional

import typer

from ..options import parse_key_values
from .app import app
from .retrieve import DIVERSIFY_BY_HELP

RERANKER_HELP = ("llm-pointwise | llm-listwise | upr | cross-encoder | monot5 | rankt5 | lit5 | oracle "
                 "(`inferqa plugins reranker` lists them with their options).")
LLM_HELP = ("LLM rerankers: LLM spec (smollm2, gemma3-270m, llama-cpp:/x.gguf, openai:MODEL, "
            "transformers:ID).")
MODEL_HELP = "cross-encoder and the T5 family: HF id or local folder of the weights."


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
    depth: int = typer.Option(100, "--depth", min=1, help="Rerank the top DEPTH of each question; the rest "
                                                          "stays below in its order."),
    batch_size: Optional[int] = typer.Option(None, "--batch-size", help="Batch size (cross-encoder, T5 family)."),
    split: Optional[str] = typer.Option(None, "--split", help="Only the questions of this split "
                                                              "(the output holds only them)."),
    options: List[str] = typer.Option([], "--option", help="Extra reranker option KEY=VALUE, repeatable "
                                                           "(e.g. window=10, reduction=mean)."),
    cache: Optional[Path] = typer.Option(None, "--cache", help="LLM call cache file (default: "
                                                               "$INFERQA_LLM_CACHE or ~/.cache/inferqa/llm.sqlite)."),
    no_cache: bool = typer.Option(False, "--no-cache", help="Do not cache LLM calls."),
    backend: str = typer.Option("local", "--backend", help="local, or ray: questions reranked on a pool of Ray "
                                "actors, each loading the model once (README: Scaling)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster: auto, ray://HEAD:10001 "
                                              "(default: start Ray here)."),
    num_actors: int = typer.Option(2, "--num-actors", help="Ray actors (--backend ray)."),
    diversify: Optional[int] = typer.Option(None, "--diversify", help="After reranking: at most N passages of one "
                                            "hint-group in the head; the rest follow in order."),
    diversify_by: Optional[str] = typer.Option(None, "--diversify-by", help=DIVERSIFY_BY_HELP),
) -> None:
    """Rerank the top --depth passages of every question of RUN; the passage set is kept.

    Resumable: finished questions go to a checkpoint beside --out, LLM calls to the call cache.
    """
    from rich.console import Console

    from .. import registry
    from ..benchmark import Benchmark
    from ..evaluate import open_run
    from ..io import check_output
    from ..rerank import rerank_run
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
    from ..rerank.diversify import check_diversify

    check_diversify(diversify, diversify_by)
    benchmark = Benchmark(bench)
    run, qids = open_run(run_file, benchmark, split)
    ckpt = checkpoint_path(out)
    t0 = time.perf_counter()
    reranked = rerank_run(run, benchmark, reranker, options=extra, depth=depth, qids=qids, checkpoint=ckpt,
                          progress=True, executor=executor)
    seconds = time.perf_counter() - t0
    if diversify is not None:
        from ..rerank.diversify import diversify as diversify_run

        reranked = diversify_run(reranked, benchmark, diversify, diversify_by or "set")
    reranked.save(out)
    ckpt.unlink(missing_ok=True)
    scored = sum(min(depth, len(reranked[q])) for q in reranked)
    Console().print(f"[bold]{out}[/]: {len(reranked):,} questions, {scored:,} passages reranked by {reranker} "
                    f"in {seconds:.1f} s ({scored / max(seconds, 1e-9):.1f} passages/s)")
