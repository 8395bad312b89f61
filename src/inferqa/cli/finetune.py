"""`inferqa finetune`: a retriever, clue encoder or reranker trained on a benchmark split."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from ..stages import Settings
from ..stages.finetune import FINETUNE
from .stage_command import stage_command


def show(path: Path, _settings: Settings, _fmt: Any) -> None:
    typer.echo(f"model: {path}")


stage_command(FINETUNE, show)
