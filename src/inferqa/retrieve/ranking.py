"""Exact top-k with deterministic ties, expanding ranked groups back to passages, and the
atomic array save every index uses."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io import atomic_open


def save_array(out: Path, name: str, arr: np.ndarray) -> None:
    with atomic_open(out / f"{name}.npy", "wb") as fh:
        np.save(fh, arr)


def top_k_positions(scores: np.ndarray, k: int, tie_key: np.ndarray | None = None) -> np.ndarray:
    """Indices of the k best scores, by score descending, then `tie_key` (None: none), then index."""
    n = len(scores)
    k = min(k, n)
    if k < n:
        # Partitioning the negated scores at k - 1 stays fast when most scores tie (at 0).
        thr = -np.partition(-scores, k - 1)[k - 1]
        above = np.flatnonzero(scores > thr)
        tied = np.flatnonzero(scores == thr)
        if tie_key is not None and len(tied) > k - len(above):
            tied = tied[np.lexsort((tied, tie_key[tied]))]
        cand = np.concatenate([above, tied[: k - len(above)]])
    else:
        cand = np.arange(n)
    keys = (cand, -scores[cand]) if tie_key is None else (cand, tie_key[cand], -scores[cand])
    return cand[np.lexsort(keys)]


def top_groups(scores: np.ndarray, ptr: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """The first k members of the best groups: group g holds members ptr[g]:ptr[g + 1] (at
    least one), groups by `top_k_positions`, members in order. Returns (member rows, scores)."""
    top = top_k_positions(scores, k)  # each group holds >= 1 member, so k groups suffice
    sizes = ptr[top + 1] - ptr[top]
    take = int(np.searchsorted(np.cumsum(sizes), k)) + 1
    top, sizes = top[:take], sizes[:take]
    starts = np.repeat(ptr[top] - np.cumsum(sizes) + sizes, sizes)
    return (starts + np.arange(sizes.sum()))[:k], np.repeat(scores[top], sizes)[:k]
