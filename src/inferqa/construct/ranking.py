"""Hint ranking: by convergence, descending, ties by source order."""

from __future__ import annotations

from typing import Sequence

from ..records import Hint


def rank_hints(hints: Sequence[Hint]) -> list[int]:
    """Indices of `hints`, best first. Hints without convergence rank after scored ones, in
    source order; with no convergence at all this is simply source order."""
    return sorted(range(len(hints)), key=lambda i: (hints[i].convergence is None,
                                                    -(hints[i].convergence or 0.0), i))


def select_top(hints: Sequence[Hint], k: int) -> list[int] | None:
    """The top-k indices in rank order, or None when fewer than k hints are usable."""
    ranked = rank_hints(hints)
    return ranked[:k] if len(ranked) >= k else None
