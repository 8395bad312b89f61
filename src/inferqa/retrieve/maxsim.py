"""Exact MaxSim over ragged token sets stored on disk, and exact top-k with ties by position.

A token store is `tokens.f16` (all texts' token vectors, float16 rows, memory-mapped) and
`offsets.npy` (text i owns rows offsets[i]:offsets[i+1]). It is written chunk by chunk and
resumes after an interruption (`progress.json` counts the texts and rows already on disk).

MaxSim(q, d) = sum over query tokens of the best inner product with any token of d.
Queries are padded with zero vectors to one length: a zero row adds exactly 0.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Callable, Iterable, Iterator

import numpy as np

from ..errors import InputError
from ..io import atomic_open, read_json, write_json
from ..progress import counter
from .ranking import top_k_positions

TOKENS, OFFSETS, PROGRESS = "tokens.f16", "offsets.npy", "progress.json"
CHUNK_SIZE = 1024  # texts encoded between two checkpoints (colbert's `chunk_size`)
LENGTHS_PARTIAL = "lengths.partial.i32"
# Bytes of float32 work space a scoring step may take (similarities of one block).
WORK_BYTES = 1 << 27


def write_token_store(out_dir: Path, texts: Iterable[str], n: int, encode: Callable[[list[str]], list[np.ndarray]],
                      *, chunk_size: int = CHUNK_SIZE, desc: str = "encoding", show_progress: bool = True) -> dict:
    """Encode `n` texts in chunks into `out_dir`; resumes from `progress.json`."""
    tokens, lengths, progress = out_dir / TOKENS, out_dir / LENGTHS_PARTIAL, out_dir / PROGRESS
    if (out_dir / OFFSETS).exists() and not progress.exists() and read_json(out_dir / "store.json")["texts"] == n:
        return store_facts(out_dir)
    state = read_json(progress) if progress.exists() else None
    if state is None or state.get("n") != n:
        state = {"n": n, "done": 0, "rows": 0, "dim": None}
        for f in (tokens, lengths, out_dir / OFFSETS):
            f.unlink(missing_ok=True)
    done, rows, dim = state["done"], state["rows"], state["dim"]
    if dim is not None:  # drop anything written after the last recorded chunk
        os.truncate(tokens, rows * dim * 2)
        os.truncate(lengths, done * 4)
    rest = itertools.islice(iter(texts), done, None)
    with counter(n, desc, "text", show_progress, initial=done) as bar, \
            open(tokens, "ab") as tok_fh, open(lengths, "ab") as len_fh:
        while chunk := list(itertools.islice(rest, chunk_size)):
            vecs = encode(chunk)
            if any(len(v) == 0 for v in vecs):
                raise InputError("a text encoded to no token vectors (empty text?)", field="text")
            dim = dim or int(vecs[0].shape[1])
            tok_fh.write(np.concatenate(vecs).astype(np.float16).tobytes())
            len_fh.write(np.array([len(v) for v in vecs], dtype=np.int32).tobytes())
            tok_fh.flush()
            len_fh.flush()
            done, rows = done + len(chunk), rows + sum(len(v) for v in vecs)
            write_json(progress, {"n": n, "done": done, "rows": rows, "dim": dim})
            bar.update(len(chunk))
    if done != n:
        raise InputError(f"expected {n} texts to encode, got {done} (input changed while encoding?)")
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.fromfile(lengths, dtype=np.int32), out=offsets[1:])
    write_json(out_dir / "store.json", {"dim": dim, "texts": n, "rows": int(offsets[-1])})
    with atomic_open(out_dir / OFFSETS, "wb", encoding=None) as fh:  # written last: the store is finished
        np.save(fh, offsets)
    lengths.unlink()
    progress.unlink()
    return store_facts(out_dir)


def store_facts(out_dir: Path) -> dict:
    facts = read_json(out_dir / "store.json")
    return {"texts": facts["texts"], "token_rows": facts["rows"], "dim": facts["dim"],
            "token_bytes": (out_dir / TOKENS).stat().st_size}


def open_token_store(out_dir: Path) -> tuple[np.ndarray, np.ndarray]:
    """(tokens memory map [rows, dim] float16, offsets [texts + 1])."""
    facts = read_json(out_dir / "store.json")
    shape = (int(facts["rows"]), int(facts["dim"]))
    return np.memmap(out_dir / TOKENS, dtype=np.float16, mode="r", shape=shape), np.load(out_dir / OFFSETS)


def pad_queries(queries: list[np.ndarray]) -> np.ndarray:
    """[n, Lmax, dim] float32, zero rows after each query's own tokens."""
    length = max(len(q) for q in queries)
    out = np.zeros((len(queries), length, queries[0].shape[1]), dtype=np.float32)
    for i, q in enumerate(queries):
        out[i, :len(q)] = q
    return out


def _text_blocks(offsets: np.ndarray, row_budget: int) -> Iterator[tuple[int, int]]:
    """Ranges of texts [a, b) holding about `row_budget` token rows (at least one text)."""
    n, a = len(offsets) - 1, 0
    while a < n:
        b = int(np.searchsorted(offsets, offsets[a] + row_budget, side="right")) - 1
        b = min(max(b, a + 1), n)
        yield a, b
        a = b


def _blocks_of_maxima(tokens: np.ndarray, offsets: np.ndarray,
                      queries: np.ndarray) -> Iterator[tuple[int, int, np.ndarray]]:
    """(a, b, maxima of texts a..b as [b - a, n_queries, L]) block by block."""
    nq, length, dim = queries.shape
    flat = queries.reshape(nq * length, dim).T
    for a, b in _text_blocks(offsets, max(1, WORK_BYTES // (4 * nq * length))):
        block = np.asarray(tokens[offsets[a]:offsets[b]], dtype=np.float32)
        yield a, b, np.maximum.reduceat(block @ flat, offsets[a:b] - offsets[a], axis=0).reshape(b - a, nq, length)


def token_maxima(tokens: np.ndarray, offsets: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """Per text and query token, the best inner product with the text's tokens:
    [texts, n_queries, L] float32 (its sum over the last axis is MaxSim)."""
    out = np.empty((len(offsets) - 1, *queries.shape[:2]), dtype=np.float32)
    for a, b, maxima in _blocks_of_maxima(tokens, offsets, queries):
        out[a:b] = maxima
    return out


def maxsim_scores(tokens: np.ndarray, offsets: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """MaxSim of every stored text against every query: [texts, n_queries]."""
    out = np.empty((len(offsets) - 1, len(queries)), dtype=np.float32)
    for a, b, maxima in _blocks_of_maxima(tokens, offsets, queries):
        out[a:b] = maxima.sum(axis=2)
    return out


def set_maxsim_scores(unit_maxima: np.ndarray, set_ptr: np.ndarray, set_units: np.ndarray) -> np.ndarray:
    """MaxSim of token *sets* that are unions of units: set g = units set_units[set_ptr[g]:set_ptr[g+1]],
    scored from `unit_maxima` (`token_maxima` of the units: a union's max is the max of their maxima)."""
    n_sets = len(set_ptr) - 1
    _, nq, length = unit_maxima.shape
    out = np.empty((n_sets, nq), dtype=np.float32)
    step = max(1, WORK_BYTES // (4 * nq * length * max(1, int(np.diff(set_ptr).max(initial=1)))))
    for a in range(0, n_sets, step):
        b = min(a + step, n_sets)
        gathered = unit_maxima[set_units[set_ptr[a]:set_ptr[b]]]
        out[a:b] = np.maximum.reduceat(gathered, set_ptr[a:b] - set_ptr[a], axis=0).sum(axis=2)
    return out


def top_k(scores: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
    """Per column of `scores` [items, n_queries]: the k best items, by score descending and
    position ascending among equal scores (exact: every item tied at the cut is considered)."""
    idx = np.empty((scores.shape[1], min(k, len(scores))), dtype=np.int64)
    for j in range(scores.shape[1]):
        idx[j] = top_k_positions(scores[:, j], k)
    return idx, np.take_along_axis(scores.T, idx, axis=1)
