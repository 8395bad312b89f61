"""`inferqa reproduce` (the function of `inferqa.reproduce.stage`): its printing."""

from __future__ import annotations

import json
from typing import Any

import typer

from ..reproduce.stage import reproduce
from .output import echo_lines, print_tables
from .stage_command import stage_command


def show(r: Any, _s: Any, fmt: str | None) -> None:
    from ..reproduce.output import cells, text_table, to_table

    if fmt == "json":  # one JSON line per table cell: table, row, column, value (and published)
        for cell in cells(r.grids):
            typer.echo(json.dumps(cell, ensure_ascii=False))
    elif fmt == "table":
        print_tables([text_table(g) for g in r.grids], fmt)
    else:  # as the files of --out hold them
        typer.echo("\n".join(to_table(g).render(fmt) for g in r.grids), nl=False)
    echo_lines(r.notes(), err=True)


stage_command(reproduce, show, tables="md")
