"""`inferqa reproduce`: the QUIT paper's tables from its released files, cell by cell.

`reproduce(results_dir)` returns every table the authors' `results/**/*.py` scripts print
that the files present allow (`scripts.tables`), and the files that were absent.
"""

from __future__ import annotations

from pathlib import Path

from ..errors import InputError
from .release import INDEX, Release, stored_name
from .scripts import Grid, tables

# A synthetic results/ tree (scripts/reproduce_example.py wrote it) for `inferqa reproduce --example`.
EXAMPLE = Path(__file__).with_name("example") / "results"


def reproduce(results_dir: str | Path) -> tuple[list[Grid], list[str]]:
    """(every table the files allow, the files looked for and absent); a folder holding none
    of them is an InputError (the wrong folder, most likely)."""
    release = Release(results_dir)
    grids = list(tables(release))
    if not grids:
        raise InputError(f"no file of the QUIT release's results/ tree here (looked for {len(release.absent)}, "
                         f"{stored_name(INDEX)} among them)", file=release.root)
    return grids, release.absent


__all__ = ["EXAMPLE", "Grid", "Release", "reproduce"]
