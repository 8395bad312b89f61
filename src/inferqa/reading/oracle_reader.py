"""Reading without a model: the union of a question's top-k passages is itself one of the
question's passages, so its stored answer stands in for a reader call (how the QUIT authors
compute their oracle-reranker reader)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

from ..defaults import MIN_LABEL
from ..evaluation.stored_metrics import (PAPER_LABEL_ROWS, Store, accuracy, accuracy_per_label, check_store,
                               hint_contribution_oracle, hint_contribution_run, is_right, load_store, optimal_em)
from ..formats.answers import STRATEGY_CODES
from ..records import mask_readings, parse_passage_id, passage_id, split_passage_id
from ..parameters import READ_KS
from .context import strategy as context_strategy

if TYPE_CHECKING:
    from ..formats.benchmark import Benchmark
    from ..formats import Run


def union_passage(bench: "Benchmark", pids: Sequence[str], strategy: str = "union_norm") -> str | None:
    """The passage whose text is the union of `pids`' hints as `strategy` orders it
    (union_norm: first appearance first); None when they belong to different questions (no
    single passage holds them). Hints are merged by their text, as the authors merge them."""
    if not pids:
        return None
    qid, mask, _ = split_passage_id(pids[0])
    lists = []
    for pid in pids:
        pq, hints = parse_passage_id(pid)
        if pq != qid:
            return None
        lists.append(hints)
    texts = [h.text for h in bench.questions[qid].hints]
    merged = context_strategy(strategy)([[texts[i] for i in hints] for hints in lists])
    bits = bench.mask_bits or mask_readings(mask, lists[0])[0]
    return passage_id(qid, tuple(texts.index(t) for t in merged), len(mask), bits)  # a repeated text: its first hint


def oracle_reader_em(run: "Run", bench: "Benchmark", model: str, ks: Sequence[int] = READ_KS.default,
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
            hit += is_right(store, pid, model, bench.questions[qid].answers)
        out[k] = hit / len(run) if run else 0.0
    return out


def answer_table(bench: "Benchmark", qids: Sequence[str], model: str, run: "Run | None" = None,
                 ks: Sequence[int] = READ_KS.default, store: Store | None = None,
                 min_label: int = MIN_LABEL.default) -> dict[str, Any]:
    """One reader's answer-level numbers under the inferqa protocol, from stored answers,
    rounded to 4 decimals: `optimal_em` (labels >= `min_label`), `accuracy_per_label` and,
    with `run` (best passages first, e.g. oracle-reranked), `oracle_reranker_em` per k."""
    store = load_store(bench, qids) if store is None else store
    r4 = lambda d: {str(k): round(v, 4) for k, v in d.items()}  # noqa: E731
    out: dict[str, Any] = {"optimal_em": round(optimal_em(bench, qids, model, min_label, store), 4),
                           "accuracy_per_label": r4(accuracy_per_label(bench, qids, model, store))}
    if run is not None:
        out["oracle_reranker_em"] = r4(oracle_reader_em(run, bench, model, ks, store))
    return out


def paper_answer_table(bench: "Benchmark", qids: Sequence[str], model: str, run: "Run | None" = None,
                       ks: Sequence[int] = READ_KS.default, store: Store | None = None) -> dict[str, Any]:
    """One reader's answer-level rows as the QUIT authors' scripts print them, from stored
    answers, rounded to 4 decimals:

    - `accuracy` and `optimal_em` per row of their rag.py (`"1 and 2"`, `"1"`, `"2"`);
    - `hint_contribution["oracle"]`: `hint_shares` over every relevant passage of `qids`;
    - with `run` (read in its own order, e.g. a reranker's `reranked_ctxs`): the oracle-
      reranker reader `oracle_reranker_em[f"{un|uf}_{k}"]` and `hint_contribution["run"]`.
    """
    store = load_store(bench, qids) if store is None else store
    r4 = lambda d: {str(k): round(v, 4) for k, v in d.items()}  # noqa: E731
    out: dict[str, Any] = {
        "accuracy": {row: round(accuracy(bench, qids, model, labels, store), 4)
                     for row, labels in PAPER_LABEL_ROWS.items()},
        "optimal_em": {row: round(optimal_em(bench, qids, model, store=store, labels=labels), 4)
                       for row, labels in PAPER_LABEL_ROWS.items()},
        "hint_contribution": {"oracle": r4(hint_contribution_oracle(bench, qids, model, store))},
    }
    if run is not None:
        ems = {code: oracle_reader_em(run, bench, model, ks, store, name) for code, name in STRATEGY_CODES.items()}
        out["oracle_reranker_em"] = {f"{code}_{k}": round(ems[code][k], 4) for k in ks for code in STRATEGY_CODES}
        out["hint_contribution"]["run"] = r4(hint_contribution_run(run, bench, model, store))
    return out
