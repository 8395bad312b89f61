"""`inferqa label` (the function of `inferqa.label.stage`): its printing."""

from __future__ import annotations

from typing import Any

from ..label.stage import label
from ..parameters import LABELER_WORDS
from .stage_command import stage_command


def show(done: Any, s: Any, _fmt: str | None) -> None:
    from rich.console import Console

    Console().print(f"[bold]{s.bench}[/]: {done.line(s.label_mode)}")


stage_command(label, show, words=LABELER_WORDS)
