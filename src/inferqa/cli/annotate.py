"""`inferqa annotate export|import`: people verify the labellers' accepted answers."""

from __future__ import annotations

from typing import Any

import typer

from ..stages import Settings
from ..parameters import LEAK_FLAG_WORDS
from ..stages.build import ANNOTATE_EXPORT, ANNOTATE_IMPORT
from .app import InferqaTyper, app
from .output import echo_lines
from .stage_command import stage_command

annotate_app = InferqaTyper(
    help="Human verification of labels: export the distinct accepted or contested answers to a sheet, "
         "import the verdicts back into the benchmark.",
    no_args_is_help=True,
)
app.add_typer(annotate_app, name="annotate")


def show_export(summary: Any, _settings: Settings, _fmt: str | None) -> None:
    typer.echo(summary.line())


def show_import(summary: Any, _settings: Settings, _fmt: str | None) -> None:
    echo_lines(summary.lines())


stage_command(ANNOTATE_EXPORT, show_export, group=annotate_app)
stage_command(ANNOTATE_IMPORT, show_import, group=annotate_app, words=LEAK_FLAG_WORDS)
