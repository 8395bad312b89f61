"""`inferqa tune-diversify`: the adaptive diversification margin chosen on one split."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..retrieve.diversify import GROUPING as DIVERSIFY_BY, PER_GROUP as DIVERSIFY_N
from .app import app
from .flags import option_flag
from .llm_options import parse_list

DOCS = "docs/retrieve.md#adaptive-diversification"


@app.command("tune-diversify")
def tune_diversify_cmd(
    run: Path = typer.Argument(..., metavar="RUN", help="TREC run to diversify (e.g. from `inferqa retrieve`)."),
    bench: Path = typer.Option(..., "--bench", "-b", help="Benchmark directory the run was made on."),
    split: str = typer.Option("dev", "--split", help="Split to tune on; score the chosen margin on another one."),
    margins: Optional[List[str]] = typer.Option(None, "--margins", help="Margins to try, each ≥ 0 (comma-separated "
                                                "or repeated; default: those diversifying 0, 10, …, 100 % of the "
                                                "split's queries)."),
    shares: Optional[List[str]] = typer.Option(None, "--shares", help="Instead of --margins: shares of the split's "
                                               "queries to diversify, each in [0, 1] (e.g. 0.4)."),
    metric: str = typer.Option("hit@10", "--metric", help="Measure that picks the margin (ties: the smaller)."),
    measures: Optional[str] = typer.Option(None, "--measures", "-m", help="Measures to show, comma-separated "
                                           "(default hit@1,hit@10,mrr,ndcg@10; names as in docs/retrieve.md)."),
    diversify: Optional[int] = option_flag(DIVERSIFY_N, "--diversify", note="default 1 here"),
    diversify_by: Optional[str] = option_flag(DIVERSIFY_BY, "--diversify-by"),
    as_json: bool = typer.Option(False, "--json", help="Print the grid as JSON (fractions)."),
) -> None:
    """Score a grid of --diversify-margin values on a split and print it, best first.

    Apply the chosen margin to another split with `inferqa retrieve` or `inferqa rerank`
    --diversify-margin (docs/retrieve.md#adaptive-diversification).
    """
    from dataclasses import asdict

    from rich.console import Console
    from rich.table import Table

    from ..formats.benchmark import Benchmark
    from ..tuning import TUNE_MEASURES, tune_margin
    from .output import echo_json, rounded

    grid = parse_list(margins, float, flag="margins") if margins else None
    fractions = parse_list(shares, float, flag="shares") if shares else None
    t = tune_margin(run, Benchmark(bench), split=split, margins=grid, shares=fractions, per_group=1 if diversify is None else diversify,
                    by=diversify_by or DIVERSIFY_BY.default, metric=metric,
                    measures=measures or TUNE_MEASURES)
    if as_json:
        echo_json({**{k: v for k, v in asdict(t).items() if k != "rows"}, "margin": t.margin,
                   "rows": [asdict(r) for r in t.rows]})
        return
    names = list(t.rows[0].scores)
    table = Table(title=f"--diversify {t.per_group} --diversify-by {t.by}: margins on {t.split} "
                        f"({t.questions} questions), by {t.metric}")
    for col in ("margin", "diversified %", *names):
        table.add_column(col, justify="right")
    for r in t.rows:
        shown = "every query" if r.margin is None else str(rounded(r.margin))
        table.add_row(shown, f"{100 * r.share:.1f}", *[f"{100 * r.scores[n]:.2f}" for n in names])
    console = Console()
    console.print(table)
    flags = f"--diversify {t.per_group} --diversify-by {t.by}"
    chosen = "(every query: no margin)" if t.margin is None else f"--diversify-margin {rounded(t.margin)}"
    console.print(f"best on {t.split}: {flags} {chosen}; score it on another split "
                  f"(`inferqa retrieve` or `inferqa rerank` with these flags)")
