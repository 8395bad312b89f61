"""`inferqa label`: label an existing benchmark with LLMs."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..stage_options import LABELER
from .app import app
from .flags import option_flag
from .llm_options import backend_opt, cache_opt, llm_opener, llm_url_opt, num_actors_opt, ray_address_opt


@app.command("label")
def label_cmd(
    bench: Path = typer.Argument(..., help="Benchmark directory to label in place (qrels.tsv, labels.jsonl, meta.json)."),
    labeler: Optional[List[str]] = option_flag(LABELER, "--labeler"),
    label_mode: str = typer.Option("full", "--label-mode", help="full: every ordering; subsets: one ordering per "
                                   "subset, label copied to the others (an approximation)."),
    parametric: bool = typer.Option(False, "--parametric", help="Also run the parametric test (parametric.jsonl)."),
    split_by: Optional[str] = typer.Option(None, "--split-by", help="parametric: rewrite splits.json from the test."),
    judge: Optional[str] = typer.Option(None, "--judge", help="LLM judge of answer correctness (default: exact match)."),
    stop_at_first_correct: bool = typer.Option(False, "--labellers-stop-at-first-correct", help="Ask the labellers "
                                               "in turn and stop at the first that is right (same labels; skipped "
                                               "labellers recorded as not asked). Default: ask every labeller."),
    cache: Optional[Path] = cache_opt,
    backend: str = backend_opt, ray_address: Optional[str] = ray_address_opt, num_actors: int = num_actors_opt,
    llm_url: Optional[List[str]] = llm_url_opt,
) -> None:
    """Label an existing benchmark with LLMs, as `inferqa build --label` does while building."""
    from rich.console import Console

    from ..formats.benchmark import Benchmark
    from ..io import check_output
    from ..label.hook import relabel

    check_output(bench / "labels.jsonl")
    record = relabel(bench, labeler or [], llm_opener(cache, False, backend, ray_address, num_actors, llm_url),
                     mode=label_mode, parametric=parametric, split_by=split_by, judge=judge,
                     stop_at_first_correct=stop_at_first_correct)
    labels = Benchmark(bench).meta.get("labels", {})
    Console().print(f"[bold]{bench}[/]: {record['passages_labelled']:,} passages labelled "
                    f"({record['passages_asked']:,} asked, mode {label_mode}); labels "
                    + ", ".join(f"{k}: {v:,}" for k, v in labels.items()))
