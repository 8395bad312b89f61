"""`inferqa rerank`: a TREC run in, a reranked TREC run out."""

from __future__ import annotations

from typing import Any

import typer

from ..stages import Settings
from ..stages.rerank import RERANK
from .stage_command import stage_command


def show(done: Any, settings: Settings, _fmt: Any) -> None:
    from rich.console import Console

    Console().print(f"[bold]{settings.out}[/]: {len(done.run):,} questions, {done.scored:,} passages reranked by "
                    f"{settings.reranker} in {done.seconds:.1f} s")
    typer.echo(calls_line(done.counts, done.seconds))


def calls_line(counts: Any, seconds: float) -> str:
    """Where the scores came from: model calls computed (their rate: computed calls only) and
    answered by the LLM call cache, questions taken whole from the checkpoint."""
    computed, cached = counts.model_calls()
    source = f", {cached:,} from the LLM cache" if counts.computed is not None else " (no call cache)"
    rate = f", {computed / max(seconds, 1e-9):.1f} computed calls/s" if computed else ", none computed: no rate"
    resumed = f"; {counts.resumed:,} questions from the checkpoint" if counts.resumed else ""
    return f"model calls: {computed:,} computed{source}{rate}{resumed}"


stage_command(RERANK, show)
