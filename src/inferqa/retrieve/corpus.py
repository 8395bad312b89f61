"""Index files that follow the corpus (the ids come from `inferqa.formats.corpus_ids`; the
hint groups of the passages are `inferqa.hints`')."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..io import atomic_open


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

