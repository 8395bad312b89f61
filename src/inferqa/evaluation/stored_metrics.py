"""Answer-level numbers of the QUIT paper from stored per-passage answers (no model).

The stored answers are a benchmark's labels.jsonl: for a QUIT release build every reader's
answer (`reader_answers`) and every labeller's (`answers`) of every passage; for our own
labelling, the labellers' answers. A stored answer is compared as it is stored: exact,
case-sensitive membership in the gold answers (the authors' rule). The numbers:

- "optimal" EM: a question counts when any of its passages with a relevant label holds a
  stored answer that is a gold answer; divided by all questions asked about;
- accuracy: share of the passages with a label in a set whose stored answer is gold (the
  authors' `rag.py` rows are the sets {1, 2}, {1} and {2}: `PAPER_LABEL_ROWS`);
- hint contribution: how the correctly answered passages spread over their number of hints,
  over every relevant passage (the oracle set) or over each question's top passage of a run.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Callable, Collection, Iterable, Mapping

from ..errors import InputError
from ..formats.labels import stored_answers
from ..defaults import MIN_LABEL
from ..records import parse_passage_id

if TYPE_CHECKING:
    from ..formats.benchmark import Benchmark
    from ..formats import Run

Store = dict  # pid -> model -> stored answer (readers' and labellers'), see `load_store`

# The rows of the authors' rag.py table: its first cell, and the labels it pools.
PAPER_LABEL_ROWS: dict[str, tuple[int, ...]] = {"1 and 2": (1, 2), "1": (1,), "2": (2,)}
HINT_COUNTS = range(6)  # the authors' table has a column for 0 to 5 hints


def load_store(bench: "Benchmark", qids: Iterable[str]) -> Store:
    """Every stored answer of the passages of `qids`, readers' before labellers'."""
    return {pid: {**(row.reader_answers or {}), **row.answers} for pid, row in stored_answers(bench, qids).items()}


def stored_models(store: Store) -> list[str]:
    """Every model with a stored answer, in first-seen order."""
    return list(dict.fromkeys(model for answers in store.values() for model in answers))


def check_store(store: Store, model: str, bench: "Benchmark") -> None:
    if not any(store.values()):  # no row, or rows that hold no answer
        raise InputError("no stored answers for these questions: labels.jsonl is missing or holds none (build "
                         "a QUIT release, or label with `inferqa label`)", file=bench.path)
    if model not in stored_models(store):
        raise InputError(f"no stored answers of model {model!r} (have: {', '.join(stored_models(store))})",
                         file=bench.path / "labels.jsonl", field="model")


def _relevant(min_label: int, labels: Collection[int] | None) -> Callable[[int], bool]:
    return (lambda lab: lab in labels) if labels is not None else (lambda lab: lab >= min_label)


@dataclass(frozen=True)
class Judged:
    """What every number here is computed from: the questions asked about (`qids`, in order),
    their gold answers and labelled passages, and the stored answers. Built from a benchmark
    (`of_bench`) or from a QUIT release's retriever.jsonl (`inferqa.reproduce.compute`)."""

    qids: list[str]
    golds: Mapping[str, Collection[str]]  # qid -> gold answers
    qrels: Mapping[str, Mapping[str, int]]  # qid -> pid -> label
    store: Store

    @classmethod
    def of_bench(cls, bench: "Benchmark", qids: Iterable[str], store: Store | None = None) -> "Judged":
        qids = list(qids)
        store = load_store(bench, qids) if store is None else store
        return cls(qids, {q: bench.questions[q].answers for q in qids}, {q: bench.qrels.get(q, {}) for q in qids},
                   store)

    def is_right(self, qid: str, pid: str, model: str) -> bool:
        return is_right(self.store, pid, model, self.golds[qid])

    def optimal_em(self, model: str, relevant: Callable[[int], bool]) -> float:
        """Share of `qids` with a `relevant` passage (by its label) whose stored answer is gold."""
        hit = sum(any(self.is_right(q, pid, model) for pid, lab in self.qrels.get(q, {}).items() if relevant(lab))
                  for q in self.qids)
        return hit / len(self.qids) if self.qids else 0.0

    def tally(self, model: str) -> tuple[dict[int, int], dict[int, int]]:
        """(right, total) per label over the passages with a stored answer of `model`."""
        right: dict[int, int] = {}
        total: dict[int, int] = {}
        for q in self.qids:
            for pid, lab in self.qrels.get(q, {}).items():
                if self.store.get(pid, {}).get(model) is None:
                    continue
                total[lab] = total.get(lab, 0) + 1
                right[lab] = right.get(lab, 0) + self.is_right(q, pid, model)
        return right, total

    def accuracy(self, model: str, labels: Collection[int]) -> tuple[float, int]:
        """(share of the passages whose label is in `labels`, pooled, whose stored answer is
        gold (0 when there is none), their number)."""
        right, total = self.tally(model)
        n = sum(total.get(lab, 0) for lab in labels)
        return (sum(right.get(lab, 0) for lab in labels) / n if n else 0.0), n

    def right_passages(self, model: str) -> list[str]:
        """Every relevant passage (label > 0) whose stored answer is gold, in question order."""
        return [pid for q in self.qids for pid, lab in self.qrels.get(q, {}).items()
                if lab > 0 and self.is_right(q, pid, model)]


def _checked(bench: "Benchmark", qids: Iterable[str], model: str, store: Store | None) -> Judged:
    judged = Judged.of_bench(bench, qids, store)
    check_store(judged.store, model, bench)
    return judged


def optimal_em(bench: "Benchmark", qids: Iterable[str], model: str, min_label: int = MIN_LABEL.default,
               store: Store | None = None, labels: Collection[int] | None = None) -> float:
    """The paper's "optimal" EM: share of questions with a relevant passage answered correctly.
    Relevant: label >= `min_label`, or, given `labels`, a label in that set."""
    return _checked(bench, qids, model, store).optimal_em(model, _relevant(min_label, labels))


def accuracy_per_label(bench: "Benchmark", qids: Iterable[str], model: str,
                       store: Store | None = None) -> dict[int, float]:
    """label -> share of that label's passages (with a stored answer) whose answer is gold."""
    right, total = _checked(bench, qids, model, store).tally(model)
    return {lab: right[lab] / total[lab] for lab in sorted(total)}


def accuracy(bench: "Benchmark", qids: Iterable[str], model: str, labels: Collection[int],
             store: Store | None = None) -> float:
    """Share of the passages whose label is in `labels`, pooled, whose stored answer is gold
    (0 when there is none)."""
    return _checked(bench, qids, model, store).accuracy(model, labels)[0]


def hint_shares(pids: Iterable[str]) -> dict[int, float]:
    """Number of hints -> share of `pids` (correctly answered passages) with that many; keys
    0 to 5 at least, all 0 when `pids` is empty."""
    counts = dict.fromkeys(HINT_COUNTS, 0)
    for pid in pids:
        n = len(parse_passage_id(pid)[1])
        counts[n] = counts.get(n, 0) + 1
    total = sum(counts.values())
    return {n: (c / total if total else 0.0) for n, c in sorted(counts.items())}


def is_right(store: Store, pid: str | None, model: str, golds: Collection[str]) -> bool:
    """Whether `model`'s stored answer of passage `pid` (None: no passage) is, as stored, a gold answer."""
    ans = store.get(pid, {}).get(model)
    return ans is not None and ans in golds


def hint_contribution_oracle(bench: "Benchmark", qids: Iterable[str], model: str,
                             store: Store | None = None) -> dict[int, float]:
    """`hint_shares` of every relevant passage (label > 0) of `qids` whose stored answer is gold."""
    return hint_shares(_checked(bench, qids, model, store).right_passages(model))


def hint_contribution_run(run: "Run", bench: "Benchmark", model: str, store: Store | None = None) -> dict[int, float]:
    """`hint_shares` of each question's top passage in `run` where reading it alone gives a gold
    answer: its stored answer (a passage of another question has none for this question)."""
    store = load_store(bench, run) if store is None else store
    check_store(store, model, bench)
    tops = ((qid, ranked[0][0]) for qid, ranked in run.items() if ranked)
    return hint_shares(pid for qid, pid in tops
                       if parse_passage_id(pid)[0] == qid and is_right(store, pid, model, bench.questions[qid].answers))
