"""The oracle reranker: a reranker whose scores are the passages' labels (the upper bound
of reranking). Ties keep the incoming order, like every reranker's."""

from __future__ import annotations

from typing import Sequence

from ..formats.benchmark import Benchmark
from ..errors import InputError
from ..formats import Qrels, Run
from ..registry import Option, plugin
from .base import Reranker


@plugin("reranker", "oracle", Option("qrels", Qrels, None, "labels to score by (default: the benchmark's own)"),
        help="scores = the passages' labels: the upper bound of reranking")
class OracleReranker(Reranker):
    def __init__(self, *, qrels: Qrels | None):
        self.qrels = qrels  # None: the benchmark's own

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        raise InputError("the oracle reranker scores benchmark passages by label, not texts", field="reranker")

    def score_passages(self, bench: Benchmark | None, qid: str, pids: Sequence[str]) -> list[float]:
        qrels = self.qrels if self.qrels is not None else bench.qrels
        if not qrels:
            raise InputError("qrels are empty", field="qrels")
        labels = qrels.get(qid, {})
        return [float(labels.get(pid, 0)) for pid in pids]


def oracle_rerank(run: Run, bench: Benchmark) -> Run:
    """Every ranking of `run`, whole, sorted by label (ties keep the run's order)."""
    from .run import rerank_run

    return rerank_run(run, bench, "oracle", depth=max((len(r) for r in run.values()), default=0) or 1)


@plugin("oracle", "reranker", help="the passages of a run (--run) sorted by label", needs_run=True)
def reranker_oracle(bench: Benchmark, qids: object, run: Run) -> Run:
    return oracle_rerank(run, bench)
