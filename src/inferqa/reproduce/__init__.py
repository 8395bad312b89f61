"""`inferqa reproduce`: the QUIT paper's tables from its released files, cell by cell.

`reproduce(results_dir)` returns every table the authors' `results/**/*.py` scripts print
that the files present allow (`scripts.tables`), and the files that were absent.
"""

from __future__ import annotations

from pathlib import Path

from .release import Release
from .scripts import Grid, tables


def reproduce(results_dir: str | Path) -> tuple[list[Grid], list[str]]:
    release = Release(results_dir)
    grids = list(tables(release))
    return grids, release.absent


__all__ = ["Grid", "Release", "reproduce"]
