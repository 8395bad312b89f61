"""Fusion of ranked runs: each method scores a passage from every run's ranking of a question.

Rank-based (scores ignored): `rrf`, Σ_r w_r / (rrf_k + rank_r(p)) (Cormack et al., 2009), and
`isr`, (Σ_r 1 / rank_r(p)²) · n(p), n(p) the runs that returned p (Mourão et al., 2015).
Score-based, each run's scores normalised per question first (`norm`: minmax, max, sum, zscore,
rank, none; ranx's, except where every score is equal): `combsum`, `combmnz`, `combmax` (Fox and
Shaw, 1993) and `weighted`. docs/retrieve.md gives every formula and norm.

The methods are `fusion` plugins (`inferqa plugins fusion`); those without weights refuse
them. Ties: fused score descending, then the best rank p had in any run, then the order of
the runs given, then passage id.
"""

from __future__ import annotations

import math
import os
from typing import Any, Sequence

import numpy as np

from .. import registry
from ..errors import InputError
from ..formats import Run, as_benchmark, as_run, as_run_list, check_same_questions
from ..parameters import FUSION_METHOD
from ..registry import Option, plugin

NORMS = ("minmax", "max", "sum", "zscore", "rank", "none")
NORM = Option("norm", str, "minmax", "per-question score normalisation of each run", choices=NORMS)
RRF_K = Option("rrf_k", float, 60.0, "constant k in w / (k + rank)", min=0)

# One question: each run's ranking (best first) and the runs' weights → fused score per passage.
Ranking = Sequence[tuple[str, float]]


@plugin("fusion", "rrf", RRF_K, weights=True, help="reciprocal rank fusion: each run adds w / (k + rank)")
def rrf(rankings: Sequence[Ranking], weights: Sequence[float], *, rrf_k: float) -> dict[str, float]:
    out: dict[str, float] = {}
    for ranked, w in zip(rankings, weights):
        for rank, (pid, _) in enumerate(ranked, 1):
            out[pid] = out.get(pid, 0.0) + w / (rrf_k + rank)
    return out


@plugin("fusion", "isr", help="inverse square rank: the sum of 1 / rank² times the number of runs that returned it")
def isr(rankings: Sequence[Ranking], weights: Sequence[float]) -> dict[str, float]:
    total: dict[str, float] = {}
    count: dict[str, int] = {}
    for ranked in rankings:
        for rank, (pid, _) in enumerate(ranked, 1):
            total[pid] = total.get(pid, 0.0) + 1.0 / rank ** 2
            count[pid] = count.get(pid, 0) + 1
    return {pid: s * count[pid] for pid, s in total.items()}


@plugin("fusion", "combsum", NORM, weights=True, help="CombSUM: weighted sum of normalised scores, 0 where missing")
def combsum(rankings: Sequence[Ranking], weights: Sequence[float], *, norm: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for ranked, w in zip(rankings, weights):
        for pid, s in _normalised(ranked, norm).items():
            out[pid] = out.get(pid, 0.0) + w * s
    return out


@plugin("fusion", "combmnz", NORM, weights=True,
        help="CombMNZ: sum of normalised scores times the (summed weights of the) runs that returned it")
def combmnz(rankings: Sequence[Ranking], weights: Sequence[float], *, norm: str) -> dict[str, float]:
    total: dict[str, float] = {}
    weight: dict[str, float] = {}
    for ranked, w in zip(rankings, weights):
        for pid, s in _normalised(ranked, norm).items():
            total[pid] = total.get(pid, 0.0) + s
            weight[pid] = weight.get(pid, 0.0) + w
    return {pid: s * weight[pid] for pid, s in total.items()}


@plugin("fusion", "combmax", NORM, help="CombMAX: the highest normalised score any run gave it")
def combmax(rankings: Sequence[Ranking], weights: Sequence[float], *, norm: str) -> dict[str, float]:
    out: dict[str, float] = {}
    for ranked in rankings:
        for pid, s in _normalised(ranked, norm).items():
            out[pid] = max(out.get(pid, -math.inf), s)
    return out


@plugin("fusion", "weighted", NORM, weights=True,
        help="weighted sum of normalised scores, a run's lowest where it did not return the passage")
def weighted(rankings: Sequence[Ranking], weights: Sequence[float], *, norm: str) -> dict[str, float]:
    parts = [(w, _normalised(ranked, norm)) for ranked, w in zip(rankings, weights)]
    floors = [w * min(scores.values()) if scores else 0.0 for w, scores in parts]
    pids = dict.fromkeys(p for _, scores in parts for p in scores)
    return {pid: sum(w * scores[pid] if pid in scores else floor for (w, scores), floor in zip(parts, floors))
            for pid in pids}


def methods() -> list[str]:
    return registry.available("fusion")


def _normalised(ranked: Ranking, norm: str) -> dict[str, float]:
    """One run's scores of one question, normalised (`NORMS`), keyed by passage."""
    s = np.array([score for _, score in ranked], dtype=np.float64)
    n = len(s)
    if n == 0 or norm == "none":
        pass
    elif norm == "rank":
        s = 1.0 - np.arange(n) / n
    elif norm == "max":
        s = s / s.max() if s.max() > 0 else s
    elif norm == "zscore":
        std = s.std()
        s = (s - s.mean()) / std if std > 0 else np.zeros(n)
    else:  # minmax, sum: shifted to start at 0
        shifted = s - s.min()
        scale = shifted.max() if norm == "minmax" else shifted.sum()
        s = shifted / scale if scale > 0 else np.full(n, 1.0 if norm == "minmax" else 1.0 / n)
    return dict(zip((pid for pid, _ in ranked), s.tolist()))


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


def fusion_method(method: str, weights: Sequence[Any] | None = None, **options: Any):
    """The fusion METHOD with its checked options (`inferqa plugins fusion`; None means
    default); weights given to a method that takes none are an error."""
    if method not in methods():
        raise InputError(f"unknown fusion method {method!r} (use {', '.join(methods())})", field="method")
    plugin_ = registry.get("fusion", method)
    if weights is not None and not plugin_.meta.get("weights"):
        takes = ", ".join(p.name for p in registry.plugins("fusion") if p.meta.get("weights"))
        raise InputError(f"fusion method {method!r} takes no weights (these do: {takes})", field="weights")
    return plugin_.create(**{k: v for k, v in options.items() if v is not None})


def fuse(runs: Sequence[Any], method: str = FUSION_METHOD.default, *, weights: Sequence[float] | None = None,
         depth: int | None = None, input_depth: int | None = None, bench: Any = None, split: str | None = None,
         allow_partial: bool = False, **options: Any) -> Run:
    """Fuse `runs` (each cut to its top `input_depth` when given) into one run of up to `depth`
    passages per question (all when None: `depth` means the output run's depth, as everywhere).
    `options` are the method's (rrf: rrf_k; combsum, combmnz, combmax, weighted: norm). The
    runs are read and checked as `inferqa fuse` reads them: anything `as_run` takes, with
    `bench` their ids checked against it and `split` cutting them to its questions; runs
    over different questions are refused unless `allow_partial`. The fused run keeps the
    first run's metadata (`Run.derive`), with the questions of all."""
    score = fusion_method(method, weights, **options)
    given = as_run_list(runs)
    if len(given) < 2:
        raise InputError("fusion needs at least two runs", field="runs")
    weights = check_weights(weights, len(given))
    if split is not None and bench is None:
        raise InputError("split needs a benchmark (--bench DIR): its splits name the questions", field="split")
    b = None if bench is None else as_benchmark(bench)
    loaded = [as_run(r, b, split, allow_partial=allow_partial) for r in given]
    if not allow_partial:
        check_same_questions(loaded, [r if isinstance(r, (str, os.PathLike)) else f"run {i + 1}"
                                      for i, r in enumerate(given)])
    fused = {qid: _fused_question([run.get(qid, [])[:input_depth] if input_depth else run.get(qid, [])
                                   for run in loaded], score, weights, depth)
             for qid in dict.fromkeys(q for r in loaded for q in r)}
    out = loaded[0].derive(fused, tag=f"fuse-{method}")
    out.qids = dict.fromkeys(q for r in loaded for q in r.qids)
    return out


def _fused_question(rankings: list[Ranking], score: Any, weights: list[float],
                    k: int | None) -> list[tuple[str, float]]:
    """One question's fused ranking, ties broken as the module's docstring says."""
    best: dict[str, tuple[int, int]] = {}
    for r_i, ranked in enumerate(rankings):
        for rank, (pid, _) in enumerate(ranked, 1):
            best[pid] = min(best.get(pid, (rank, r_i)), (rank, r_i))
    fused = score(rankings, weights)
    order = sorted(fused, key=lambda p: (-fused[p], best[p], p))
    return [(p, fused[p]) for p in (order[:k] if k else order)]
