"""`inferqa reproduce`: the QUIT paper's tables from the released files, cell by cell."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Optional

import typer

from .app import app
from .flags import format_flag, chosen_format
from .output import print_tables


@app.command("reproduce")
def reproduce_cmd(
    results_dir: Optional[Path] = typer.Argument(None, help="The release's results/ folder (or the folder "
                                                 "holding it), e.g. from `inferqa download quit --what results`."),
    example: bool = typer.Option(False, "--example", help="Reproduce the small synthetic tree shipped with "
                                 "inferqa instead (offline; docs/paper.md#reproducing-the-paper)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Also write each table as md, csv and tex "
                                       "there, with cells.jsonl and absent.txt."),
    table_format: str = format_flag("md"),
    as_json: bool = typer.Option(False, "--json", help="The same as --format json: one JSON line per table cell: "
                                 "table, row, column, value (and published)."),
) -> None:
    """Every table the authors' results/**/*.py scripts print, from the files present."""
    from ..io import check_output
    from ..errors import InputError
    from ..reproduce import EXAMPLE, reproduce
    from ..reproduce.output import cells, text_table, to_table, write

    fmt = chosen_format(table_format, as_json, default="md")
    if example == (results_dir is not None):
        raise InputError("give RESULTS_DIR or --example, not both" if example else "missing RESULTS_DIR (or --example)")
    if example:
        results_dir = EXAMPLE
    if out is not None:
        check_output(out, kind="dir")
    grids, absent = reproduce(results_dir)
    if out is not None:
        write(grids, out, absent)
    if fmt == "json":
        for cell in cells(grids):
            typer.echo(json.dumps(cell, ensure_ascii=False))
    elif fmt == "table":
        print_tables([text_table(g) for g in grids], fmt)
    else:  # as the files of --out hold them
        typer.echo("\n".join(to_table(g).render(fmt) for g in grids), nl=False)
    if absent:
        print(f"absent, their rows skipped ({len(absent)} files):", file=sys.stderr)
        print("".join(f"  {name}\n" for name in absent), end="", file=sys.stderr)
    print(f"{len(grids)} tables, {sum(len(g.rows) for g in grids)} rows" + (f"; written to {out}" if out else ""),
          file=sys.stderr)
