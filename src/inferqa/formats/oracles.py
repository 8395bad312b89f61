"""Oracle runs, the upper bounds QUIT reports (the oracle reranker: `inferqa.reranking.oracle`):
every relevant passage of the question in a seeded random order (oracle retriever) or sorted by
label (optimal). Scores are `n - rank` (strictly decreasing), so TREC files keep the order for any tool.
"""

from __future__ import annotations

import random
from typing import Iterable

from .benchmark import Benchmark
from ..errors import InputError
from ..defaults import MIN_LABEL, ORACLE_SEED
from .qrels import Qrels
from .runs import Run
from ..registry import plugin


def check_min_label(min_label: object, qrels: Qrels | None = None) -> int:
    """`min_label` as MIN_LABEL declares it and, given the qrels, at most their largest label
    (above it nothing would count as relevant and every metric would be 0)."""
    value = MIN_LABEL.check(min_label, "min-label")
    if qrels:
        top = max((lab for labels in qrels.values() for lab in labels.values()), default=0)
        if value > top:
            raise InputError(f"min-label {value} is above the largest label of the qrels ({top}): "
                             f"no passage has label >= {value}", field="min_label")
    return value


def _qrels_of(bench_or_qrels: Benchmark | Qrels) -> Qrels:
    return bench_or_qrels.qrels if isinstance(bench_or_qrels, Benchmark) else bench_or_qrels


def _scored(pids: list[str]) -> list[tuple[str, float]]:
    return [(pid, float(len(pids) - r)) for r, pid in enumerate(pids)]


def _relevant_in_order(qrels: Qrels, qid: str, min_label: int) -> list[str]:
    return [pid for pid, lab in qrels.get(qid, {}).items() if lab >= min_label]


def oracle_retriever(bench: Benchmark | Qrels, qids: Iterable[str], seed: int = ORACLE_SEED.default,
                     min_label: int = MIN_LABEL.default) -> Run:
    """Every relevant passage, shuffled with a per-question seed (independent of `qids` order)."""
    qrels = _qrels_of(bench)
    run = Run(tag="oracle-retriever")
    for qid in qids:
        pids = sorted(_relevant_in_order(qrels, qid, min_label))
        random.Random(f"{seed}:{qid}").shuffle(pids)
        run[qid] = _scored(pids)
    return run


def optimal(bench_or_qrels: Benchmark | Qrels, qids: Iterable[str], min_label: int = MIN_LABEL.default) -> Run:
    """Every relevant passage sorted by label, descending (stable in qrels order)."""
    qrels = _qrels_of(bench_or_qrels)
    run = Run(tag="optimal")
    for qid in qids:
        labels = qrels.get(qid, {})
        pids = sorted(_relevant_in_order(qrels, qid, min_label), key=lambda p: -labels[p])
        run[qid] = _scored(pids)
    return run


# The oracle kinds of `inferqa oracle --kind` (`inferqa plugins oracle`): (bench, qids, run) -> Run.
@plugin("oracle", "retriever", ORACLE_SEED, MIN_LABEL,
        help="every relevant passage of the split's questions, in a seeded random order")
def retriever_oracle(bench: Benchmark, qids: Iterable[str], run: Run | None, *, seed: int, min_label: int) -> Run:
    return oracle_retriever(bench, qids, seed, min_label)


@plugin("oracle", "optimal", MIN_LABEL, help="every relevant passage of the split's questions, sorted by label")
def optimal_oracle(bench: Benchmark, qids: Iterable[str], run: Run | None, *, min_label: int) -> Run:
    return optimal(bench, qids, min_label)
