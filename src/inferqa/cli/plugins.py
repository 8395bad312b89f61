"""`inferqa plugins [KIND] [NAME]` (declared in `inferqa.stages.plugins`): its printing."""

from __future__ import annotations

from ..stages import Settings
from ..stages.plugins import PLUGINS
from .output import echo_lines
from .stage_command import stage_command


def show(lines: list[str], _s: Settings, _fmt: str | None) -> None:
    echo_lines(lines)


stage_command(PLUGINS, show)
