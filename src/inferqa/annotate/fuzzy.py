"""When a model answer the judge rejected is still worth a person's look ("contested").

An answer is contested when it is close to some gold alias: SQuAD token F1 of at least `min_f1`
(`inferqa.parameters.MIN_F1`), or one contains the other as whole words ("da vinci" in "leonardo da
vinci"). The scorers are `inferqa.evaluation.exact_match`'s; the rule is `Candidate.contested`.
"""

from __future__ import annotations

from typing import Iterable

from ..evaluation.exact_match import contains, f1


def closeness(answer: str, golds: Iterable[str]) -> tuple[float, bool]:
    """Best token F1 against the gold aliases, and whether containment holds either way."""
    golds = list(golds)
    if not golds:
        return 0.0, False
    contained = contains(answer, golds) or any(contains(g, [answer]) for g in golds)
    return f1(answer, golds), contained
