"""Deprecated: each stage's options are declared with its stage in `inferqa.stages`; this
module re-exports them for one release.

    TOP_K, SPLIT, SEED, LEAK_THRESHOLD, LEAK_LLM, LABELER, MIN_F1, LABEL_MATCH: inferqa.stages.build
    READER_LLM, READ_STRATEGIES, READ_KS, UNION_ALPHA, UNION_BETA: inferqa.stages.read
    TUNE_KS, TUNE_ALPHAS, TUNE_METRIC, TUNE_MEASURES, TUNE_PER_GROUP, TUNE_SHARES: inferqa.stages.tune
    JUDGE_SAMPLES, JUDGE_TEMPERATURE: inferqa.stages.llm
"""

from __future__ import annotations

import warnings

from .parameters import LABEL_MATCH, LABELER, LEAK_LLM, LEAK_THRESHOLD, MIN_F1, SEED, BUILD_SPLIT as SPLIT, TOP_K
from .parameters import JUDGE_SAMPLES, JUDGE_TEMPERATURE
from .parameters import READ_KS, READ_STRATEGIES, READER_LLM, UNION_ALPHA, UNION_BETA
from .parameters import TUNE_ALPHAS, TUNE_KS, TUNE_MEASURES, TUNE_METRIC, TUNE_PER_GROUP, TUNE_SHARES

__all__ = ["TOP_K", "SPLIT", "SEED", "LEAK_THRESHOLD", "LEAK_LLM", "LABELER", "MIN_F1", "LABEL_MATCH",
           "READER_LLM", "READ_STRATEGIES", "READ_KS", "UNION_ALPHA", "UNION_BETA",
           "TUNE_KS", "TUNE_ALPHAS", "TUNE_METRIC", "TUNE_MEASURES", "TUNE_PER_GROUP", "TUNE_SHARES",
           "JUDGE_SAMPLES", "JUDGE_TEMPERATURE"]

warnings.warn("inferqa.stage_options is deprecated: import its options from inferqa.stages.build (build, label, "
              "annotate), inferqa.stages.read (READER_LLM, READ_*, UNION_*), inferqa.stages.tune (TUNE_*) and "
              "inferqa.stages.llm (JUDGE_*) instead (the old path goes in the next release)",
              DeprecationWarning, stacklevel=2)
