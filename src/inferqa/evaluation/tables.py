"""The tables `inferqa evaluate` prints: one run's metrics (or its questions), several runs side by side."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from ..tabular import TextTable, percent


def _cell(v: float | None, fmt: str | None = None) -> str:
    """A value in percent to 2 decimals; for csv the fraction itself (empty where undefined)."""
    if fmt == "csv":
        return "" if v is None or math.isnan(v) else repr(float(v))
    return percent(v)


def _note(summary: str, s: Any) -> str:
    """The line under a table (csv, in fractions, prints none)."""
    return f"{summary}; relevant: label ≥ {s.min_label}, {s.protocol} protocol, values in percent"


def one_table(e: Any, title: str, per_query: bool, fmt: str | None) -> TextTable:
    """One Evaluation: a metric per row, or with `per_query` a question per row and the mean last."""
    if not per_query:
        return TextTable(title, ("metric", "value"), tuple((name, _cell(v, fmt)) for name, v in e.means.items()),
                         note=_note(e.summary(), e))
    rows = [(qid, *(_cell(vals[n], fmt) for n in e.means)) for qid, vals in e.per_query.items()]
    rows.append(("mean", *(_cell(v, fmt) for v in e.means.values())))
    return TextTable(title, ("question", *e.means), tuple(rows), rules=frozenset({len(rows) - 1}),
                     note=_note(e.summary(), e))


def evaluation_tables(results: list, s: Any, fmt: str | None) -> tuple[list[TextTable], dict]:
    """(tables, JSON payload) of the `evaluate` stage's results under its settings `s`. One run: a
    metric per row (with per_query a question per row); several runs: a run per row (with
    per_query a table each). Percent, but csv (for programs) in fractions."""
    if len(results) == 1:
        e, run = results[0], s.runs[0]
        named = isinstance(run, (str, os.PathLike))
        payload = {**e.to_dict(s.per_query), "run": str(run) if named else e.name}
        return [one_table(e, f"{Path(run).name if named else e.name} (%)", s.per_query, fmt)], payload
    payload = {"runs": [e.to_dict(s.per_query) for e in results]}
    if s.per_query:
        return [one_table(e, f"{e.name} (%)", True, fmt) for e in results], payload
    names = list(results[0].means)
    cells = tuple((e.name, *(_cell(e.means[n], fmt) for n in names)) for e in results)
    counts = {e.summary() for e in results}
    summary = counts.pop() if len(counts) == 1 else "; ".join(f"{e.name}: {e.summary()}" for e in results)
    return [TextTable(f"{len(results)} runs (%)", ("run", *names), cells, 1, note=_note(summary, s))], payload
