"""Fusion of ranked runs: reciprocal rank fusion, or a weighted sum of normalised scores.

- `rrf`: score(p) = Σ_runs w_r / (rrf_k + rank_r(p)), rank 1-based; a run that did not
  return p adds nothing (Cormack et al., 2009; rrf_k = 60 by default).
- `weighted`: score(p) = Σ_runs w_r · norm_r(score_r(p)), each run's scores normalised per
  question (`minmax` to [0, 1], `zscore`, or `none`); a run that did not return p adds its
  lowest normalised score for that question (it ranked p below everything it returned).

Ties: fused score descending, then the best rank p had in any run, then the order of the
runs given, then passage id.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from ..errors import InputError
from ..records import Run

METHODS = ("rrf", "weighted")
NORMS = ("minmax", "zscore", "none")


def _normalise(scores: np.ndarray, norm: str) -> np.ndarray:
    if norm == "none" or len(scores) == 0:
        return scores
    if norm == "minmax":
        span = scores.max() - scores.min()
        return (scores - scores.min()) / span if span > 0 else np.ones_like(scores)
    std = scores.std()
    return (scores - scores.mean()) / std if std > 0 else np.zeros_like(scores)


def fuse(runs: Sequence[Run], method: str = "rrf", *, weights: Sequence[float] | None = None, rrf_k: float = 60.0,
         norm: str = "minmax", depth: int | None = None, k: int | None = None) -> Run:
    """Fuse `runs` (each cut to its top `depth` when given) into one run of up to `k` per question."""
    if method not in METHODS:
        raise InputError(f"unknown fusion method {method!r} (use {' or '.join(METHODS)})", field="method")
    if norm not in NORMS:
        raise InputError(f"unknown score normalisation {norm!r} (use {', '.join(NORMS)})", field="norm")
    if len(runs) < 2:
        raise InputError("fusion needs at least two runs", field="runs")
    weights = [1.0] * len(runs) if weights is None else [float(w) for w in weights]
    if len(weights) != len(runs):
        raise InputError(f"{len(weights)} weights for {len(runs)} runs", field="weights")
    out = Run(tag=f"fuse-{method}")
    for qid in dict.fromkeys(q for r in runs for q in r):
        fused: dict[str, float] = {}
        best: dict[str, tuple[int, int]] = {}
        parts = []
        for r_i, (run, w) in enumerate(zip(runs, weights)):
            ranked = run.get(qid, [])[:depth] if depth else run.get(qid, [])
            if method == "rrf":
                contrib = {pid: w / (rrf_k + rank) for rank, (pid, _) in enumerate(ranked, 1)}
                floor = 0.0
            else:
                normed = w * _normalise(np.array([s for _, s in ranked], dtype=np.float64), norm)
                contrib = dict(zip((pid for pid, _ in ranked), normed.tolist()))
                floor = float(normed.min()) if len(normed) else 0.0
            parts.append((contrib, floor))
            for rank, (pid, _) in enumerate(ranked, 1):
                best[pid] = min(best.get(pid, (rank, r_i)), (rank, r_i))
        for pid in best:
            fused[pid] = sum(contrib.get(pid, floor) for contrib, floor in parts)
        order = sorted(fused, key=lambda p: (-fused[p], best[p], p))
        out[qid] = [(p, fused[p]) for p in (order[:k] if k else order)]
    return out
