"""Evidence-set reading (`evidence_vote`): every distinct hint set of the top-k (the `set` hint-group
of `inferqa.hints`) is read alone, as its best-ranked passage, and the answers (normalised like EM)
collect weights: the group's best passage's score min-max scaled over the top-k into [1, 2] (all
equal: 1 each), so the top group counts at most twice the weakest and agreeing weaker groups can
outvote it. Abstentions do not vote; if every group abstains the answer is NO ANSWER. Equal totals
go to the answer whose first group ranks higher.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Hashable, Sequence

from ..registry import plugin
from ..hints import hint_group_key
from ..text import normalize_answer
from ..evaluation.exact_match import is_abstention

if TYPE_CHECKING:
    from ..formats.benchmark import Benchmark

@plugin("context", "evidence_vote", votes=True,
        help="Each hint-group of the top-k read alone; answers voted on, weighted by retrieval score.")
def evidence_context(hint_lists: Sequence[Sequence[str]]) -> list[str]:
    """The context of ONE hint-group: its best-ranked passage's hints. `read_with_llm` calls it per
    group (the plugin's `votes` flag) and votes on the answers."""
    return list(hint_lists[0]) if hint_lists else []


@dataclass(frozen=True)
class EvidenceSet:
    hints: tuple[str, ...]  # its best-ranked passage's hints, in that passage's order
    pids: tuple[str, ...]   # the top-k passages of this hint-group
    weight: float


def evidence_sets(bench: "Benchmark", ranked: Sequence[tuple[str, float]]) -> list[EvidenceSet]:
    """The hint-groups of `ranked` (best first), in order of their best passage."""
    if not ranked:
        return []
    scores = [s for _, s in ranked]
    lo, hi = min(scores), max(scores)
    group_of = hint_group_key(bench, "set")
    groups: dict[Hashable, dict] = {}
    for pid, score in ranked:
        g = groups.get(group_of(pid))
        if g is None:
            g = groups[group_of(pid)] = {"hints": tuple(bench.hints_of(pid)), "pids": [],
                                         "weight": 1.0 + ((score - lo) / (hi - lo) if hi > lo else 0.0)}
        g["pids"].append(pid)
    return [EvidenceSet(g["hints"], tuple(g["pids"]), g["weight"]) for g in groups.values()]


def vote(answers: Sequence[str], weights: Sequence[float]) -> int | None:
    """Index of the answer that wins the weighted vote (its first occurrence), None if all abstain."""
    total: dict[str, float] = {}
    first: dict[str, int] = {}
    for i, (a, w) in enumerate(zip(answers, weights)):
        if is_abstention(a):
            continue
        key = normalize_answer(a)
        total[key] = total.get(key, 0.0) + w
        first.setdefault(key, i)
    if not total:
        return None
    best = max(total, key=lambda key: (total[key], -first[key]))
    return first[best]
