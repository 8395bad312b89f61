"""The reranking window: how many distinct questions the top k passages of a run hold, and the
best any reranker could do with a plain window of k passages or one of k distinct questions
(or hint sets): a QUIT question's passages are orderings of the same hints, so its near-copies
fill the head of a ranking. Per depth k, means over the run's questions that have a relevant
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
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ..hints import GroupKey, window_groups
from ..tabular import percent

if TYPE_CHECKING:
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
