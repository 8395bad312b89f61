"""Diversification: a run-to-run step after any ranking (beside fusion), at most N passages of
one hint-group in the head of each ranking.

A QUIT corpus holds every ordering of every hint subset, so a top-k list is easily filled
with reorderings of the same few hints. The groups are `inferqa.hints`' hint-group plugins
(`set`: the same hint texts; `linked`: a question's whole family of passages).

`diversify` keeps the first N passages of each group where they are, in order, and moves
the others below, in their order. Scores are kept where that stays non-increasing and
clamped to the score above otherwise, so the run stays a valid, sorted TREC run with the
head's real scores.

nDCG rewards the redundant head (several relevant orderings of the same hints); Hit@k and
MRR reward the spread: report both (`inferqa evaluate` shows both by default).

Its options are declared once (`OPTIONS`); those of `inferqa retrieve`, `inferqa rerank` and
the experiment file are checked once (`check_diversify`). `diversify_margin` makes it adaptive:
a query is diversified only when its top group leads the next group's best score by less
than the margin, so confident heads keep their redundant evidence (nDCG) and uncertain ones
get the spread (Hit@k, MRR); `inferqa.tune.diversify.tune_margin` chooses it on a dev split.
`diversify_share` is the same gate by rank instead of by value: the given share of a run's
queries with the smallest margins is diversified (a margin's scale differs from run to run;
a share chosen on dev transfers as a share). The two exclude each other.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Callable, Hashable

from .errors import InputError
from .hints import check_grouping, hint_group_key
from .formats import Run, as_benchmark, as_run
from .parameters import GROUPING, MARGIN, DIVERSIFY_OPTIONS as OPTIONS, PER_GROUP, SHARE

if TYPE_CHECKING:
    from .formats.benchmark import Benchmark


def _checked(option: Any, value: object, name: str, message: str) -> Any:
    """`option.check(value)`, its error replaced by `message` on field `name`."""
    try:
        return option.check(value, name)
    except InputError:
        raise InputError(message, field=name) from None


def check_per_group(per_group: object) -> int:
    return _checked(PER_GROUP, per_group, "diversify",
                    f"diversify needs a positive number of passages per hint-group, got {per_group!r}")


NAMES = tuple(o.name for o in OPTIONS)  # as the API and the experiment file spell them
FLAGS = tuple("--" + n.replace("_", "-") for n in NAMES)  # as `inferqa retrieve` and `rerank` do


def check_diversify(per_group: object, by: object, margin: object = None, share: object = None, *,
                    names: tuple[str, ...] = NAMES) -> tuple[int | None, str, float | None, float | None]:
    """The four options (None: not given) checked before any work; `names` are how the caller
    spells them (`--diversify`, `--diversify-by`, `--diversify-margin`, `--diversify-share` on
    the command line). Returns (N or None, grouping, margin or None, share or None)."""
    if by is not None:
        try:
            check_grouping(by)
        except InputError as exc:
            raise InputError(exc.message, field=names[1]) from None
    for value, name in ((by, names[1]), (margin, names[2]), (share, names[3])):
        if value is not None and per_group is None:
            raise InputError(f"{name} needs {names[0]} N", field=name)
    if margin is not None and share is not None:
        raise InputError(f"{names[2]} and {names[3]} are two gates: give one", field=names[3])
    if margin is not None:
        margin = _checked(MARGIN, margin, names[2], f"{names[2]} takes a number ≥ 0, got {margin!r}")
    if share is not None:
        share = _checked(SHARE, share, names[3], f"{names[3]} takes a number in [0, 1], got {share!r}")
    return (None if per_group is None else check_per_group(per_group)), str(by or GROUPING.default), margin, share


def share_count(share: float, n: int) -> int:
    """How many of `n` queries a share diversifies: round(share × n), Python's round (half to even)."""
    return round(share * n)


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


def group_margin(ranked: list[tuple[str, float]], group: Callable[[str], Hashable]) -> float:
    """The top passage's score minus the best score of any other hint-group (inf: one group)."""
    if not ranked:
        return float("inf")
    top = group(ranked[0][0])
    for pid, score in ranked[1:]:
        if group(pid) != top:
            return ranked[0][1] - score
    return float("inf")


def diversify(run: Any, bench: "Benchmark | str | os.PathLike", per_group: int, by: str = GROUPING.default,
              margin: float | None = None, share: float | None = None) -> Run:
    """`run` (anything `as_run` takes, checked against `bench`: a `Benchmark` or its directory) with at most
    `per_group` passages of each hint-group ahead of the rest; with `margin`, only the queries whose top group
    leads the next by less than `margin`; with `share`, the `share_count(share, n)` that lead by least (ties by qid)."""
    per_group, by, margin, share = check_diversify(per_group, by, margin, share)
    bench = as_benchmark(bench)
    run = as_run(run, bench)  # ids checked as a run file's are (`Benchmark.check`)
    key = hint_group_key(bench, by)
    chosen = gated(query_margins(run, bench, by), margin, share)
    return run.derive({qid: diversify_ranking(ranked, per_group, key) if qid in chosen else ranked
                       for qid, ranked in run.items()})


def query_margins(run: Run, bench: "Benchmark", by: str = GROUPING.default) -> dict[str, float]:
    """Each query's `group_margin` (inf: one hint-group in its ranking)."""
    key = hint_group_key(bench, by)
    return {qid: group_margin(ranked, key) for qid, ranked in run.items()}


def gated(margins: dict[str, float], margin: float | None = None, share: float | None = None) -> set[str]:
    """The queries the gate lets through to diversification: with `share`, the
    `share_count(share, n)` smallest margins (ties by qid); else those below `margin` (None: all)."""
    if share is not None:
        return set(sorted(margins, key=lambda q: (margins[q], q))[:share_count(share, len(margins))])
    return {q for q, gap in margins.items() if margin is None or gap < margin}
