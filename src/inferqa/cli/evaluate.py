"""`inferqa evaluate`, `compare` (`inferqa.evaluation.stage`) and `evaluate-answers`: their printing."""

from __future__ import annotations

from typing import Any

from ..reading.stage import evaluate_answers
from ..evaluation.stage import compare, evaluate
from .output import print_summary, print_tables
from .stage_command import stage_command


def show_evaluation(results: list, s: Any, fmt: str | None) -> None:
    from ..evaluation.tables import evaluation_tables

    tables, payload = evaluation_tables(results, s, fmt)
    print_tables(tables, fmt, payload)


def show_comparison(result: Any, s: Any, fmt: str | None) -> None:
    """Human formats: a metric's value, difference [CI] and p side by side; csv: one row per
    (run, metric) in fractions; json: the comparison, with those rows as `rows`."""
    title = (f"{result.questions} questions{f' of {s.split}' if s.split else ''}, vs {result.baseline} "
             f"(percent; {s.test} test, {s.correction} correction)")
    table = result.records_table() if fmt == "csv" else result.text_table(title)
    print_tables([table], fmt, {**result.to_dict(), "rows": result.records()})


def show_answers(result: Any, s: Any, fmt: str | None) -> None:
    rows, metrics = result
    of = f" of {s.split}" if s.split else ""
    print_summary(rows, metrics, f"{s.answers} ({len(rows)} rows{of}, percent)", fmt)


stage_command(evaluate, show_evaluation, tables=True)
stage_command(compare, show_comparison, tables=True)
stage_command(evaluate_answers, show_answers, tables=True)
