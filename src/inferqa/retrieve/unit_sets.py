"""Passages as sets of clue units, for retrievers that encode each distinct clue once.

Every ordering of one hint subset holds the same units, so `clue` and `colbert` (clue mode)
both score a passage from its unit *set*: the units are numbered once (on first use, in
corpus order), the sets once, and each passage points to its set.
"""

from __future__ import annotations

import numpy as np

from ..benchmark import Benchmark
from ..errors import InputError


class UnitSets:
    """Distinct unit texts, distinct unit multisets (sorted tuples of unit ids), each passage's.

    A multiset, so a unit text repeated within one passage weighs twice in a mean; MaxSim
    (colbert) ignores the repeat."""

    def __init__(self, n_passages: int):
        self.texts: list[str] = []
        self._unit: dict[str, int] = {}
        self._set: dict[tuple[int, ...], int] = {}
        self.sets: list[tuple[int, ...]] = []
        self.set_of = np.empty(n_passages, dtype=np.int64)

    def unit(self, text: str) -> int:
        u = self._unit.get(text)
        if u is None:
            u = self._unit[text] = len(self.texts)
            self.texts.append(text)
        return u

    def add(self, passage: int, units: list[int]) -> None:
        key = tuple(sorted(units))
        s = self._set.get(key)
        if s is None:
            s = self._set[key] = len(self.sets)
            self.sets.append(key)
        self.set_of[passage] = s

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(ptr, members): set s holds units members[ptr[s]:ptr[s + 1]]."""
        ptr = np.zeros(len(self.sets) + 1, dtype=np.int64)
        np.cumsum([len(key) for key in self.sets], out=ptr[1:])
        members = np.fromiter((u for key in self.sets for u in key), dtype=np.int64, count=int(ptr[-1]))
        return ptr, members


def hint_unit_sets(bench: Benchmark, ids: np.ndarray) -> UnitSets:
    """Units = the hints (from the benchmark's question records) that some passage of `ids` holds."""
    out = UnitSets(len(ids))
    corpus = bench.path / "corpus.jsonl"
    for i, raw in enumerate(ids.tolist()):
        try:
            hints = bench.hints_of(raw.decode())
        except (KeyError, ValueError) as exc:  # a malformed id, an unknown question, a hint beyond its hints
            raise InputError(str(exc.args[0]), file=corpus, record=f"line {i + 1}", field="id") from None
        out.add(i, [out.unit(h) for h in hints])
    return out
