"""Evaluation: QUIT's ranking metrics, run checks and oracle runs."""

from __future__ import annotations

from .checks import OPTIMAL, check_run_ids, open_run
from .metrics import DEFAULT_METRICS, Metric, evaluate, parse_metric, per_query_scores
from .oracles import optimal, oracle_retriever

__all__ = [
    "DEFAULT_METRICS", "Metric", "evaluate", "parse_metric", "per_query_scores",
    "check_run_ids", "open_run", "OPTIMAL", "oracle_retriever", "optimal",
]
