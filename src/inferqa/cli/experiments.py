"""`inferqa run CONFIG`, `inferqa demo` and `inferqa explore`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from ..stages import Settings
from ..stages.experiment import DEMO, EXPLORE, RUN
from .output import print_tables
from .stage_command import stage_command


def show_experiment(outcome: Any, _settings: Settings, fmt: str | None) -> None:
    from ..experiments.tables import all_tables

    tables = [t for t in all_tables(outcome.results) if not t.name.startswith("tests-")]  # tests: files only
    if fmt == "json":
        typer.echo(json.dumps([json.loads(t.to_json()) for t in tables], indent=2))
    elif fmt == "table":
        print_tables([t.text_table() for t in tables], fmt)
    else:  # as the files in tables/ hold them
        typer.echo("\n".join(t.render(fmt) for t in tables))
    # what was done, on stdout beside a table, on stderr beside a file format (stdout stays parseable)
    for line in outcome.summary_lines():
        typer.echo(line, err=fmt not in ("table", "md"))


def show_page(page: Path, _settings: Settings, _fmt: str | None) -> None:
    typer.echo(f"explorer: {page} ({page.stat().st_size / 1e6:.2f} MB)")


stage_command(RUN, show_experiment, tables="md")
stage_command(DEMO, show_experiment, tables="md")
stage_command(EXPLORE, show_page)
