"""`inferqa reproduce`: the QUIT paper's tables from its released files, cell by cell.

`reproduce(results_dir)` returns every table the authors' `results/**/*.py` scripts print
that the files present allow (`scripts.tables`), and the files that were absent; the command
is `inferqa.reproduce.stage.reproduce`. The release's readers load on first use (they import
the evaluation package), so the command line's start-up stays light.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import InputError

if TYPE_CHECKING:
    from .scripts import Grid

# A synthetic results/ tree (scripts/reproduce_example.py wrote it) for `inferqa reproduce --example`.
EXAMPLE = Path(__file__).with_name("example") / "results"


def reproduce(results_dir: str | Path) -> tuple[list[Grid], list[str]]:
    """(every table the files allow, the files looked for and absent); a folder holding none
    of them is an InputError (the wrong folder, most likely)."""
    from .release import INDEX, Release, stored_name
    from .scripts import tables

    release = Release(results_dir)
    grids = list(tables(release))
    if not grids:
        raise InputError(f"no file of the QUIT release's results/ tree here (looked for {len(release.absent)}, "
                         f"{stored_name(INDEX)} among them)", file=release.root)
    return grids, release.absent


@dataclass(frozen=True)
class Reproduction:
    """What `inferqa reproduce` computed: the tables, the files absent, where they were written."""

    grids: list[Grid]
    absent: list[str]
    out: Path | None

    def notes(self) -> list[str]:
        """The files absent (their rows skipped), then the count of tables and rows and where they went."""
        absent = [f"absent, their rows skipped ({len(self.absent)} files):", *(f"  {n}" for n in self.absent)]
        return [*(absent if self.absent else []), f"{len(self.grids)} tables, {sum(len(g.rows) for g in self.grids)} "
                "rows" + (f"; written to {self.out}" if self.out else "")]
