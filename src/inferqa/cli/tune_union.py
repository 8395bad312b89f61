"""`inferqa tune-union`: grid-search union_freq's alpha/beta by reader EM."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..stage_options import READER_LLM, TUNE_ALPHAS, TUNE_KS
from .app import allow_partial_opt, app
from .flags import format_flag, json_flag, option_flag, chosen_format
from .output import print_tables
from .llm_options import RUN_HELP, cache_opt, llm_opener, no_cache_opt, parse_list


@app.command("tune-union")
def tune_union_cmd(
    run: str = typer.Argument("optimal", help=RUN_HELP),
    bench: Path = typer.Option(..., "--bench", "-b", help="Benchmark directory."),
    split: str = typer.Option("dev", "--split", help="Split to tune on."),
    llm: Optional[str] = option_flag(READER_LLM, "--llm"),
    k: Optional[List[str]] = option_flag(TUNE_KS, "--k"),
    alphas: Optional[List[str]] = option_flag(TUNE_ALPHAS, "--alphas", owner="union_freq"),
    cache: Optional[Path] = cache_opt, no_cache: bool = no_cache_opt,
    allow_partial: bool = allow_partial_opt,
    table_format: str = format_flag(),
    as_json: bool = json_flag,
) -> None:
    """Grid-search union_freq's alpha/beta on a split by reader EM; prints the grid, best first."""
    from ..formats.benchmark import Benchmark
    from ..formats import open_run
    from ..read import check_read_options, tune_union
    from ..tabular import TextTable

    fmt = chosen_format(table_format, as_json)

    b = Benchmark(bench)
    ranked = open_run(run, b, split, allow_partial=allow_partial)
    ks = parse_list(k, int, flag="k") if k else TUNE_KS.default
    grid_alphas = parse_list(alphas, float, flag="alphas") if alphas else TUNE_ALPHAS.default
    check_read_options(["union_freq"], ks, grid_alphas)
    model = llm_opener(cache, no_cache)(llm or READER_LLM.default)
    try:
        grid = tune_union(b, ranked, model, ks, qids=ranked.qids, alphas=grid_alphas)
    finally:
        model.close()
    cols = tuple(grid[0])
    rows = tuple(tuple(f"{r[c]:.2f}" if c in ("alpha", "beta") else f"{100 * r[c]:.2f}" for c in cols) for r in grid)
    best = f"best: --alpha {grid[0]['alpha']} --beta {grid[0]['beta']}"
    table = TextTable(f"union_freq grid on {split} ({len(ranked.qids)} questions)", cols, rows, 0, note=best)
    print_tables([table], fmt, grid)
