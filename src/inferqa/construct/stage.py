"""`inferqa stats`: what is in a benchmark directory."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from ..stage import Opt, stage


@stage("stats")
def stats(bench: Annotated[Path, Opt("a benchmark directory written by `inferqa build`", metavar="BENCH")]) -> dict:
    """Print counts of a benchmark directory: questions, passages and labels per split.

    JSON: the counts as `inferqa.construct.stats.benchmark_stats` returns them."""
    from .stats import benchmark_stats

    return benchmark_stats(bench)
