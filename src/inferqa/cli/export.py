"""`inferqa export` (declared in `inferqa.stages.export`): its printing."""

from __future__ import annotations

import typer

from .. import registry
from ..stages import Settings
from ..stages.export import EXPORT
from .stage_command import stage_command


def show(written: int, s: Settings, _fmt: str | None) -> None:
    counts = registry.get("export", s.kind).meta.get("counts")
    what = "passages" if counts == "passages" else f"questions of split {s.split or 'all'}"
    typer.echo(f"{s.out}: {written:,} {what}")


stage_command(EXPORT, show)
