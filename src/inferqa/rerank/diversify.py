"""Redundancy-aware ranking: at most N passages of one hint-group in the head of a ranking.

A QUIT corpus holds every ordering of every hint subset, so a top-k list is easily filled
with reorderings of the same few hints. Hint-groups come from the hint texts of the
benchmark's question records, never from the question part of the id, in one of two grains:

- `set`: passages with the same set of hint texts (every ordering of one subset);
- `linked`: passages joined, directly or through others, by a shared hint text. In a QUIT
  corpus a question's full hint set is one passage, so this is the question's whole family
  of passages (merged with any other question that shares a hint text).

`diversify` keeps the first N passages of each group where they are, in order, and moves
the others below, in their order. Scores are kept where that stays non-increasing and
clamped to the score above otherwise, so the run stays a valid, sorted TREC run with the
head's real scores.

nDCG rewards the redundant head (several relevant orderings of the same hints); Hit@k and
MRR reward the spread: report both (`inferqa evaluate` shows both by default).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable, Hashable

from ..errors import InputError
from ..records import Run

if TYPE_CHECKING:
    from ..benchmark import Benchmark

GROUPINGS = ("set", "linked")


def _linked_roots(bench: "Benchmark") -> Callable[[str], str]:
    """Union-find over hint texts: the hints a question's passages hold are joined."""
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        root = x
        while parent.setdefault(root, root) != root:
            root = parent[root]
        while parent[x] != root:  # path compression
            parent[x], x = root, parent[x]
        return root

    for q in bench.questions.values():
        dropped = set(q.metadata.get("dropped_hints") or ())  # kept in the record, held by no passage
        texts = [h.text for i, h in enumerate(q.hints) if i not in dropped]
        for t in texts[1:]:
            a, b = find(texts[0]), find(t)
            if a != b:
                parent[max(a, b)] = min(a, b)  # the smaller text is the root: deterministic
    return find


def hint_group_key(bench: "Benchmark", by: str = "set") -> Callable[[str], Hashable]:
    """A passage id → its hint-group (`by`: set | linked)."""
    check_grouping(by)
    root = _linked_roots(bench) if by == "linked" else None
    cache: dict[str, Hashable] = {}

    def key(pid: str) -> Hashable:
        k = cache.get(pid)
        if k is None:
            try:
                hints = bench.hints_of(pid)
            except (KeyError, ValueError) as exc:
                raise InputError(f"run passage {pid!r} is not in the benchmark ({exc})", file=bench.path,
                                 field="pid") from None
            k = cache[pid] = frozenset(hints) if root is None else root(hints[0])
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


def check_grouping(by: object) -> str:
    if by not in GROUPINGS:
        raise InputError(f"unknown hint-group {by!r} (have: {', '.join(GROUPINGS)})", field="diversify_by")
    return by


def check_diversify(per_group: int | None, by: str | None) -> None:
    """The CLI's --diversify N / --diversify-by pair, checked before any work."""
    if by is not None:
        check_grouping(by)
        if per_group is None:
            raise InputError("--diversify-by needs --diversify N", field="diversify_by")
    if per_group is not None:
        check_per_group(per_group)


def diversify(run: Run, bench: "Benchmark", per_group: int, by: str = "set") -> Run:
    """`run` with at most `per_group` passages of each hint-group ahead of the rest."""
    check_per_group(per_group)
    key = hint_group_key(bench, by)
    return Run({qid: diversify_ranking(ranked, per_group, key) for qid, ranked in run.items()}, tag=run.tag)
