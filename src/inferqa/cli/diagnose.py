"""`inferqa diagnose ...`: diagnostics of a retriever on a benchmark's hint structure."""

from __future__ import annotations

import math
from typing import Any

from ..stages import Settings
from ..stages.diagnose import MONOTONICITY
from .app import InferqaTyper, app
from .stage_command import stage_command

diagnose_app = InferqaTyper(help="Diagnose a retriever on the benchmark's hint structure: `monotonicity`.",
                            no_args_is_help=True)
app.add_typer(diagnose_app, name="diagnose")


def _percent(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.1f}"


def _row(label: str, rate: Any) -> tuple[str, ...]:
    low, high = rate.ci
    return (label, str(rate.additions), str(rate.violations), str(rate.ties), _percent(rate.emvr),
            f"{_percent(low)}–{_percent(high)}")


def show(report: Any, _settings: Settings, fmt: str | None) -> None:
    from ..tabular import TextTable
    from .output import print_tables

    rows = [_row("all", report.overall),
            *[_row(f"{k}→{k + 1} hints", r) for k, r in report.by_stage.items()],
            *[_row(f"hint of rank {k}", r) for k, r in report.by_rank.items()]]
    note = (f"EMVR: the share of additions S → S∪{{h}} whose score falls (ties are not violations); 95% CI: "
            f"bootstrap over questions ({report.resamples} resamples, seed {report.seed}). Rank: the added hint's "
            "place among its question's kept hints (convergence order).")
    title = (f"evidence monotonicity of {report.retriever} on {report.bench} {report.split} "
             f"({report.questions} questions)")
    table = TextTable(title, ("additions", "count", "violations", "ties", "EMVR %", "95% CI %"), tuple(rows), 1,
                      rules=frozenset({1, 1 + len(report.by_stage)}), note=note)
    print_tables([table], fmt, report.to_dict())


stage_command(MONOTONICITY, show, tables=True, group=diagnose_app)
