"""`inferqa download` (the function of `inferqa.data.stage`): its printing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..data.stage import download
from .stage_command import stage_command


def show(result: tuple[Path, int], _s: Any, _fmt: str | None) -> None:
    path, files = result
    typer.echo(f"{path}: {files:,} files")


stage_command(download, show)
