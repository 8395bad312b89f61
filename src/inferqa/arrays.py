"""Row blocks of a 2-D `.npy` file read and written with plain file I/O.

A memory map is convenient, but every page it touches counts in the process's resident
set until the kernel reclaims it: one pass of exact search over 2.4M × 384 float32
(3.7 GB) leaves the whole file resident. Reading a block into a buffer keeps the
process's memory at one block; the pages stay in the page cache, which is not the
process's.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class NpyLayout:
    shape: tuple[int, ...]
    dtype: np.dtype
    offset: int  # bytes before the first row

    @property
    def row_bytes(self) -> int:
        return int(np.prod(self.shape[1:], dtype=np.int64)) * self.dtype.itemsize


def npy_layout(path: str | os.PathLike) -> NpyLayout:
    with open(path, "rb") as fh:
        version = np.lib.format.read_magic(fh)
        read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
        shape, fortran, dtype = read_header(fh)
        if fortran and len(shape) > 1:
            raise ValueError(f"{path}: Fortran-ordered arrays are not read by rows")
        return NpyLayout(tuple(shape), np.dtype(dtype), fh.tell())


def read_npy_rows(path: str | os.PathLike, start: int, stop: int, layout: NpyLayout | None = None) -> np.ndarray:
    """Rows `start:stop` of the `.npy` at `path`, as a fresh C-contiguous array."""
    lay = layout or npy_layout(path)
    start, stop = max(0, start), min(stop, lay.shape[0])
    n = max(0, stop - start)
    with open(path, "rb") as fh:
        fh.seek(lay.offset + start * lay.row_bytes)
        flat = np.fromfile(fh, dtype=lay.dtype, count=n * lay.row_bytes // lay.dtype.itemsize)
    return flat.reshape((n, *lay.shape[1:]))


def write_npy_rows(path: str | os.PathLike, start: int, rows: np.ndarray, layout: NpyLayout | None = None) -> None:
    """Write `rows` at row `start` of an existing `.npy` (made with `open_memmap(mode="w+")`)."""
    lay = layout or npy_layout(path)
    rows = np.ascontiguousarray(rows, dtype=lay.dtype)
    if rows.shape[1:] != lay.shape[1:] or start + len(rows) > lay.shape[0]:
        raise ValueError(f"rows of shape {rows.shape} do not fit at row {start} of {lay.shape}")
    with open(path, "r+b") as fh:
        fh.seek(lay.offset + start * lay.row_bytes)
        fh.write(rows.tobytes())
