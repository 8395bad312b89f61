"""How more than one command prints: --format and --json, tables (one renderer, `inferqa.tabular`,
boxed tables fitted to the terminal width), JSON (every float to one precision, NaN as null),
percentages and the answers summary table (kept here so that no command module imports another)."""

from __future__ import annotations

import json
import math
import shutil
from typing import Any, Sequence

import typer

from ..errors import InputError
from ..tabular import TextTable, percent, render
from ..text import did_you_mean

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


def echo_lines(lines: Sequence[str], err: bool = False) -> None:
    for line in lines:
        typer.echo(line, err=err)


def print_tables(tables: Sequence[TextTable], fmt: str, payload: Any = None) -> None:
    """Print `tables` as `fmt` (a blank line between two), or `payload` as JSON for `json`; a boxed
    table fits the terminal's width: COLUMNS where set, else the terminal's, else 80 (a pipe, a log)."""
    if fmt == "json":
        echo_json(payload)
        return
    width = shutil.get_terminal_size((80, 24)).columns
    typer.echo("\n".join(render(t, fmt, width) for t in tables), nl=False)


def print_summary(rows: list[dict], metrics: tuple[str, ...], title: str, fmt: str = "table") -> None:
    """The answers' scores per strategy and k, in percent (JSON: fractions)."""
    from ..reading import summarize

    summary = summarize(rows, metrics)
    cells = [(s["strategy"], str(s["k"]), str(s["n"]), *[percent(s[m]) for m in metrics]) for s in summary]
    print_tables([TextTable(title, ("strategy", "k", "n", *metrics), tuple(cells), 1)], fmt, summary)


TABLE_FORMATS = ("table", "md", "csv", "tex", "json")


def format_flag(default: str = "table") -> Any:
    """`--format`, as every command that prints tables takes it."""
    return typer.Option(None, "--format", help="How tables print: table (boxed, fitted to the terminal; 80 "
                        "columns in a pipe or log, no cell cut) | md (GitHub pipe table) | csv | tex (booktabs) "
                        f"| json (fractions to {JSON_DIGITS} significant digits); default {default}; see "
                        "docs/getting-started.md#output-formats", show_default=False)


json_flag = typer.Option(False, "--json", help="The same as --format json.")


def chosen_format(fmt: str | None, as_json: bool, default: str = "table") -> str:
    """The format asked for by `--format` and `--json` (refused where they disagree or unknown,
    `--format X --json` for any X but json); `default` is the command's format when neither is
    given (`format_flag`'s default is None: not given)."""
    if fmt is None:
        return "json" if as_json else default
    if fmt not in TABLE_FORMATS:
        raise InputError(f"unknown --format {fmt!r}{did_you_mean(fmt, TABLE_FORMATS)}; "
                         f"one of {' | '.join(TABLE_FORMATS)}", field="format")
    if as_json and fmt != "json":
        raise InputError(f"--json and --format {fmt} disagree; give one", field="format")
    return "json" if as_json else fmt
