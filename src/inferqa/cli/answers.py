"""`inferqa evaluate-answers` (declared in `inferqa.stages.evaluate`): its printing."""

from __future__ import annotations

from typing import Any

from ..stages import Settings
from ..stages.evaluate import EVALUATE_ANSWERS
from .output import print_summary
from .stage_command import stage_command


def show(result: Any, s: Settings, fmt: str | None) -> None:
    rows, metrics = result
    of = f" of {s.split}" if s.split else ""
    print_summary(rows, metrics, f"{s.answers} ({len(rows)} rows{of}, percent)", fmt)


stage_command(EVALUATE_ANSWERS, show, tables=True)
