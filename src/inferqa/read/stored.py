"""Reading without a model: the union of a question's top-k passages is itself one of the
question's passages, so its stored answer stands in for a reader call (how the QUIT authors
compute their oracle-reranker reader)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..evaluate.stored import Store, check_store, load_store
from ..records import mask_readings, parse_passage_id, passage_id, split_passage_id
from .context import strategy as context_strategy

if TYPE_CHECKING:
    from ..benchmark import Benchmark
    from ..records import Run

UNIONS = {"un": "union_norm", "uf": "union_freq"}  # the authors' key of each union (`{qid}_un_3`)


def union_passage(bench: "Benchmark", pids: Sequence[str], strategy: str = "union_norm") -> str | None:
    """The passage whose text is the union of `pids`' hints as `strategy` orders it
    (union_norm: first appearance first); None when they belong to different questions (no
    single passage holds them). Hints are merged by their text, as the authors merge them."""
    if not pids:
        return None
    qid, mask, _ = split_passage_id(pids[0])
    first: tuple[int, ...] | None = None
    lists = []
    for pid in pids:
        pq, hints = parse_passage_id(pid)
        if pq != qid:
            return None
        first = hints if first is None else first
        lists.append(hints)
    texts = [h.text for h in bench.questions[qid].hints]
    index = {}
    for i, t in enumerate(texts):
        index.setdefault(t, i)
    merged = context_strategy(strategy)([[texts[i] for i in hints] for hints in lists])
    bits = bench.mask_bits or mask_readings(mask, first)[0]
    return passage_id(qid, tuple(index[t] for t in merged), len(mask), bits)


def oracle_reader_em(run: "Run", bench: "Benchmark", model: str, ks: Sequence[int] = (1, 3, 5),
                     store: Store | None = None, strategy: str = "union_norm") -> dict[int, float]:
    """EM of `model` reading the `strategy` union of each question's top-k passages of `run`
    (in the run's order), looked up in the stored answers and compared as stored (a question
    whose top k mix questions, or whose union has no stored answer, counts 0); over the run's
    questions."""
    store = load_store(bench, run) if store is None else store
    check_store(store, model, bench)
    out = {}
    for k in ks:
        hit = 0
        for qid, ranked in run.items():
            pid = union_passage(bench, [p for p, _ in ranked[:k]], strategy)
            ans = store.get(pid, {}).get(model) if pid else None
            hit += ans is not None and ans in bench.questions[qid].answers
        out[k] = hit / len(run) if run else 0.0
    return out
