"""`inferqa reproduce`: the QUIT paper's tables from the released files, cell by cell."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from ..errors import InputError
from ..parameters import OVERWRITE
from ..stage import Opt, stage
from . import EXAMPLE, Reproduction, reproduce as tables_of


@stage("reproduce", output="folder")
def reproduce(results_dir: Annotated["Path | None", Opt("the release's results/ folder (or the folder holding it), "
                                                        "e.g. from `inferqa download quit --what results`",
                                                        metavar="RESULTS_DIR")] = None, *,
              example: Annotated[bool, Opt("reproduce the small synthetic tree shipped with inferqa instead "
                                           "(offline; docs/paper.md#reproducing-the-paper)")] = False,
              out: Annotated["Path | None", Opt("also write each table as md, csv and tex there, with cells.jsonl "
                                                "and absent.txt", flags=("--out", "-o"))] = None,
              overwrite: Annotated[bool, OVERWRITE] = False) -> Reproduction:
    """Every table the authors' results/**/*.py scripts print, from the files present."""
    from ..io import check_output
    from .output import write

    if example == (results_dir is not None):
        raise InputError("give RESULTS_DIR or --example, not both" if example else "missing RESULTS_DIR (or --example)")
    if out is not None:
        check_output(out, kind="dir")
    grids, absent = tables_of(EXAMPLE if example else results_dir)
    if out is not None:
        write(grids, out, absent)
    return Reproduction(grids, absent, out)
