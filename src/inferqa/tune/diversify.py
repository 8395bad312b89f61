"""Choosing the adaptive diversification margin on one split (`inferqa tune-diversify`).

`diversify(..., margin=m)` diversifies a query only when its top hint-group leads the next
group by less than m. `tune_margin` scores a grid of margins on the questions of one split
and picks the best by one measure. The result records that split: apply the margin to
another split and score it there (`inferqa retrieve/rerank --diversify-margin`), never on
the split it was chosen on.

A query's ranking is either left as it is or fully diversified, so each measure is computed
per query for the two runs once, and a margin's mean is the mean of the mix it selects:
the same values `evaluate(diversify(run, bench, n, by, margin), bench)` gives, at the cost
of two evaluations for any grid size.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Sequence

from ..errors import InputError
from ..evaluation import evaluate
from ..evaluation.measures import metric_names
from ..evaluation.metrics import resolve
from ..formats import as_run
from ..formats.coerce import as_benchmark
from ..retrieve.diversify import MARGIN, check_diversify, diversify, gated, query_margins, share_count
from ..stages import Settings
from ..parameters import DEFAULT_SHARES
from ..stages.tune import TUNE_DIVERSIFY

if TYPE_CHECKING:
    from ..formats.benchmark import Benchmark


@dataclass(frozen=True)
class MarginRow:
    """One margin of the grid: `margin` (None: every query diversified, as `diversify`'s
    margin=None), the `share` of the split's queries it diversifies, each measure's mean."""

    margin: float | None
    share: float
    scores: dict[str, float]


@dataclass(frozen=True)
class MarginTuning:
    """`tune_margin`'s result: the grid's rows best first by `metric` (ties: the smaller
    margin, None counting as the largest), tuned on `split`, of which the run held `questions`."""

    split: str
    questions: int
    per_group: int
    by: str
    metric: str
    rows: tuple[MarginRow, ...]

    @property
    def best(self) -> MarginRow:
        """The chosen row (the first)."""
        return self.rows[0]

    @property
    def margin(self) -> float | None:
        """The chosen margin (None: diversify every query)."""
        return self.rows[0].margin

    @property
    def share(self) -> float:
        """The share of the split's queries the chosen margin diversifies: the same gate as
        `diversify(..., share=)`, which carries over to runs whose margins have another scale."""
        return self.rows[0].share


def margin_at_share(margins: Sequence[float], share: float) -> float | None:
    """The margin that diversifies round(share × n) of the queries with these `margins` (more
    where margins tie): 0 for none, the midpoint between the last one diversified and the next
    larger margin; None (every query) where it takes in the largest finite margin."""
    if not 0.0 <= share <= 1.0:
        raise InputError(f"share must be between 0 and 1, got {share!r}", field="share")
    ordered = sorted(margins)
    k = share_count(share, len(ordered))
    if k == 0:
        return 0.0
    last = ordered[k - 1]
    above = [m for m in ordered[k:] if m > last]
    if math.isinf(last) or not above or math.isinf(above[0]):
        return None
    return (last + above[0]) / 2


def check_grid(margins: Sequence[Any] | None, shares: Sequence[float] | None) -> list[Any]:
    """The grid checked before any work: the margins (each ≥ 0 or None), or the shares (each in
    [0, 1]; None: `DEFAULT_SHARES`), deduplicated in order; an InputError otherwise."""
    if margins is not None and shares is not None:
        raise InputError("give margins or shares, not both", field="margins")
    if margins is not None:
        grid = []
        for m in margins:
            try:
                grid.append(MARGIN.check(m, "margins"))
            except InputError:
                raise InputError(f"a margin must be a number ≥ 0 (or None: every query), got {m!r}",
                                 field="margins") from None
    else:
        grid = list(DEFAULT_SHARES if shares is None else shares)
        for s in grid:
            if not isinstance(s, (int, float)) or not 0.0 <= s <= 1.0:
                raise InputError(f"a share must be a number between 0 and 1, got {s!r}", field="shares")
    if not grid:
        raise InputError("the margin grid is empty", field="margins")
    return list(dict.fromkeys(grid))


_D = TUNE_DIVERSIFY.default


def tune_margin(run: Any, bench: "Benchmark | str | os.PathLike", *, split: str = _D("split"),
                margins: Sequence[Any] | None = None, shares: Sequence[float] | None = None,
                per_group: int = _D("per_group"), by: str = _D("diversify_by"),
                metric: str = _D("metric"), measures: Sequence[str] = tuple(_D("measures"))
                ) -> MarginTuning:
    """Score each margin of the grid on the questions of `split` only, by `inferqa.evaluate`
    of `diversify(run, bench, per_group, by, margin)`; rows best first by `metric` (added to
    `measures` if absent). `run` is anything `as_run` takes.

    The grid is `margins` (each ≥ 0; None: every query), or the margins at `shares` of the
    split's queries (`margin_at_share`; default 0, 0.1, …, 1: from none to all)."""
    return TUNE_DIVERSIFY.run(run=run, bench=bench, split=split, margins=margins, shares=shares,
                              per_group=per_group, diversify_by=by, metric=metric,
                              measures=measures if isinstance(measures, str) else list(measures))


def tune_diversify_stage(s: Settings) -> MarginTuning:
    """The entry point of `TUNE_DIVERSIFY` (CLI, experiment file and `tune_margin` alike)."""
    run, bench, split, margins, shares, metric = s.run, s.bench, s.split, s.margins, s.shares, s.metric
    per_group, by, _, _ = check_diversify(s.per_group, s.diversify_by)
    measures = s.measures
    grid = check_grid(margins, shares)
    if len(metric_names(metric)) != 1:
        raise InputError(f"metric must be one measure, got {metric!r}", field="metric")
    metric = metric_names(metric)[0]
    names = list(dict.fromkeys([*metric_names(measures), metric]))
    resolve(names)  # an unknown measure fails before the run is read
    bench = as_benchmark(bench)
    bench.split_qids(split)  # an unknown split fails before the run is read
    run = as_run(run, bench, split)
    if not len(run):
        raise InputError(f"the run holds no question of split {split!r}", field="split")
    gaps = query_margins(run, bench, by)
    if margins is None:
        grid = list(dict.fromkeys(margin_at_share(list(gaps.values()), s) for s in grid))
    plain = evaluate(run, bench, names, per_query=True, split=split)["per_query"]
    spread = evaluate(diversify(run, bench, per_group, by), bench, names, per_query=True, split=split)["per_query"]
    rows = []
    for m in grid:
        through = gated(gaps, m)
        chosen = [spread[q] if q in through else plain[q] for q in plain]
        rows.append(MarginRow(m, len(through) / len(gaps), {n: _mean(v[n] for v in chosen) for n in names}))
    rows.sort(key=lambda r: (-_orderable(r.scores[metric]), math.inf if r.margin is None else r.margin))
    return MarginTuning(split, len(run), per_group, by, metric, tuple(rows))


def _mean(values: Any) -> float:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else math.nan


def _orderable(value: float) -> float:
    return -math.inf if math.isnan(value) else value
