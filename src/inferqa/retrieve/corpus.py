"""Fast passes over a benchmark's corpus: passage ids as a numpy byte-string array, and the
grouping of passages into (question, hint subset) groups that bag-of-words scorers share."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..benchmark import Benchmark
from ..errors import InputError
from ..io import atomic_open

_ID = re.compile(rb'"id"\s*:\s*"([^"\\]*)"')
_CHUNK = 1 << 26


def corpus_ids(bench: Benchmark) -> np.ndarray:
    """All passage ids of corpus.jsonl, in file order, as an `S` array.

    A regex pass over large blocks (one match per line expected); a block where that
    does not hold is parsed line by line with json.
    """
    path = bench.path / "corpus.jsonl"
    if not path.exists():
        raise InputError("corpus.jsonl is missing", file=bench.path)
    if path.stat().st_size == 0:
        raise InputError("corpus.jsonl holds no passages", file=path)
    parts: list[np.ndarray] = []
    carry = b""  # the unfinished last line of the previous block
    with open(path, "rb") as fh:
        while block := fh.read(_CHUNK):
            first = block.find(b"\n") + 1
            if first == 0:
                carry += block
                continue
            parts.append(_ids_of_block(memoryview(carry + block[:first]), path))
            cut = block.rfind(b"\n") + 1
            with memoryview(block)[first:cut] as view:
                if len(view):
                    parts.append(_ids_of_block(view, path))
            carry = block[cut:]
        if carry.strip():
            parts.append(_ids_of_block(memoryview(carry + b"\n"), path))
    parts = [p for p in parts if len(p)]
    if not parts:
        raise InputError("corpus.jsonl holds no passages", file=path)
    return np.concatenate(parts)


def _ids_of_block(block: memoryview, path: Path) -> np.ndarray:
    found = _ID.findall(block)
    lines = int(np.count_nonzero(np.frombuffer(block, np.uint8) == 10)) + (block[-1:] != b"\n")
    if len(found) != lines:
        found = []
        for line in bytes(block).split(b"\n"):
            if not line.strip():
                continue
            try:
                found.append(str(json.loads(line)["id"]).encode())
            except (json.JSONDecodeError, KeyError, TypeError):
                raise InputError("corpus line without a passage id", file=path, field="id") from None
    return np.array(found, dtype=f"S{max(map(len, found))}") if found else np.array([], dtype="S1")


@dataclass
class Groups:
    """Passages grouped by (question, hint subset), groups in order of first appearance.

    `pids[ptr[g]:ptr[g + 1]]` are group g's passages in corpus order; `keys[g]` is
    `b"qid_mask"`; `group_of[i]` is the group of corpus position i; `first[g]` the corpus
    position of group g's first passage.
    """

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
        out = Groups(keys=keys[run_starts], pids=ids, ptr=ptr, group_of=group_of, first=run_starts)
    else:
        uniq, first, inverse = np.unique(keys, return_index=True, return_inverse=True)
        by_first = np.argsort(first, kind="stable")
        rank = np.empty_like(by_first)
        rank[by_first] = np.arange(len(by_first))
        group_of = rank[inverse.ravel()]
        order = np.argsort(group_of, kind="stable")
        ptr = np.zeros(len(uniq) + 1, dtype=np.int64)
        np.cumsum(np.bincount(group_of, minlength=len(uniq)), out=ptr[1:])
        out = Groups(keys=uniq[by_first], pids=ids[order], ptr=ptr, group_of=group_of, first=first[by_first])
    return out


def group_first_position(ids: np.ndarray) -> np.ndarray:
    """For each passage, the corpus position of the first passage of its (question, subset) group."""
    g = group_by_subset(ids)
    return g.first[g.group_of]


def keep_corpus_ids(out_dir: Path, ids: np.ndarray, stale: tuple[str, ...]) -> None:
    """Make `out_dir/pids.npy` list `ids`. When it listed another corpus (or none), the files
    named in `stale`, built for that corpus, are deleted first, so a resumed build starts over."""
    pid_file = out_dir / "pids.npy"
    if pid_file.exists() and np.array_equal(np.load(pid_file, mmap_mode="r"), ids):
        return
    for name in stale:
        (out_dir / name).unlink(missing_ok=True)
    with atomic_open(pid_file, "wb", encoding=None) as fh:
        np.save(fh, ids)

