"""`inferqa tune-union`: grid-search union_freq's alpha/beta by reader EM."""

from __future__ import annotations

from typing import Any

from ..stages import Settings
from ..stages.tune import TUNE_UNION
from .stage_command import stage_command


def show(tuned: Any, settings: Settings, fmt: str | None) -> None:
    from ..tabular import TextTable
    from .output import print_tables

    grid = tuned.grid
    cols = tuple(grid[0])
    rows = tuple(tuple(f"{r[c]:.2f}" if c in ("alpha", "beta") else f"{100 * r[c]:.2f}" for c in cols) for r in grid)
    best = f"best: --alpha {grid[0]['alpha']} --beta {grid[0]['beta']}"
    table = TextTable(f"union_freq grid on {settings.split} ({tuned.questions} questions)", cols, rows, 0, note=best)
    print_tables([table], fmt, grid)


stage_command(TUNE_UNION, show, tables=True)
