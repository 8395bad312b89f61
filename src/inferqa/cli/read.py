"""`inferqa read`: answer each question from the top-k passages of a run."""

from __future__ import annotations

from typing import Any

import typer

from ..stages import Settings
from ..stages.read import READ
from .output import print_summary
from .stage_command import stage_command


def show(done: Any, settings: Settings, fmt: str | None) -> None:
    rows = done.rows
    print_summary(rows, ("em", "f1", "contains"), f"{settings.out} ({len(rows)} rows, percent)", fmt)
    if done.cache is not None:
        typer.echo(f"LLM cache: {done.cache.hits} hits, {done.cache.misses} backend calls", err=fmt != "table")


stage_command(READ, show, tables=True)
