"""`inferqa diagnose ...` (the functions of `inferqa.diagnose.stage`): their printing."""

from __future__ import annotations

from typing import Any

from ..diagnose.stage import diagnose_monotonicity, diagnose_window
from .app import InferqaTyper, app
from .output import print_tables
from .stage_command import stage_command

diagnose_app = InferqaTyper(help="Diagnose a retriever on the benchmark's hint structure: `monotonicity`, "
                            "`window` (distinct questions in a run's head).",
                            no_args_is_help=True)
app.add_typer(diagnose_app, name="diagnose")


def show(report: Any, _s: Any, fmt: str | None) -> None:
    print_tables([report.text_table()], fmt, report.to_dict())


stage_command(diagnose_monotonicity, show, name="monotonicity", tables=True, group=diagnose_app)
stage_command(diagnose_window, show, name="window", tables=True, group=diagnose_app)
