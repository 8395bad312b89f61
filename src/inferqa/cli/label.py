"""`inferqa label` (declared in `inferqa.stages.build`): its printing."""

from __future__ import annotations

from typing import Any

from ..stages import Settings
from ..parameters import LABELER_WORDS
from ..stages.build import LABEL
from .stage_command import stage_command


def show(done: Any, s: Settings, _fmt: str | None) -> None:
    from rich.console import Console

    Console().print(f"[bold]{s.bench}[/]: {done.line(s.label_mode)}")


stage_command(LABEL, show, words=LABELER_WORDS)
