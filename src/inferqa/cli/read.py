"""`inferqa read`: answer each question from the top-k passages of a run."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..stage_options import READ_KS, READ_STRATEGIES, READER_LLM, UNION_ALPHA, UNION_BETA
from .app import allow_partial_opt, app
from .flags import format_flag, json_flag, option_flag, chosen_format
from .output import print_summary
from .llm_options import (RUN_HELP, backend_opt, cache_opt, llm_opener, llm_url_opt, no_cache_opt,
                          num_actors_opt, parse_list, ray_address_opt)


@app.command("read")
def read_cmd(
    run: str = typer.Argument(..., help=RUN_HELP),
    bench: Path = typer.Option(..., "--bench", "-b", help="Benchmark directory written by `inferqa build`."),
    llm: Optional[str] = option_flag(READER_LLM, "--llm"),
    strategy: Optional[List[str]] = option_flag(READ_STRATEGIES, "--strategy", "-s"),
    k: Optional[List[str]] = option_flag(READ_KS, "--k"),
    out: Path = typer.Option(..., "--out", "-o", help="ANSWERS.jsonl to write (atomically)."),
    split: Optional[str] = typer.Option(None, "--split", help="Only questions of this split (default: all in the run)."),
    alpha: Optional[float] = option_flag(UNION_ALPHA, "--alpha", owner="union_freq"),
    beta: Optional[float] = option_flag(UNION_BETA, "--beta", owner="union_freq"),
    cache: Optional[Path] = cache_opt, no_cache: bool = no_cache_opt,
    backend: str = backend_opt, ray_address: Optional[str] = ray_address_opt, num_actors: int = num_actors_opt,
    llm_url: Optional[List[str]] = llm_url_opt,
    allow_partial: bool = allow_partial_opt,
    table_format: str = format_flag(),
    as_json: bool = json_flag,
) -> None:
    """Answer each question from the top-k passages of RUN; write one row per question, strategy and k."""
    from ..formats.benchmark import Benchmark
    from ..formats import Answers, open_run
    from ..io import check_output
    from ..read import check_read_options, read_with_llm

    fmt = chosen_format(table_format, as_json)
    check_output(out)
    b = Benchmark(bench)
    ranked = open_run(run, b, split, allow_partial=allow_partial)
    strategies = parse_list(strategy, flag="strategy") if strategy else READ_STRATEGIES.default
    ks = parse_list(k, int, flag="k") if k else READ_KS.default
    given = {key: v for key, v in {"alpha": alpha, "beta": beta}.items() if v is not None}
    check_read_options(strategies, ks, **given)
    model = llm_opener(cache, no_cache, backend, ray_address, num_actors, llm_url)(llm or READER_LLM.default)
    try:
        rows = read_with_llm(b, ranked, model, strategies, ks, qids=ranked.qids, **given)
    finally:
        model.close()
    Answers(rows).to_file(out)
    print_summary(rows, ("em", "f1", "contains"), f"{out} ({len(rows)} rows, percent)", fmt)
    stats = getattr(model, "stats", None)
    if stats is not None:
        typer.echo(f"LLM cache: {stats.hits} hits, {stats.misses} backend calls", err=fmt != "table")
