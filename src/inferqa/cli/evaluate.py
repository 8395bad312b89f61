"""`inferqa evaluate` and `inferqa compare` (declared in `inferqa.stages.evaluate`): their printing."""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import Any

from ..stages import Settings
from ..stages.evaluate import COMPARE, EVALUATE
from ..tabular import MISSING, TextTable
from .output import print_tables
from .stage_command import stage_command


def _fmt(v: float | None, fmt: str | None = None) -> str:
    """A value in percent to 2 decimals; for csv the fraction itself (empty where undefined)."""
    undefined = v is None or (isinstance(v, float) and math.isnan(v))
    if fmt == "csv":
        return "" if undefined else repr(float(v))
    return MISSING if undefined else f"{100 * v:.2f}"


def _note(e: Any, fmt: str | None) -> str:
    unit = "values as fractions" if fmt == "csv" else "values in percent"
    return f"{e.summary()}; relevant: label ≥ {e.min_label}, {e.protocol} protocol, {unit}"


def _one_table(e: Any, title: str, per_query: bool, fmt: str | None) -> TextTable:
    if not per_query:
        return TextTable(title, ("metric", "value"), tuple((name, _fmt(v, fmt)) for name, v in e.means.items()),
                         note=_note(e, fmt))
    rows = [(qid, *(_fmt(vals[n], fmt) for n in e.means)) for qid, vals in e.per_query.items()]
    rows.append(("mean", *(_fmt(v, fmt) for v in e.means.values())))
    return TextTable(title, ("question", *e.means), tuple(rows), rules=frozenset({len(rows) - 1}),
                     note=_note(e, fmt))


def show_evaluation(results: list, s: Settings, fmt: str | None) -> None:
    """One run: a metric per row (with --per-query a question per row); several runs: a run
    per row (with --per-query a table each). Percent, but csv (for programs) in fractions."""
    if len(results) == 1:
        e, run = results[0], s.runs[0]
        title = f"{Path(run).name if isinstance(run, (str, os.PathLike)) else e.name} (%)"
        payload = {**e.to_dict(s.per_query), "run": str(run) if isinstance(run, (str, os.PathLike)) else e.name}
        print_tables([_one_table(e, title, s.per_query, fmt)], fmt, payload)
        return
    if s.per_query:
        tables = [_one_table(e, f"{e.name} (%)", True, fmt) for e in results]
    else:
        names = list(results[0].means)
        cells = tuple((e.name, *(_fmt(e.means[n], fmt) for n in names)) for e in results)
        counts = {e.summary() for e in results}
        summary = counts.pop() if len(counts) == 1 else "; ".join(f"{e.name}: {e.summary()}" for e in results)
        note = f"{summary}; relevant: label ≥ {s.min_label}, {s.protocol} protocol, values in percent"
        tables = [TextTable(f"{len(results)} runs (%)", ("run", *names), cells, 1, note=note)]
    print_tables(tables, fmt, {"runs": [e.to_dict(s.per_query) for e in results]})


def show_comparison(result: Any, s: Settings, fmt: str | None) -> None:
    """Human formats: a metric's value, difference [CI] and p side by side; csv: one row per
    (run, metric) in fractions; json: the comparison, with those rows as `rows`."""
    title = (f"{result.questions} questions{f' of {s.split}' if s.split else ''}, vs {result.baseline} "
             f"(percent; {s.test} test, {s.correction} correction)")
    table = result.records_table() if fmt == "csv" else result.text_table(title)
    print_tables([table], fmt, {**result.to_dict(), "rows": result.records()})


stage_command(EVALUATE, show_evaluation, tables=True)
stage_command(COMPARE, show_comparison, tables=True)
