"""`inferqa doctor` (`inferqa.evaluation.stage.doctor`): its printing; exit 1 on any finding."""

from __future__ import annotations

from typing import Any

import typer

from ..evaluation.stage import doctor
from .output import echo_json, echo_lines
from .stage_command import stage_command


def show(report: dict[str, Any], s: Any, _fmt: str | None) -> None:
    from ..evaluation.doctor import report_lines

    if s.as_json:
        echo_json(report)
    else:
        echo_lines(report_lines(report))
    if not report["ok"]:
        raise typer.Exit(1)


stage_command(doctor, show)
