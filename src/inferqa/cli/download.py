"""`inferqa download` (declared in `inferqa.stages.download`): its printing."""

from __future__ import annotations

from pathlib import Path

import typer

from ..stages import Settings
from ..stages.download import DOWNLOAD
from .stage_command import stage_command


def show(result: tuple[Path, int], _s: Settings, _fmt: str | None) -> None:
    path, files = result
    typer.echo(f"{path}: {files:,} files")


stage_command(DOWNLOAD, show)
