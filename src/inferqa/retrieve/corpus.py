"""The grouping of passages into (question, hint subset) groups that bag-of-words scorers
share (the ids come from `inferqa.formats.corpus_ids`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import InputError
from ..io import atomic_open

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

