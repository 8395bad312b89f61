"""Experiments end to end: a YAML grid, cached stages, the paper's tables and an HTML report."""

from __future__ import annotations

from .config import ExperimentConfig, config_from_dict, load_config, shipped_config
from .results import ExperimentResults, RankingResult, ReaderResult
from .store import StageStore
from .tables import all_tables, write_tables

__all__ = [
    "ExperimentConfig", "config_from_dict", "load_config", "shipped_config",
    "ExperimentResults", "RankingResult", "ReaderResult", "StageStore",
    "all_tables", "write_tables",
]
