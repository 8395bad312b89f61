"""`inferqa read` (the function of `inferqa.reading.stage`): its summary table."""

from __future__ import annotations

from typing import Any

import typer

from ..reading.stage import read
from .output import print_summary
from .stage_command import stage_command


def show(done: Any, s: Any, fmt: str | None) -> None:
    rows = done.rows
    print_summary(rows, ("em", "f1", "contains"), f"{s.out} ({len(rows)} rows, percent)", fmt)
    if done.cache is not None:
        typer.echo(f"LLM cache: {done.cache.hits} hits, {done.cache.misses} backend calls", err=fmt != "table")


stage_command(read, show, tables=True)
