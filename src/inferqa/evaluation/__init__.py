"""Evaluation: QUIT's ranking metrics, run checks, oracle runs, paired comparisons.

Its stage's function `evaluate` is also `inferqa.evaluate(run, qrels, metrics)`.
"""

from __future__ import annotations

from ..formats import OPTIMAL, check_run_ids, open_run, optimal, oracle_retriever
from .comparison import COMPARE_METRICS, Comparison, compare
from .measures import FAMILIES, SPELLINGS, Measure, parse_measure
from .metrics import DEFAULT_METRICS, MIN_LABEL, Metric, check_min_label, evaluate, parse_metric, per_query_scores
from .providers import PROVIDERS

__all__ = [
    "DEFAULT_METRICS", "FAMILIES", "MIN_LABEL", "Measure", "Metric", "PROVIDERS", "SPELLINGS", "check_min_label",
    "evaluate", "parse_measure", "parse_metric", "per_query_scores",
    "check_run_ids", "open_run", "OPTIMAL", "oracle_retriever", "optimal",
    "COMPARE_METRICS", "Comparison", "compare",
]
