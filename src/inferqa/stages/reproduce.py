"""`inferqa reproduce`: the QUIT paper's tables from the released files, cell by cell."""

from __future__ import annotations



from pathlib import Path

from . import Option, Stage

REPRODUCE = Stage(
    "reproduce", "Every table the authors' results/**/*.py scripts print, from the files present.",
    entry="inferqa.reproduce:reproduce_stage",
    output="folder",
    options=(
        Option("results_dir", Path, None, "the release's results/ folder (or the folder holding it), e.g. from "
               "`inferqa download quit --what results`", positional=True, metavar="RESULTS_DIR"),
        Option("example", bool, False, "reproduce the small synthetic tree shipped with inferqa instead "
               "(offline; docs/paper.md#reproducing-the-paper)"),
        Option("out", Path, None, "also write each table as md, csv and tex there, with cells.jsonl and absent.txt",
               flags=("--out", "-o")),
    ))
