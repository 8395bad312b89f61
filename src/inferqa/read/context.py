"""Merging the top-k passages of a run into one reader context.

Every passage is a list of hints (recovered from its id), so contexts can be built from
hints rather than raw text: the unions drop the repeats that overlapping orderings of
the same hints would otherwise put in front of the reader.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

from ..errors import InputError

if TYPE_CHECKING:
    from ..benchmark import Benchmark

STRATEGIES = ("union_norm", "union_freq", "concat")


def union_norm(hint_lists: Sequence[Sequence[str]]) -> list[str]:
    """Order-preserving union: each hint once, where it first occurs."""
    return list(dict.fromkeys(h for hints in hint_lists for h in hints))


def union_freq(hint_lists: Sequence[Sequence[str]], alpha: float = 0.6, beta: float = 0.4) -> list[str]:
    """Hints by alpha·Σ 1/rank + beta·Σ 1/position over their occurrences, best first.

    rank is the passage's 1-based rank, position the hint's 1-based place inside it;
    ties keep the order of first occurrence.
    """
    score: dict[str, float] = {}
    for rank, hints in enumerate(hint_lists, 1):
        for pos, h in enumerate(hints, 1):
            score[h] = score.get(h, 0.0) + alpha / rank + beta / pos
    first = {h: i for i, h in enumerate(score)}
    return sorted(score, key=lambda h: (-score[h], first[h]))


def concat(hint_lists: Sequence[Sequence[str]], separator: str = " ") -> list[str]:
    """The passages as they are, one per entry, repeats included."""
    return [separator.join(hints) for hints in hint_lists]


def merge(hint_lists: Sequence[Sequence[str]], strategy: str, alpha: float = 0.6, beta: float = 0.4) -> list[str]:
    if strategy == "union_norm":
        return union_norm(hint_lists)
    if strategy == "union_freq":
        return union_freq(hint_lists, alpha, beta)
    if strategy == "concat":
        return concat(hint_lists)
    raise InputError(f"unknown context strategy {strategy!r} (expected one of {', '.join(STRATEGIES)})",
                     field="strategy")


def format_context(lines: Sequence[str]) -> str:
    """The context block every prompt uses: one hint (or passage) per line."""
    return "\n".join(f"- {line}" for line in lines)


def build_context(bench: "Benchmark", pids: Sequence[str], strategy: str,
                  alpha: float = 0.6, beta: float = 0.4) -> str:
    """The reader context for passages `pids` (ranked best first) of `bench`."""
    return format_context(merge([bench.hints_of(p) for p in pids], strategy, alpha, beta))
