"""Choosing union_freq's weights on one split (`inferqa tune-union`).

union_freq orders a context's hints by alpha/rank of the passage + beta/position of the hint
in it; only the ratio of the two weights orders them, so the grid is over alpha with
beta = 1 - alpha. Each alpha is scored by the reader's exact match, averaged over the ks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from ..reading.run import read_with_llm, summarize
from ..parameters import TUNE_ALPHAS, TUNE_KS

if TYPE_CHECKING:
    from ..formats import Run
    from ..formats.benchmark import Benchmark
    from ..llm.base import LLM


def tune_union(bench: "Benchmark", run: "Run", llm: "LLM", ks: Sequence[int] = TUNE_KS.default, *,
               qids: Iterable[str] | None = None, alphas: Sequence[float] | None = None,
               progress: bool = True) -> list[dict[str, Any]]:
    """Grid search of union_freq's alpha (beta = 1 - alpha) on `qids`: one row per alpha with its
    mean EM over the ks, best first."""
    alphas = list(alphas if alphas is not None else TUNE_ALPHAS.default)
    qids = list(qids) if qids is not None else list(run)
    out = []
    for a in alphas:
        rows = read_with_llm(bench, run, llm, ["union_freq"], ks, qids=qids, alpha=a, beta=round(1 - a, 6),
                             progress=progress)
        per_k = {s["k"]: s["em"] for s in summarize(rows, ("em",))}
        out.append({"alpha": a, "beta": round(1 - a, 6), "em": sum(per_k.values()) / len(per_k),
                    **{f"em@{k}": v for k, v in per_k.items()}})
    return sorted(out, key=lambda r: -r["em"])


@dataclass
class UnionTuning:
    """The union_freq grid of `inferqa tune-union`, best first, over `questions` questions."""

    grid: list[dict[str, Any]]
    questions: int
