"""Evaluation: QUIT's ranking metrics, run checks, oracle runs, paired comparisons."""

from __future__ import annotations

from .checks import OPTIMAL, check_run_ids, open_run
from .comparison import COMPARE_METRICS, Comparison, compare
from .metrics import ALIASES, DEFAULT_METRICS, Metric, evaluate, parse_metric, per_query_scores
from .oracles import optimal, oracle_retriever

__all__ = [
    "ALIASES", "DEFAULT_METRICS", "Metric", "evaluate", "parse_metric", "per_query_scores",
    "check_run_ids", "open_run", "OPTIMAL", "oracle_retriever", "optimal",
    "COMPARE_METRICS", "Comparison", "compare",
]
