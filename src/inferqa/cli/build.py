"""`inferqa build` (hints → benchmark directory) and `inferqa stats` (what is in one): their printing."""

from __future__ import annotations

from typing import Any

from ..construct.stage import stats
from ..label.stage import build
from ..parameters import BUILD_FLAG_WORDS
from .output import print_tables
from .stage_command import stage_command


def show_build(result: Any, s: Any, _fmt: str | None) -> None:
    from rich.console import Console

    Console().print(f"[bold]{s.out}[/]: {result.summary()}")
    if line := result.labels_line():
        Console().print(line)


def show_stats(counts: dict, s: Any, fmt: str | None) -> None:
    from ..construct.stats import stats_tables

    print_tables(stats_tables(counts, str(s.bench)), fmt, counts)


stage_command(build, show_build, words=BUILD_FLAG_WORDS)
stage_command(stats, show_stats, tables=True)
