"""`inferqa tune-union` and `inferqa tune-diversify` (the functions of `inferqa.tune.stage`): their tables."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from ..tabular import TextTable, percent
from ..tune.stage import tune_diversify, tune_union
from .output import print_tables, rounded
from .stage_command import stage_command


def show_union(tuned: Any, s: Any, fmt: str | None) -> None:
    grid = tuned.grid
    cols = tuple(grid[0])
    rows = tuple(tuple(f"{r[c]:.2f}" if c in ("alpha", "beta") else percent(r[c]) for c in cols) for r in grid)
    best = f"best: --alpha {grid[0]['alpha']} --beta {grid[0]['beta']}"
    table = TextTable(f"union_freq grid on {s.split} ({tuned.questions} questions)", cols, rows, 0, note=best)
    print_tables([table], fmt, grid)


def show_diversify(t: Any, _s: Any, fmt: str | None) -> None:
    names = list(t.rows[0].scores)
    cells = tuple(("every query" if r.margin is None else str(rounded(r.margin)), f"{100 * r.share:.1f}",
                   *[percent(r.scores[n]) for n in names]) for r in t.rows)
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


stage_command(tune_union, show_union, tables=True)
stage_command(tune_diversify, show_diversify, tables=True)
