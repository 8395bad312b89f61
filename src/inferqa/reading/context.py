"""Merging the top-k passages of a run into one reader context: each strategy is a `context` plugin,
a function from the passages' hint lists (best passage first) to the context's lines. Contexts are
built from hints, so the unions drop the repeats that overlapping orderings of the same hints hold.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping, Sequence

from .. import registry
from ..errors import InputError
from ..registry import Option, plugin
from ..parameters import UNION_ALPHA, UNION_BETA
from ..text import did_you_mean

if TYPE_CHECKING:
    from ..formats.benchmark import Benchmark

Strategy = Callable[[Sequence[Sequence[str]]], list[str]]


@plugin("context", "union_norm")
def union_norm(hint_lists: Sequence[Sequence[str]]) -> list[str]:
    """Order-preserving union: each hint once, where it first occurs."""
    return list(dict.fromkeys(h for hints in hint_lists for h in hints))


@plugin("context", "union_freq", UNION_ALPHA, UNION_BETA)
def union_freq(hint_lists: Sequence[Sequence[str]], alpha: float = UNION_ALPHA.default,
               beta: float = UNION_BETA.default) -> list[str]:
    """Hints by alpha·Σ 1/rank + beta·Σ 1/position over their occurrences, best first.

    rank is the passage's 1-based rank, position the hint's 1-based place inside it;
    ties keep the order of first occurrence.
    """
    # Σ 1/rank and Σ 1/position summed apart, then weighted, as the QUIT authors do: floating point
    # decides exact ties ((rank, position) (1, 1) against (2, 1)+(3, 4) are both 1 that way; summed
    # per occurrence the second is 0.9999999999999999).
    by_rank: dict[str, float] = {}
    by_pos: dict[str, float] = {}
    for rank, hints in enumerate(hint_lists, 1):
        for pos, h in enumerate(hints, 1):
            by_rank[h] = by_rank.get(h, 0.0) + 1 / rank
            by_pos[h] = by_pos.get(h, 0.0) + 1 / pos
    score = {h: alpha * by_rank[h] + beta * by_pos[h] for h in by_rank}
    first = {h: i for i, h in enumerate(score)}
    return sorted(score, key=lambda h: (-score[h], first[h]))


_SEPARATOR = Option("separator", str, " ", "text between a passage's hints")


@plugin("context", "concat", _SEPARATOR)
def concat(hint_lists: Sequence[Sequence[str]], separator: str = _SEPARATOR.default) -> list[str]:
    """The passages as they are, one per entry, repeats included."""
    return [separator.join(hints) for hints in hint_lists]


def strategy_plugin(name: str) -> registry.Plugin:
    """The context plugin NAME; an unknown one is reported as what `-s` and the YAML call it."""
    known = registry.available("context")
    if name not in known:
        raise InputError(f"unknown strategy {name!r}{did_you_mean(name, known)}; available: {', '.join(known)}",
                         field="strategy")
    return registry.get("context", name)


def strategy(name: str, **options: Any) -> Strategy:
    """Context strategy NAME with its options bound (checked by the registry)."""
    return strategy_plugin(name).create(**options)


def strategies(names: Sequence[str], options: Mapping[str, Any] | None = None, *,
               strict: bool = True) -> dict[str, Strategy]:
    """One strategy per name; each of `options` goes to the strategies that declare it (a
    reader's alpha applies to union_freq). With `strict`, one that none of them declares is
    an error (a typo); without, it is dropped (settings shared by every strategy's display)."""
    plugins = {n: strategy_plugin(n) for n in dict.fromkeys(names)}
    options = dict(options or {})
    for key in options:
        if strict and not any(key in p.options for p in plugins.values()):
            takes = sorted({o for p in plugins.values() for o in p.options})
            raise InputError(f"no context strategy of {', '.join(plugins)} takes option {key!r}"
                             + (f" (they take: {', '.join(takes)})" if takes else ""))
    return {n: p.create(**{k: v for k, v in options.items() if k in p.options}) for n, p in plugins.items()}


def merge(hint_lists: Sequence[Sequence[str]], name: str, **options: Any) -> list[str]:
    return strategy(name, **options)(hint_lists)


def format_context(lines: Sequence[str]) -> str:
    """The context block every prompt uses: one hint (or passage) per line."""
    return "\n".join(f"- {line}" for line in lines)


def build_context(bench: "Benchmark", pids: Sequence[str], name: str, **options: Any) -> str:
    """The reader context for passages `pids` (ranked best first) of `bench`."""
    return format_context(merge([bench.hints_of(p) for p in pids], name, **options))
