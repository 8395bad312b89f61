"""`inferqa plugins [KIND] [NAME]` (declared in `inferqa.stages.plugins`): its printing."""

from __future__ import annotations

import typer

from ..stages import Settings
from ..stages.plugins import PLUGINS
from .stage_command import stage_command


def show(lines: list[str], _s: Settings, _fmt: str | None) -> None:
    for line in lines:
        typer.echo(line)


stage_command(PLUGINS, show)
