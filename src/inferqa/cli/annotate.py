"""`inferqa annotate export|import` (the functions of `inferqa.annotate.stage`): people verify the
labellers' accepted answers."""

from __future__ import annotations

from typing import Any

import typer

from ..annotate.stage import annotate_export, annotate_import
from ..parameters import LEAK_FLAG_WORDS
from .app import InferqaTyper, app
from .output import echo_lines
from .stage_command import stage_command

annotate_app = InferqaTyper(help="Human verification of labels: export the distinct accepted or contested answers to "
                            "a sheet, import the verdicts back into the benchmark.", no_args_is_help=True)
app.add_typer(annotate_app, name="annotate")


def show_export(summary: Any, _s: Any, _fmt: str | None) -> None:
    typer.echo(summary.line())


def show_import(summary: Any, _s: Any, _fmt: str | None) -> None:
    echo_lines(summary.lines())


stage_command(annotate_export, show_export, name="export", group=annotate_app)
stage_command(annotate_import, show_import, name="import", group=annotate_app, words=LEAK_FLAG_WORDS)
