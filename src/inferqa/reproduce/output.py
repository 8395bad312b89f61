"""The reproduced tables as cells (one JSON object each) and as md/csv/tex files."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Iterable, Iterator

from ..experiments.tables import Table
from ..io import atomic_open
from .published import PUBLISHED
from .scripts import Grid

FORMATS = ("md", "csv", "tex")
PAPER = " (paper)"


def cells(grids: Iterable[Grid]) -> Iterator[dict]:
    """`{"table", "row", "column", "value"}`, plus `"published"` where the paper gives the figure."""
    for g in grids:
        for row, values in g.rows:
            for column, value in zip(g.columns, values):
                cell = {"table": g.table, "row": row, "column": column, "value": value}
                if (g.table, row, column) in PUBLISHED:
                    cell["published"] = PUBLISHED[g.table, row, column]
                yield cell


def to_table(g: Grid) -> Table:
    """Scores in percent, a "(paper)" column beside each column the paper has a figure of."""
    kinds = g.kinds or ("score",) * len(g.columns)
    cols, col_kinds, picks = [g.header], ["text"], []
    for c, (name, kind) in enumerate(zip(g.columns, kinds)):
        cols.append(name)
        col_kinds.append(kind)
        picks.append((c, None))
        if any((g.table, row, name) in PUBLISHED for row, _ in g.rows):
            cols.append(name + PAPER)
            col_kinds.append(kind)
            picks.append((c, name))
    rows = tuple((row, *(PUBLISHED.get((g.table, row, paper)) if paper else values[c] for c, paper in picks))
                 for row, values in g.rows)
    unit = "percent" if "score" in kinds else "counts"
    title = f"{g.table} ({unit}; results/{g.table.split(':')[0]}.py)"  # the script that prints it
    return Table(g.table, title, tuple(cols), rows, 1, kinds=tuple(col_kinds))


def text_table(g: Grid):
    """`to_table(g)` for a boxed table: each column and its "(paper)" column stay in one block."""
    table = to_table(g)
    groups = []
    for name in table.columns[1:]:
        if name.endswith(PAPER) and groups:
            groups[-1] += 1
        else:
            groups.append(1)
    return table.text_table(tuple(groups))


def file_stem(table: str) -> str:
    script, _, title = table.partition(":")
    return f"{script}-{title}" if title else script


def write(grids: list[Grid], out: Path, absent: list[str]) -> list[Path]:
    """`<script>[-<title>].{md,csv,tex}` per table, `cells.jsonl` and `absent.txt`, each atomically."""
    written = []
    for g in grids:
        table = to_table(g)
        for fmt in FORMATS:
            path = out / f"{file_stem(g.table)}.{fmt}"
            with atomic_open(path) as fh:
                fh.write(table.render(fmt))
            written.append(path)
    with atomic_open(out / "cells.jsonl") as fh:
        for cell in cells(grids):
            fh.write(json.dumps(cell, ensure_ascii=False) + "\n")
    with atomic_open(out / "absent.txt") as fh:
        fh.write("".join(f"{name}\n" for name in absent))
    return [*written, out / "cells.jsonl", out / "absent.txt"]
