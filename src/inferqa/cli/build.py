"""`inferqa build` (hints → benchmark directory) and `inferqa stats` (what is in one)."""

from __future__ import annotations

from typing import Any

from ..stages import Settings
from ..parameters import BUILD_FLAG_WORDS
from ..stages.build import BUILD, STATS
from .output import print_tables
from .stage_command import stage_command


def show_build(result: Any, settings: Settings, _fmt: str | None) -> None:
    from rich.console import Console

    Console().print(f"[bold]{settings.out}[/]: {result.summary()}")
    if line := result.labels_line():
        Console().print(line)


stage_command(BUILD, show_build, words=BUILD_FLAG_WORDS)


def show_stats(stats: dict, settings: Settings, fmt: str | None) -> None:
    from ..construct.stats import stats_tables

    print_tables(stats_tables(stats, str(settings.bench)), fmt, stats)


stage_command(STATS, show_stats, tables=True)
