"""Tables printed by more than one command (kept here so command modules import no other)."""

from __future__ import annotations


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
