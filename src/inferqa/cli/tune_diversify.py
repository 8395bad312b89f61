"""`inferqa tune-diversify`: the adaptive diversification margin chosen on one split."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..retrieve.diversify import GROUPING as DIVERSIFY_BY
from ..stage_options import TUNE_MEASURES, TUNE_METRIC, TUNE_PER_GROUP, TUNE_SHARES
from .app import app
from .flags import chosen_format, format_flag, json_flag, option_flag
from .llm_options import parse_list


@app.command("tune-diversify")
def tune_diversify_cmd(
    run: Path = typer.Argument(..., metavar="RUN", help="TREC run to diversify (e.g. from `inferqa retrieve`)."),
    bench: Path = typer.Option(..., "--bench", "-b", help="Benchmark directory the run was made on."),
    split: str = typer.Option("dev", "--split", help="Split to tune on; score the chosen margin on another one."),
    margins: Optional[List[str]] = typer.Option(None, "--margins", help="Margins to try, each ≥ 0 (repeat the flag "
                                                "or comma-separate; default: those of --shares)."),
    shares: Optional[List[str]] = option_flag(TUNE_SHARES, "--shares", note="instead of --margins"),
    metric: Optional[str] = option_flag(TUNE_METRIC, "--metric"),
    measures: Optional[List[str]] = option_flag(TUNE_MEASURES, "--measures", "-m",
                                                note="names as `inferqa evaluate` takes them"),
    diversify: Optional[int] = option_flag(TUNE_PER_GROUP, "--diversify"),
    diversify_by: Optional[str] = option_flag(DIVERSIFY_BY, "--diversify-by"),
    table_format: str = format_flag(),
    as_json: bool = json_flag,
) -> None:
    """Score a grid of --diversify-margin values on a split and print it, best first.

    Apply the chosen margin, or the share of queries it diversifies, to another split with
    `inferqa retrieve` or `inferqa rerank` --diversify-margin or --diversify-share
    (docs/retrieve.md#adaptive-diversification).
    """
    from dataclasses import asdict

    from ..formats.benchmark import Benchmark
    from ..tabular import TextTable
    from ..tuning import tune_margin
    from .output import print_tables, rounded

    fmt = chosen_format(table_format, as_json)
    grid = parse_list(margins, float, flag="margins") if margins else None
    fractions = parse_list(shares, float, flag="shares") if shares else None
    given = {"per_group": diversify, "by": diversify_by, "metric": metric,
             "measures": ",".join(measures) if measures else None}
    t = tune_margin(run, Benchmark(bench), split=split, margins=grid, shares=fractions,
                    **{k: v for k, v in given.items() if v is not None})  # not given: tune_margin's defaults
    names = list(t.rows[0].scores)
    cells = tuple(("every query" if r.margin is None else str(rounded(r.margin)), f"{100 * r.share:.1f}",
                   *[f"{100 * r.scores[n]:.2f}" for n in names]) for r in t.rows)
    flags = f"--diversify {t.per_group} --diversify-by {t.by}"
    chosen = ("(every query: no margin)" if t.margin is None else
              f"--diversify-margin {rounded(t.margin)} (or, as a share: --diversify-share {t.share:.4g})")
    note = (f"best on {t.split}: {flags} {chosen}; score it on another split "
            f"(`inferqa retrieve` or `inferqa rerank` with these flags)")
    table = TextTable(f"{flags}: margins on {t.split} ({t.questions} questions), by {t.metric}",
                      ("margin", "diversified %", *names), cells, 1, note=note)
    payload = {**{k: v for k, v in asdict(t).items() if k != "rows"}, "margin": t.margin, "share": t.share,
               "rows": [asdict(r) for r in t.rows]}
    print_tables([table], fmt, payload)
