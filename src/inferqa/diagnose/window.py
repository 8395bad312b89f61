"""The reranking window: how many distinct questions the top k passages of a run hold, and the
best any reranker could do with a plain window of k passages or one of k distinct questions
(or hint sets).

A QUIT question's 325 passages are orderings of subsets of the same hints, so near-copies of
one question fill the head of a ranking, and a reranker given the top 100 passages chooses
among only a few questions. Per depth k, means over the run's questions that have a relevant
passage (label ≥ `MIN_LABEL`):

- `distinct_questions`, `distinct_sets`: the number of distinct `question` (`set`) hint-groups
  among the top k passages;
- `recall`: the share of questions with a relevant passage in the top k (Hit@k: the ceiling
  of an oracle reranker over the top k);
- `recall_distinct_questions`, `recall_distinct_sets`: the share of questions for which one of
  the first k distinct groups of the whole ranking (a group's representative: its first
  passage in the run's order) holds a relevant passage of the run (the ceiling of a window of
  k groups, one reranker call each).
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ..defaults import MIN_LABEL
from ..errors import InputError
from ..formats.coerce import as_benchmark, as_run
from ..hints import GroupKey, hint_group_key, window_groups
from ..stages import Settings
from ..parameters import WINDOW_DEPTH
from ..stages.diagnose import WINDOW
from ..tabular import percent

if TYPE_CHECKING:
    from ..formats import Benchmark, Run
    from ..tabular import TextTable

FIELDS = ("k", "distinct_questions", "distinct_sets", "recall", "recall_distinct_questions", "recall_distinct_sets")


@dataclass(frozen=True)
class WindowReport:
    """One record per depth k (`FIELDS`; shares as fractions), means over `queries` questions:
    the run's questions with a relevant passage; `unjudged` of the run's questions had none
    and are left out."""

    bench: str
    split: str | None
    queries: int
    unjudged: int
    min_label: int
    depths: tuple[dict[str, Any], ...]

    def to_dict(self) -> dict[str, Any]:
        """The report as `--json` prints it."""
        return {"bench": self.bench, "split": self.split, "queries": self.queries, "unjudged": self.unjudged,
                "min_label": self.min_label, "depths": [dict(r) for r in self.depths]}

    def text_table(self) -> "TextTable":
        """The report as `inferqa diagnose window` prints it (shares in percent)."""
        from ..tabular import TextTable

        rows = [(str(r["k"]), f"{r['distinct_questions']:.1f}", f"{r['distinct_sets']:.1f}", percent(r["recall"], 1),
                 percent(r["recall_distinct_questions"], 1), percent(r["recall_distinct_sets"], 1))
                for r in self.depths]
        note = (f"Means over the run's {self.queries} questions with a passage of label ≥ {self.min_label} "
                f"({self.unjudged} without one left out). Questions, hint sets: how many distinct ones the top k "
                "passages hold. Hit@k: a relevant passage in the top k. k questions (k sets): a relevant passage "
                "of the run in one of the first k distinct questions (hint sets) of the whole ranking.")
        title = f"reranking window on {self.bench}" + (f" {self.split}" if self.split else "")
        return TextTable(title, ("k", "questions", "hint sets", "Hit@k %", "k questions %", "k sets %"),
                         tuple(rows), 1, note=note)


@dataclass(frozen=True)
class GroupView:
    """One query's ranking seen by one hint-grouping: where each group first appears, and the
    rank (0-based, among the groups in order of first appearance) of the first group holding a
    relevant passage of the ranking (inf: none)."""

    firsts: list[int]
    first_relevant_group: float

    @classmethod
    def of(cls, ranked: Sequence[tuple[str, float]], relevant: set[str], key: GroupKey) -> "GroupView":
        groups = window_groups(ranked, len(ranked), key)
        rank = next((r for r, members in enumerate(groups) if any(ranked[i][0] in relevant for i in members)),
                    math.inf)
        return cls([members[0] for members in groups], rank)

    def distinct_in_top(self, k: int) -> int:
        return sum(1 for i in self.firsts if i < k)


# -- the stage ------------------------------------------------------------------------------

_D = WINDOW.default


def window(run: "Run | str | os.PathLike", bench: "Benchmark | str | os.PathLike", *,
           depths: Sequence[int] = tuple(_D("depths")), split: str | None = None) -> WindowReport:
    """How many distinct questions and hint sets the top k passages of `run` hold, and the
    best a reranker could do over a window of k passages, k distinct questions or k distinct
    hint sets, for each k of `depths` (`run` and `bench`: objects or paths; `split`: only the
    run's questions of that split). See `WindowReport`; docs/diagnose.md#window."""
    return WINDOW.run(run=run, bench=bench, depths=[depths] if isinstance(depths, int) else list(depths),
                      split=split)


def window_stage(s: Settings) -> WindowReport:
    """The entry point of `WINDOW` (CLI and `window` alike)."""
    depths = sorted(set(_depths(s.depths)))
    bench = as_benchmark(s.bench)
    if s.split is not None:
        bench.split_qids(s.split)  # an unknown split refused before the run is read
    run = as_run(s.run, bench, s.split)
    min_label = MIN_LABEL.default
    relevant = {q: {p for p, label in bench.qrels.get(q, {}).items() if label >= min_label} for q in run.qids}
    judged = [q for q in run.qids if relevant[q]]
    if not judged:
        raise InputError(f"no question of the run has a passage of label ≥ {min_label} in the benchmark's qrels",
                         file=bench.path / "qrels.tsv", field="run")
    by_question, by_set = hint_group_key(bench, "question"), hint_group_key(bench, "set")
    records = {k: dict.fromkeys(FIELDS[1:], 0.0) for k in depths}
    for q in judged:
        ranked = run[q]
        hit = next((i for i, (p, _) in enumerate(ranked) if p in relevant[q]), math.inf)
        questions, sets = GroupView.of(ranked, relevant[q], by_question), GroupView.of(ranked, relevant[q], by_set)
        for k, r in records.items():
            r["distinct_questions"] += questions.distinct_in_top(k)
            r["distinct_sets"] += sets.distinct_in_top(k)
            r["recall"] += hit < k
            r["recall_distinct_questions"] += questions.first_relevant_group < k
            r["recall_distinct_sets"] += sets.first_relevant_group < k
    rows = tuple({"k": k, **{f: v / len(judged) for f, v in r.items()}} for k, r in records.items())
    return WindowReport(str(bench.path), s.split, len(judged), len(run.qids) - len(judged), min_label, rows)


def _depths(depths: Sequence[Any]) -> list[int]:
    if not depths:
        raise InputError(f"{WINDOW.name}: give at least one depth", field="depths")
    out = []
    for k in depths:
        try:
            out.append(WINDOW_DEPTH.check(k, WINDOW.name))
        except InputError:
            raise InputError(f"{WINDOW.name}: each --depth takes {WINDOW_DEPTH.accepts()}, not {k!r}",
                             field="depths") from None
    return out
