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
    say = (lambda s: typer.echo(s)) if fmt in ("table", "md") else (lambda s: typer.echo(s, err=True))
    out_dir: Path = outcome.out_dir
    tests = outcome.results.tests
    if tests:
        from ..experiments.comparisons import CORRECTION, SIGNIFICANT, significant

        say(f"paired tests: {len(tests)} in {out_dir / 'tables'}/tests-*.md, "
            f"{sum(map(significant, tests))} with {CORRECTION}-corrected p < {SIGNIFICANT}")
    total = outcome.results.timings.get("total", 0.0)
    say(f"stages: {len(outcome.executed)} computed, {len(outcome.reused)} reused; {outcome.llm_summary()}; "
        f"wall time {total:.1f} s")
    say(f"tables: {out_dir / 'tables'}")
    say(f"report: {outcome.report}")
    say(f"explorer: {outcome.explorer}")


def show_page(page: Path, _settings: Settings, _fmt: str | None) -> None:
    typer.echo(f"explorer: {page} ({page.stat().st_size / 1e6:.2f} MB)")


stage_command(RUN, show_experiment, tables="md")
stage_command(DEMO, show_experiment, tables="md")
stage_command(EXPLORE, show_page)
