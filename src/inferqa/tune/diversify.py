"""Choosing the adaptive diversification margin on one split (`inferqa tune-diversify`).

`diversify(..., margin=m)` diversifies a query only when its top hint-group leads the next
group by less than m. `inferqa.tune.tune_margin` (the stage `inferqa.tune.stage.tune_diversify`)
scores a grid of margins on the questions of one split and picks the best by one measure. The
result records that split: apply the margin to another split and score it there (`inferqa
retrieve/rerank --diversify-margin`), never on the split it was chosen on.

A query's ranking is either left as it is or fully diversified, so each measure is computed
per query for the two runs once, and a margin's mean is the mean of the mix it selects:
the same values `evaluate(diversify(run, bench, n, by, margin), bench)` gives, at the cost
of two evaluations for any grid size.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from ..errors import InputError
from ..parameters import DEFAULT_SHARES
from ..diversification import MARGIN, share_count


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
