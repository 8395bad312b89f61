"""`inferqa run CONFIG`, `demo`, `explore` and `finetune` (their code: `inferqa.experiments`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from ..experiments.stage import demo, explore, run
from ..experiments.finetune import finetune
from .output import echo_lines, print_tables
from .stage_command import stage_command


def show_experiment(outcome: Any, _settings: Any, fmt: str | None) -> None:
    from ..experiments.tables import all_tables

    tables = [t for t in all_tables(outcome.results) if not t.name.startswith("tests-")]  # tests: files only
    if fmt == "json":
        typer.echo(json.dumps([json.loads(t.to_json()) for t in tables], indent=2))
    elif fmt == "table":
        print_tables([t.text_table() for t in tables], fmt)
    else:  # as the files in tables/ hold them
        typer.echo("\n".join(t.render(fmt) for t in tables))
    # what was done, on stdout beside a table, on stderr beside a file format (stdout stays parseable)
    echo_lines(outcome.summary_lines(), err=fmt not in ("table", "md"))


def show_page(page: Path, _settings: Any, _fmt: str | None) -> None:
    typer.echo(f"explorer: {page} ({page.stat().st_size / 1e6:.2f} MB)")


def show_model(path: Path, _settings: Any, _fmt: str | None) -> None:
    typer.echo(f"model: {path}")


stage_command(run, show_experiment, tables="md")
stage_command(demo, show_experiment, tables="md")
stage_command(explore, show_page)
stage_command(finetune, show_model)
