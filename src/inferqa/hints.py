"""Hint groups, in one place: which passages of a QUIT corpus hold the same hints.

A QUIT corpus holds every ordering of every hint subset of a question, so many passages
share their hints. Three views of that, each used by several stages:

- `group_by_subset` (from the ids alone): the passages of one (question, hint subset), i.e.
  every ordering of one subset. BM25 indexes each such group once (`dedup`).
- `UnitSets` / `hint_unit_sets`: each passage as a set of clue units (its hints, or another
  unit such as sentences), units and sets numbered once, so `clue` and `colbert` (clue
  mode) encode each distinct clue once.
- `hint-group` plugins (`hint_group_key`): a passage id → its group (`set`, `linked`,
  `question`: see each plugin's help), for diversification (`inferqa.diversification`) and
  evidence reading.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Hashable, Sequence

import numpy as np

from . import registry
from .defaults import HINT_GROUPING
from .errors import InputError
from .records import LEFT_TO_RIGHT, passage_id, question_of
from .registry import plugin

if TYPE_CHECKING:
    from .formats.benchmark import Benchmark

GroupKey = Callable[[str], Hashable]


# -- by id: (question, hint subset) groups --------------------------------------------------
@dataclass
class Groups:
    """Passages grouped by (question, hint subset), groups in order of first appearance:
    `pids[ptr[g]:ptr[g + 1]]` are group g's passages in corpus order; `keys[g]` is `b"qid_mask"`;
    `group_of[i]` is the group of corpus position i; `first[g]` the position of g's first passage."""

    keys: np.ndarray
    pids: np.ndarray
    ptr: np.ndarray
    group_of: np.ndarray
    first: np.ndarray

    @property
    def multiplicity(self) -> np.ndarray:
        return np.diff(self.ptr)


def group_by_subset(ids: np.ndarray, path: Path | None = None) -> Groups:
    n, width = len(ids), ids.dtype.itemsize
    mat = ids.view(np.uint8).reshape(n, width)
    under = mat == ord("_")
    last = width - 1 - np.argmax(under[:, ::-1], axis=1)
    bad = np.flatnonzero(~under.any(axis=1))
    if len(bad):
        raise InputError(f"not a passage id of the form qid_mask_perm: {ids[bad[0]].decode()!r}",
                         file=path, record=int(bad[0]) + 1, field="id")
    keys = np.where(np.arange(width) < last[:, None], mat, 0).astype(np.uint8).view(f"S{width}").ravel()
    change = np.ones(n, dtype=bool)
    change[1:] = keys[1:] != keys[:-1]
    run_starts = np.flatnonzero(change)
    if len(np.unique(keys[run_starts])) == len(run_starts):
        # Each group is one contiguous run (as `inferqa build` writes the corpus).
        group_of = np.cumsum(change) - 1
        ptr = np.append(run_starts, n).astype(np.int64)
        return Groups(keys=keys[run_starts], pids=ids, ptr=ptr, group_of=group_of, first=run_starts)
    uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
    by_first = np.argsort(first, kind="stable")
    rank = np.empty_like(by_first)
    rank[by_first] = np.arange(len(by_first))
    group_of = rank[inverse.ravel()]
    ptr = np.zeros(len(uniq) + 1, dtype=np.int64)
    np.cumsum(np.bincount(group_of, minlength=len(uniq)), out=ptr[1:])
    return Groups(keys=uniq[by_first], pids=ids[np.argsort(group_of, kind="stable")], ptr=ptr, group_of=group_of,
                  first=first[by_first])


def group_first_position(ids: np.ndarray) -> np.ndarray:
    """For each passage, the corpus position of the first passage of its (question, subset) group."""
    g = group_by_subset(ids)
    return g.first[g.group_of]


# -- by unit: passages as sets of clue units ----------------------------------------------
class UnitSets:
    """Distinct unit texts, distinct unit multisets (sorted tuples of unit ids), each passage's:
    a multiset, so a unit text repeated within one passage weighs twice in a mean (MaxSim, in
    colbert, ignores the repeat)."""

    def __init__(self, n_passages: int):
        self._unit: dict[str, int] = {}  # numbered in order of first appearance, as are the sets
        self._set: dict[tuple[int, ...], int] = {}
        self.set_of = np.empty(n_passages, dtype=np.int64)

    @property
    def texts(self) -> list[str]:
        return list(self._unit)

    @property
    def sets(self) -> list[tuple[int, ...]]:
        return list(self._set)

    def unit(self, text: str) -> int:
        return self._unit.setdefault(text, len(self._unit))

    def add(self, passage: int, units: list[int]) -> None:
        self.set_of[passage] = self._set.setdefault(tuple(sorted(units)), len(self._set))

    def csr(self) -> tuple[np.ndarray, np.ndarray]:
        """(ptr, members): set s holds units members[ptr[s]:ptr[s + 1]]."""
        sets = self.sets
        ptr = np.zeros(len(sets) + 1, dtype=np.int64)
        np.cumsum([len(key) for key in sets], out=ptr[1:])
        members = np.fromiter((u for key in sets for u in key), dtype=np.int64, count=int(ptr[-1]))
        return ptr, members


def hint_unit_sets(bench: "Benchmark", ids: np.ndarray) -> UnitSets:
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


# -- by hint text: the hint-group plugins ---------------------------------------------------
def _hints_of(bench: "Benchmark", pid: str) -> list[str]:
    try:
        return bench.hints_of(pid)
    except (KeyError, ValueError) as exc:
        raise InputError(f"run passage {pid!r} is not in the benchmark ({exc})", file=bench.path,
                         field="pid") from None


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


@plugin("hint-group", "set", help="passages with the same set of hint texts (every ordering of one subset)")
def set_groups(bench: "Benchmark") -> GroupKey:
    return lambda pid: frozenset(_hints_of(bench, pid))


@plugin("hint-group", "linked", help="passages joined, directly or through others, by a shared hint text",
        suggest_for=("family", "families"))
def linked_groups(bench: "Benchmark") -> GroupKey:
    root = _linked_roots(bench)
    return lambda pid: root(_hints_of(bench, pid)[0])


@plugin("hint-group", "question", help="passages of one question (the question part of the passage id, as QUIT's "
        "ids name it)", suggest_for=("questions", "qid"))
def question_groups(bench: "Benchmark") -> GroupKey:
    def question(pid: str) -> str:
        qid = question_of(pid)
        if qid is None or qid not in bench.questions:
            raise InputError(f"run passage {pid!r} is not in the benchmark", file=bench.path, field="pid")
        return qid

    return question


def window_groups(ranked: Sequence[tuple[str, float]], depth: int, group: GroupKey) -> list[list[int]]:
    """The first `depth` groups of `ranked` in its order, each as the indices of its passages
    in `ranked` (the first one is the group's representative): a distinct reranking window."""
    members: dict[Hashable, list[int]] = {}
    for i, (pid, _) in enumerate(ranked):
        key = group(pid)
        if key in members:
            members[key].append(i)
        elif len(members) < depth:
            members[key] = [i]
    return list(members.values())


def all_hints_passage(bench: "Benchmark", qid: str) -> str:
    """The passage of question `qid` holding every hint it keeps, in their order: the whole
    evidence a question window's representative stands for (`representative="all-hints"`)."""
    q = bench.questions[qid]
    dropped = set(q.metadata.get("dropped_hints") or ())
    kept = [i for i in range(len(q.hints)) if i not in dropped]
    return passage_id(qid, kept, len(q.hints), bench.mask_bits or LEFT_TO_RIGHT)


def groupings() -> list[str]:
    return registry.available("hint-group")


def check_grouping(by: object) -> str:
    """`by` if it names a hint-group plugin, else an InputError listing them."""
    registry.get("hint-group", str(by))
    return str(by)


def hint_group_key(bench: "Benchmark", by: str = HINT_GROUPING) -> GroupKey:
    """A passage id → its hint-group (`by`: a hint-group plugin, `inferqa plugins hint-group`);
    each passage looked up once."""
    return functools.cache(registry.create("hint-group", check_grouping(by))(bench))
