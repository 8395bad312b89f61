"""`inferqa reproduce`: the QUIT paper's tables from its released files, cell by cell.

`reproduce(results_dir)` returns every table the authors' `results/**/*.py` scripts print
that the files present allow (`scripts.tables`), and the files that were absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..stages import Settings
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


def reproduce_stage(s: Settings) -> Reproduction:
    """The entry point of `stages.reproduce.REPRODUCE`: RESULTS_DIR or the shipped example."""
    from ..io import check_output
    from .output import write

    if s.example == (s.results_dir is not None):
        raise InputError("give RESULTS_DIR or --example, not both" if s.example else "missing RESULTS_DIR (or --example)")
    if s.out is not None:
        check_output(s.out, kind="dir")
    grids, absent = reproduce(EXAMPLE if s.example else s.results_dir)
    if s.out is not None:
        write(grids, s.out, absent)
    return Reproduction(grids, absent, s.out)


__all__ = ["EXAMPLE", "Grid", "Release", "Reproduction", "reproduce"]
