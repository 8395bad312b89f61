"""Fusion of ranked runs: reciprocal rank fusion, or a weighted sum of normalised scores.

- `rrf`: score(p) = Σ_runs w_r / (rrf_k + rank_r(p)), rank 1-based; a run that did not
  return p adds nothing (Cormack et al., 2009; rrf_k = 60 by default).
- `weighted`: score(p) = Σ_runs w_r · norm_r(score_r(p)), each run's scores normalised per
  question (`minmax` to [0, 1], `zscore`, or `none`); a run that did not return p adds its
  lowest normalised score for that question (it ranked p below everything it returned).

The methods are `fusion` plugins (`inferqa plugins fusion`). Ties: fused score descending,
then the best rank p had in any run, then the order of the runs given, then passage id.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from .. import registry
from ..errors import InputError
from ..formats import Run, as_run
from ..registry import Option, plugin

NORMS = ("minmax", "zscore", "none")

# A method scores one run's ranking of one question: (contribution per passage, what a
# passage the run did not return adds).
Contribution = tuple[dict[str, float], float]


@plugin("fusion", "rrf", Option("rrf_k", float, 60.0, "constant k in w / (k + rank)", min=0),
        help="reciprocal rank fusion: each run adds w / (k + rank)")
def rrf(ranked: list[tuple[str, float]], weight: float, *, rrf_k: float) -> Contribution:
    return {pid: weight / (rrf_k + rank) for rank, (pid, _) in enumerate(ranked, 1)}, 0.0


@plugin("fusion", "weighted", Option("norm", str, "minmax", "per-question score normalisation", choices=NORMS),
        help="weighted sum of per-question normalised scores")
def weighted(ranked: list[tuple[str, float]], weight: float, *, norm: str) -> Contribution:
    normed = weight * _normalise(np.array([s for _, s in ranked], dtype=np.float64), norm)
    return dict(zip((pid for pid, _ in ranked), normed.tolist())), float(normed.min()) if len(normed) else 0.0


def methods() -> list[str]:
    return registry.available("fusion")


def _normalise(scores: np.ndarray, norm: str) -> np.ndarray:
    if norm == "none" or len(scores) == 0:
        return scores
    if norm == "minmax":
        span = scores.max() - scores.min()
        return (scores - scores.min()) / span if span > 0 else np.ones_like(scores)
    std = scores.std()
    return (scores - scores.mean()) / std if std > 0 else np.zeros_like(scores)


def check_weights(weights: Sequence[Any] | None, n_runs: int) -> list[float]:
    """One finite weight ≥ 0 per run, not all 0 (default 1 each); text is converted."""
    if weights is None:
        return [1.0] * n_runs
    out = []
    for w in weights:
        try:
            x = float(w)
        except (TypeError, ValueError):
            raise InputError(f"weights are numbers, not {w!r}", field="weights") from None
        if not math.isfinite(x) or x < 0:
            raise InputError(f"a weight is a finite number ≥ 0, not {w!r}", field="weights")
        out.append(x)
    if len(out) != n_runs:
        raise InputError(f"{len(out)} weights for {n_runs} runs", field="weights")
    if not any(out):
        raise InputError("the weights are all 0: the fused run would rank nothing", field="weights")
    return out


def fusion_method(method: str, **options: Any):
    """The fusion METHOD with its checked options (`inferqa plugins fusion`); None means default."""
    if method not in methods():
        raise InputError(f"unknown fusion method {method!r} (use {' or '.join(methods())})", field="method")
    return registry.create("fusion", method, **{k: v for k, v in options.items() if v is not None})


def fuse(runs: Sequence[Any], method: str = "rrf", *, weights: Sequence[float] | None = None,
         depth: int | None = None, k: int | None = None, **options: Any) -> Run:
    """Fuse `runs` (each cut to its top `depth` when given) into one run of up to `k` per question.
    `options` are the method's (rrf: rrf_k; weighted: norm)."""
    score = fusion_method(method, **options)
    if len(runs) < 2:
        raise InputError("fusion needs at least two runs", field="runs")
    weights = check_weights(weights, len(runs))
    runs = [as_run(r) for r in runs]
    out = Run(tag=f"fuse-{method}")
    for qid in dict.fromkeys(q for r in runs for q in r):
        fused: dict[str, float] = {}
        best: dict[str, tuple[int, int]] = {}
        parts = []
        for r_i, (run, w) in enumerate(zip(runs, weights)):
            ranked = run.get(qid, [])[:depth] if depth else run.get(qid, [])
            parts.append(score(ranked, w))
            for rank, (pid, _) in enumerate(ranked, 1):
                best[pid] = min(best.get(pid, (rank, r_i)), (rank, r_i))
        for pid in best:
            fused[pid] = sum(contrib.get(pid, floor) for contrib, floor in parts)
        order = sorted(fused, key=lambda p: (-fused[p], best[p], p))
        out[qid] = [(p, fused[p]) for p in (order[:k] if k else order)]
    return out
