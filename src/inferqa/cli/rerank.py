"""`inferqa rerank`: a TREC run in, a reranked TREC run out."""

from __future__ import annotations

from typing import Any

import typer

from ..stages import Settings
from ..parameters import RERANK_WINDOW
from ..stages.rerank import RERANK
from .stage_command import stage_command


def show(done: Any, settings: Settings, _fmt: Any) -> None:
    from rich.console import Console

    window = "top passages" if settings.window == RERANK_WINDOW.default else f"one per {settings.window}"
    Console().print(f"[bold]{settings.out}[/]: {len(done.run):,} questions, {done.scored:,} reranker calls "
                    f"({window}, at most {settings.depth} per question) by {settings.reranker} in {done.seconds:.1f} s")
    typer.echo(done.counts.line(done.seconds))


stage_command(RERANK, show)
