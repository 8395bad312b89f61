"""Evidence monotonicity: does adding one hint to a passage ever lower the retriever's score?

For each question, each hint set S among its passages and each kept hint h not in S with
S∪{h} among its passages too is one *addition* S → S∪{h} (75 per question of 5 hints: 5·4 +
10·3 + 10·2 + 5·1). A hint set's score is the retriever's score of its passages (every
ordering of the set) averaged. An addition is a violation when score(S∪{h}) < score(S); a
tie is not one, but counts as an addition. EMVR = violations / additions, pooled over the
questions; its 95% CI is the 2.5th and 97.5th percentiles of the same ratio over bootstrap
resamples of the questions: `rng = numpy.random.default_rng(seed)`, then
`rng.integers(0, n_questions, size=(resamples, n_questions))` question rows, one resample a
row (a resample without additions in a slice is left out of that slice's interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Mapping, Sequence

import numpy as np

from ..errors import InputError
from ..formats.benchmark import Benchmark
from ..formats.corpus import corpus_ids, corpus_path
from ..records import parse_passage_id
from ..retrieve import Retriever, get_retriever, question_queries
from ..tabular import percent

if TYPE_CHECKING:
    from ..tabular import TextTable

CI_LEVEL = 0.95


@dataclass(frozen=True)
class Rate:
    """Violations among some additions, their rate (NaN without additions) and its bootstrap CI."""

    additions: int
    violations: int
    ties: int
    emvr: float
    ci: tuple[float, float]

    def to_dict(self) -> dict[str, Any]:
        return {"emvr": self.emvr, "ci": list(self.ci), "additions": self.additions,
                "violations": self.violations, "ties": self.ties}


def _overall(name: str) -> property:
    return property(lambda report: getattr(report.overall, name), doc=f"The overall rate's {name}.")


@dataclass(frozen=True)
class MonotonicityReport:
    """EMVR of one retriever on one split: overall, by the size of S (`by_stage[k]`: the
    additions k → k+1 hints) and by the added hint's rank among its question's kept hints
    (`by_rank[r]`, 1 = the first kept hint; `inferqa build` keeps them in convergence order)."""

    bench: str
    split: str
    retriever: str
    options: dict[str, Any]
    questions: int
    seed: int
    resamples: int
    overall: Rate
    by_stage: dict[int, Rate]
    by_rank: dict[int, Rate]

    emvr = _overall("emvr")
    ci = _overall("ci")
    additions = _overall("additions")
    violations = _overall("violations")
    ties = _overall("ties")

    def to_dict(self) -> dict[str, Any]:
        """The report as the command's JSON prints it (rates as fractions)."""
        return {"bench": self.bench, "split": self.split, "retriever": self.retriever, "options": self.options,
                "questions": self.questions, "seed": self.seed, "resamples": self.resamples,
                **self.overall.to_dict(),
                "by_stage": [{"from": k, "to": k + 1, **r.to_dict()} for k, r in self.by_stage.items()],
                "by_rank": [{"rank": k, **r.to_dict()} for k, r in self.by_rank.items()]}

    def text_table(self) -> "TextTable":
        """The report as `inferqa diagnose monotonicity` prints it (rates in percent)."""
        from ..tabular import TextTable

        rows = [_table_row("all", self.overall),
                *[_table_row(f"{k}→{k + 1} hints", r) for k, r in self.by_stage.items()],
                *[_table_row(f"hint of rank {k}", r) for k, r in self.by_rank.items()]]
        note = (f"EMVR: the share of additions S → S∪{{h}} whose score falls (ties are not violations); 95% CI: "
                f"bootstrap over questions ({self.resamples} resamples, seed {self.seed}). Rank: the added hint's "
                "place among its question's kept hints (convergence order).")
        title = (f"evidence monotonicity of {self.retriever} on {self.bench} {self.split} "
                 f"({self.questions} questions)")
        return TextTable(title, ("additions", "count", "violations", "ties", "EMVR %", "95% CI %"), tuple(rows), 1,
                         rules=frozenset({1, 1 + len(self.by_stage)}), note=note)


def _table_row(label: str, rate: Rate) -> tuple[str, ...]:
    low, high = rate.ci
    return (label, str(rate.additions), str(rate.violations), str(rate.ties), percent(rate.emvr, 1),
            f"{percent(low, 1)}–{percent(high, 1)}")


@dataclass(frozen=True)
class Additions:
    """Every addition S → S∪{h} counted: its question (a row of the question list), |S|, the
    added hint's rank (its index among the kept hints + 1) and outcome (-1: the score fell,
    a violation; 0: a tie; 1: it rose)."""

    question: np.ndarray
    size: np.ndarray
    rank: np.ndarray
    outcome: np.ndarray

    def __len__(self) -> int:
        return len(self.question)


def hint_additions(set_scores: Sequence[Mapping[int, float]]) -> Additions:
    """The additions of each question's hint sets, given as {bitmask of the set's hints: score}
    (bit i: kept hint i); an addition needs both sets among the question's."""
    rows: list[tuple[int, int, int, int]] = []
    for q, scores in enumerate(set_scores):
        hints = [h for h in range(max(scores, default=0).bit_length()) if any(m >> h & 1 for m in scores)]
        for mask, before in scores.items():
            size = bin(mask).count("1")
            for h in hints:
                after = scores.get(mask | 1 << h) if not mask >> h & 1 else None
                if after is not None:
                    rows.append((q, size, h + 1, (after > before) - (after < before)))
    return Additions(*np.array(rows, dtype=np.int64).reshape(-1, 4).T)


def rate(adds: Additions, chosen: np.ndarray, n_questions: int, draws: np.ndarray) -> Rate:
    """The rate of the `chosen` additions (a mask over `adds`) with its bootstrap CI over questions."""
    q = adds.question[chosen]
    per_q = np.bincount(q, minlength=n_questions)
    viol_q = np.bincount(q, weights=adds.outcome[chosen] < 0, minlength=n_questions)
    n, v = int(per_q.sum()), int(viol_q.sum())
    ties = int(np.count_nonzero(adds.outcome[chosen] == 0))
    return Rate(n, v, ties, v / n if n else math.nan, _interval(viol_q[draws].sum(axis=1), per_q[draws].sum(axis=1)))


def _interval(violations: np.ndarray, additions: np.ndarray) -> tuple[float, float]:
    kept = additions > 0
    if not kept.any():
        return (math.nan, math.nan)
    tail = 100 * (1 - CI_LEVEL) / 2
    low, high = np.percentile(violations[kept] / additions[kept], [tail, 100 - tail])
    return (float(low), float(high))


def rates(adds: Additions, n_questions: int, seed: int, resamples: int
          ) -> tuple[Rate, dict[int, Rate], dict[int, Rate]]:
    """(overall, by |S|, by the added hint's rank), every CI from the same resamples."""
    draws = np.random.default_rng(seed).integers(0, n_questions, size=(resamples, n_questions))  # question rows
    by_stage = {int(k): rate(adds, adds.size == k, n_questions, draws) for k in np.unique(adds.size)}
    by_rank = {int(k): rate(adds, adds.rank == k, n_questions, draws) for k in np.unique(adds.rank)}
    return rate(adds, np.ones(len(adds), dtype=bool), n_questions, draws), by_stage, by_rank


def named_retriever(retriever: Any, model: str | None, options: Mapping[str, Any] | None
                    ) -> tuple[Retriever, dict[str, Any]]:
    """The retriever to score with (ready to score given passages) and the options it was given."""
    if isinstance(retriever, Retriever):
        if model is not None or options:
            raise InputError("model and options are for a retriever given by name, not a Retriever",
                             field="options")
        return _scoring(retriever), dict(retriever.options)
    if not isinstance(retriever, str):
        raise InputError(f"retriever must be a name or a Retriever, not {type(retriever).__name__}",
                         field="retriever")
    given = {**(options or {}), **({} if model is None else {"model": model})}
    return _scoring(get_retriever(retriever, **given)), given


def _scoring(r: Retriever) -> Retriever:
    """`r`, refused at once (before an index is built) when it cannot score given passages."""
    if type(r).score_passages is Retriever.score_passages:
        r.score_passages("", [])  # the interface's own refusal
    return r


def attach_index(r: Retriever, bench: Benchmark, index_dir: Any) -> None:
    """The index of `bench` (built when missing): `index_dir`, else the one `r` is attached to
    for this benchmark, else the default."""
    if index_dir is None and r.bench is not None and r.bench.path == bench.path:
        index_dir = r.index_dir
    r.ensure_index(bench, index_dir)


def question_passages(bench: Benchmark, qids: Sequence[str]) -> dict[str, tuple[list[str], list[int]]]:
    """Each question's passages in the corpus and their hint sets (bitmasks), from the ids; an
    id without the qid_mask_perm structure is an InputError (its hints cannot be told)."""
    wanted = set(qids)
    out: dict[str, tuple[list[str], list[int]]] = {q: ([], []) for q in qids}
    for line, raw in enumerate(corpus_ids(bench).tolist(), 1):
        pid = raw.decode()
        try:
            qid, order = parse_passage_id(pid)
        except ValueError:
            raise InputError(f"passage id {pid!r} carries no hint structure (qid_mask_perm), so no hint can be "
                             "added to it", file=corpus_path(bench), record=f"line {line}", field="id") from None
        if qid in wanted:
            out[qid][0].append(pid)
            out[qid][1].append(sum(1 << h for h in order))
    return out


def score_sets(r: Retriever, bench: Benchmark, qids: Sequence[str],
               passages: Mapping[str, tuple[list[str], list[int]]]) -> list[dict[int, float]]:
    """Each question's hint sets (bitmask → the mean score of the set's passages)."""
    from ..progress import counter

    texts = question_queries(bench, list(qids))
    out = []
    with counter(len(qids), f"{r.name}: scoring hint sets", "question", getattr(r, "show_progress", False)) as bar:
        for q in qids:
            pids, masks = passages[q]
            sets, of = np.unique(np.asarray(masks, dtype=np.int64), return_inverse=True)
            scores = r.score_passages(texts[q], pids) if pids else np.zeros(0)
            means = np.bincount(of.ravel(), weights=scores, minlength=len(sets)) / np.bincount(of.ravel())
            out.append(dict(zip(sets.tolist(), means.tolist())))
            bar.update(1)
    return out
