"""Redundancy-aware ranking: at most N passages of one hint-group in the head of a ranking.

A QUIT corpus holds every ordering of every hint subset, so a top-k list is easily filled
with reorderings of the same few hints. A passage's hint-group is its set of hint texts
(from the benchmark's question records, so passages of different questions that hold the
same hints share a group); the question part of the id plays no role. `diversify` keeps
the first N passages of each group where they are, in order, and moves the others below,
in their order. Scores are kept where that stays non-increasing and clamped to the score
above otherwise, so the run stays a valid, sorted TREC run with the head's real scores.

nDCG rewards the redundant head (several relevant orderings of the same hints); Hit@k and
MRR reward the spread: report both (`inferqa evaluate` shows both by default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Hashable

from ..errors import InputError
from ..records import Run

if TYPE_CHECKING:
    from ..benchmark import Benchmark


def hint_group_key(bench: "Benchmark") -> Callable[[str], Hashable]:
    """A passage id → its hint-group: the set of its hint texts."""
    cache: dict[str, Hashable] = {}

    def key(pid: str) -> Hashable:
        k = cache.get(pid)
        if k is None:
            try:
                k = cache[pid] = frozenset(bench.hints_of(pid))
            except (KeyError, ValueError) as exc:
                raise InputError(f"run passage {pid!r} is not in the benchmark ({exc})", file=bench.path,
                                 field="pid") from None
        return k

    return key


def diversify_ranking(ranked: list[tuple[str, float]], per_group: int,
                      group: Callable[[str], Hashable]) -> list[tuple[str, float]]:
    seen: dict[Hashable, int] = {}
    head, tail = [], []
    for item in ranked:
        g = group(item[0])
        seen[g] = seen.get(g, 0) + 1
        (head if seen[g] <= per_group else tail).append(item)
    out, floor = [], float("inf")
    for pid, score in head + tail:
        floor = min(floor, score)
        out.append((pid, floor))
    return out


def check_per_group(per_group: object) -> int:
    if isinstance(per_group, bool) or not isinstance(per_group, int) or per_group < 1:
        raise InputError(f"diversify needs a positive number of passages per hint-group, got {per_group!r}",
                         field="diversify")
    return per_group


def diversify(run: Run, bench: "Benchmark", per_group: int) -> Run:
    """`run` with at most `per_group` passages of each hint-group ahead of the rest."""
    check_per_group(per_group)
    key = hint_group_key(bench)
    return Run({qid: diversify_ranking(ranked, per_group, key) for qid, ranked in run.items()}, tag=run.tag)
