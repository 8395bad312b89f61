"""How more than one command prints: tables (one renderer, `inferqa.tabular`, in the format of
`--format`, boxed tables fitted to the terminal width), JSON (every float to one precision, NaN
as null) and the answers summary table (kept here so that no command module imports another)."""

from __future__ import annotations

import json
import math
from typing import Any, Sequence

import typer

from ..tabular import MISSING, TextTable, render

# Significant digits: far below any score's meaning, far above binary float noise
# (0.5700000000000001 -> 0.57), and a p-value of 1e-12 keeps its size.
JSON_DIGITS = 10


def rounded(obj: Any) -> Any:
    """`obj` with every float rounded to JSON_DIGITS significant digits and NaN/inf as None."""
    if isinstance(obj, float):
        return float(f"{obj:.{JSON_DIGITS}g}") if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k: rounded(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [rounded(v) for v in obj]
    return obj


def echo_json(obj: Any) -> None:
    typer.echo(json.dumps(rounded(obj), indent=2, ensure_ascii=False))


def echo_lines(lines: Sequence[str]) -> None:
    for line in lines:
        typer.echo(line)


def table_width() -> int:
    """The terminal's width in columns: COLUMNS where set, else the terminal's, else 80 (a pipe, a log)."""
    import shutil

    return shutil.get_terminal_size((80, 24)).columns


def render_table(table: TextTable, fmt: str, width: int | None = None) -> str:
    """`table` as `fmt` (table | md | csv | tex); a boxed table fits `width` (default: the terminal's)."""
    return render(table, fmt, table_width() if width is None else width)


def print_tables(tables: Sequence[TextTable], fmt: str, payload: Any = None) -> None:
    """Print `tables` as `fmt` (a blank line between two), or `payload` as JSON for `json`."""
    if fmt == "json":
        echo_json(payload)
        return
    typer.echo("\n".join(render_table(t, fmt) for t in tables), nl=False)


def print_summary(rows: list[dict], metrics: tuple[str, ...], title: str, fmt: str = "table") -> None:
    """The answers' scores per strategy and k, in percent (JSON: fractions)."""
    from ..read import summarize

    summary = summarize(rows, metrics)
    cells = [(s["strategy"], str(s["k"]), str(s["n"]),
              *[(MISSING if s[m] is None else f"{100 * s[m]:.2f}") for m in metrics]) for s in summary]
    print_tables([TextTable(title, ("strategy", "k", "n", *metrics), tuple(cells), 1)], fmt, summary)
