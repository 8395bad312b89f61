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
from ..records import parse_passage_id

_ID = re.compile(rb'"id"\s*:\s*"([^"\\]*)"')
_CHUNK = 1 << 26


def corpus_ids(bench: Benchmark) -> np.ndarray:
    """All passage ids of corpus.jsonl, in file order, as an `S` array.

    A regex pass over large blocks (one match per line expected); blocks where that does not
    hold are parsed line by line with json.
    """
    path = bench.path / "corpus.jsonl"
    if not path.exists():
        raise InputError("corpus.jsonl is missing", file=bench.path)
    parts: list[list[bytes]] = []
    with open(path, "rb") as fh:
        rest = b""
        while True:
            block = fh.read(_CHUNK)
            if not block:
                break
            block = rest + block
            cut = block.rfind(b"\n") + 1
            block, rest = block[:cut], block[cut:]
            parts.append(_ids_of_block(block, path))
        if rest.strip():
            parts.append(_ids_of_block(rest + b"\n", path))
    ids = [i for p in parts for i in p]
    if not ids:
        raise InputError("corpus.jsonl holds no passages", file=path)
    return np.array(ids, dtype=f"S{max(map(len, ids))}")


def _ids_of_block(block: bytes, path: Path) -> list[bytes]:
    found = _ID.findall(block)
    if len(found) == block.count(b"\n"):  # the usual case: one flat record per line
        return found
    out = []
    for line in block.split(b"\n"):
        if not line.strip():
            continue
        try:
            out.append(str(json.loads(line)["id"]).encode())
        except (json.JSONDecodeError, KeyError, TypeError):
            raise InputError("corpus line without a passage id", file=path, field="id") from None
    return out


@dataclass
class Groups:
    """Passages grouped by (question, hint subset), groups in order of first appearance.

    `pids[ptr[g]:ptr[g + 1]]` are group g's passages in corpus order; `keys[g]` is
    `b"qid_subset"`; `multiplicity = diff(ptr)`.
    """

    keys: list[bytes]
    pids: np.ndarray
    ptr: np.ndarray

    @property
    def multiplicity(self) -> np.ndarray:
        return np.diff(self.ptr)


def group_by_subset(ids: np.ndarray, path: Path | None = None) -> Groups:
    index: dict[bytes, int] = {}
    group_of = np.empty(len(ids), dtype=np.int64)
    for i, pid in enumerate(ids.tolist()):
        key = pid[: pid.rfind(b"_")]
        g = index.get(key)
        if g is None:
            g = index[key] = len(index)
            try:
                parse_passage_id(pid.decode())
            except ValueError as exc:
                raise InputError(str(exc), file=path, record=i + 1, field="id") from None
        group_of[i] = g
    order = np.argsort(group_of, kind="stable")
    counts = np.bincount(group_of, minlength=len(index))
    ptr = np.zeros(len(index) + 1, dtype=np.int64)
    np.cumsum(counts, out=ptr[1:])
    return Groups(keys=list(index), pids=ids[order], ptr=ptr)


def group_first_position(ids: np.ndarray) -> np.ndarray:
    """For each passage, the corpus position of the first passage of its (question, subset) group."""
    first: dict[bytes, int] = {}
    out = np.empty(len(ids), dtype=np.int64)
    for i, pid in enumerate(ids.tolist()):
        key = pid[: pid.rfind(b"_")]
        out[i] = first.setdefault(key, i)
    return out
