"""How more than one command prints: JSON (every float to one precision, NaN as null) and the
answers summary table (kept here so that no command module imports another)."""

from __future__ import annotations

import json
import math
from typing import Any

import typer

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


def print_summary(rows: list[dict], metrics: tuple[str, ...], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    from ..read import summarize
    table = Table(title=title)
    for col in ("strategy", "k", "n", *metrics):
        table.add_column(col, justify="left" if col == "strategy" else "right")
    for s in summarize(rows, metrics):
        table.add_row(s["strategy"], str(s["k"]), str(s["n"]),
                      *[("-" if s[m] is None else f"{100 * s[m]:.2f}") for m in metrics])
    Console().print(table)
