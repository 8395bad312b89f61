"""`inferqa diagnose ...`: diagnostics of a retriever on a benchmark's hint structure."""

from __future__ import annotations

from typing import Any

from ..stages import Settings
from ..stages.diagnose import MONOTONICITY, WINDOW
from .app import InferqaTyper, app
from .output import print_tables
from .stage_command import stage_command

diagnose_app = InferqaTyper(help="Diagnose a retriever on the benchmark's hint structure: `monotonicity`, "
                            "`window` (distinct questions in a run's head).",
                            no_args_is_help=True)
app.add_typer(diagnose_app, name="diagnose")


def show(report: Any, _settings: Settings, fmt: str | None) -> None:
    print_tables([report.text_table()], fmt, report.to_dict())


stage_command(MONOTONICITY, show, tables=True, group=diagnose_app)
stage_command(WINDOW, show, tables=True, group=diagnose_app)
