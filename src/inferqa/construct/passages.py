"""Passages: every non-empty subset of a question's kept hints, in every ordering."""

from __future__ import annotations

from functools import lru_cache
from itertools import combinations, permutations
from math import comb, factorial
from typing import Iterator

from ..formats.benchmark import HINT_SEPARATOR
from ..records import LEFT_TO_RIGHT, Passage, Question, passage_id


def n_orders(k: int) -> int:
    """Σ C(k, i)·i! for i = 1..k: 325 for k = 5."""
    return sum(comb(k, i) * factorial(i) for i in range(1, k + 1))


def iter_orders(k: int) -> Iterator[tuple[int, ...]]:
    """Hint orders by subset size, then subset (lexicographic), then permutation (lexicographic)."""
    for size in range(1, k + 1):
        for subset in combinations(range(k), size):
            yield from permutations(subset)


@lru_cache(maxsize=16)
def order_table(k: int, bits: str = LEFT_TO_RIGHT) -> tuple[tuple[tuple[int, ...], str], ...]:
    """(order, passage-id suffix `_{mask}_{perm}`) for every order of k hints, computed once per k."""
    return tuple((order, passage_id("", order, k, bits)) for order in iter_orders(k))


def iter_passages(question: Question, bits: str = LEFT_TO_RIGHT) -> Iterator[Passage]:
    """One passage per order of the question's hints; text = the hints joined by one space,
    stripped (`Benchmark.passage_text`)."""
    texts = [h.text for h in question.hints]
    for order, suffix in order_table(len(texts), bits):
        yield Passage(id=question.id + suffix, qid=question.id, order=order,
                      text=HINT_SEPARATOR.join(texts[i] for i in order).strip())
