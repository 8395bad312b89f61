"""Deterministic, seeded train/dev/test splits: fractions, counts, or the source's own splits."""

from __future__ import annotations

import math
import random
from typing import Sequence

from ..errors import InputError
from ..records import Question
from ..stage_options import SPLIT

SPLIT_NAMES = {1: ("test",), 2: ("train", "test"), 3: ("train", "dev", "test")}
SOURCE = "source"


def parse_split(spec: str | Sequence[float] | None) -> tuple[float, ...] | str:
    """`"0.7,0.1,0.2"` (fractions summing to 1), `"5000,862,1539"` (counts) or `"source"`;
    None is SPLIT's default."""
    if spec is None:
        spec = SPLIT.default
    if isinstance(spec, str):
        if spec.strip() == SOURCE:
            return SOURCE
        try:
            values = tuple(float(x) for x in spec.split(","))
        except ValueError:
            raise InputError(f"--split {spec!r}: expected numbers separated by commas, or 'source'",
                             field="split") from None
    else:
        values = tuple(float(x) for x in spec)
    if not 1 <= len(values) <= 3 or any(not math.isfinite(v) or v < 0 for v in values):
        raise InputError(f"--split {spec!r}: expected 1 to 3 finite non-negative values", field="split")
    is_counts = all(v == int(v) for v in values) and sum(values) > 1
    if not is_counts and abs(sum(values) - 1.0) > 1e-6:
        raise InputError(f"--split {spec!r}: fractions must sum to 1 (or give whole counts)", field="split")
    return values


def make_splits(questions: Sequence[Question], spec: tuple[float, ...] | str, seed: int) -> dict[str, list[str]]:
    """Shuffle question ids with `seed` and cut them; counts that fall short of the question
    total leave the remainder in a split named `rest`."""
    qids = [q.id for q in questions]
    if spec == SOURCE:
        out: dict[str, list[str]] = {}
        for q in questions:
            name = q.metadata.get("split")
            if not name:
                raise InputError("--split source: question has no split in its source", record=q.id, field="split")
            out.setdefault(str(name), []).append(q.id)
        return out
    order = list(qids)
    random.Random(seed).shuffle(order)
    n = len(order)
    names = SPLIT_NAMES[len(spec)]
    is_counts = all(v == int(v) for v in spec) and sum(spec) > 1
    if is_counts:
        sizes = [int(v) for v in spec]
        if sum(sizes) > n:
            raise InputError(f"--split counts add up to {sum(sizes)} but only {n} questions were kept",
                             field="split")
    else:
        # Cut at rounded cumulative fractions, so the sizes always add up to n.
        cuts = [0] + [min(n, round(sum(spec[:i + 1]) * n)) for i in range(len(spec) - 1)] + [n]
        sizes = [b - a for a, b in zip(cuts, cuts[1:])]
    out, start = {}, 0
    for name, size in zip(names, sizes):
        out[name] = order[start:start + size]
        start += size
    if start < n:
        out["rest"] = order[start:]
    return out
