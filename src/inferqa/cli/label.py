"""`inferqa label` (declared in `inferqa.stages.build`): its printing."""

from __future__ import annotations

from typing import Any

from ..stages import Settings
from ..stages.build import LABEL, LABELER_WORDS
from .stage_command import stage_command


def show(done: Any, s: Settings, _fmt: str | None) -> None:
    from rich.console import Console

    Console().print(f"[bold]{s.bench}[/]: {done.record['passages_labelled']:,} passages labelled "
                    f"({done.record['passages_asked']:,} asked, mode {s.label_mode}); labels "
                    + ", ".join(f"{k}: {v:,}" for k, v in done.labels.items()))


stage_command(LABEL, show, words=LABELER_WORDS)
