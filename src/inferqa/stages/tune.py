"""`inferqa tune-diversify` and `inferqa tune-union`: the adaptive diversification margin, and
union_freq's alpha/beta, chosen on one split."""

from __future__ import annotations

from ..parameters import (ALLOW_PARTIAL, BENCH_FLAG as BENCH, CALL_CACHE, DEFAULT_SHARES, GROUPING, READER_LLM_FLAG as LLM, RUN_HELP, TUNE_ALPHA, TUNE_ALPHAS, TUNE_KS, TUNE_MEASURES, TUNE_METRIC, TUNE_PER_GROUP, TUNE_SHARES)  # noqa: F401 - re-exported until the stage moves

from dataclasses import replace
from pathlib import Path

from . import REQUIRED, Option, Stage



TUNE_DIVERSIFY = Stage(
    "tune-diversify", "Score a grid of --diversify-margin values on a split and print it, best first.",
    entry="inferqa.tune.diversify:tune_diversify_stage",
    description="Apply the chosen margin, or the share of queries it diversifies, to another split with "
                "`inferqa retrieve` or `inferqa rerank` --diversify-margin or --diversify-share "
                "(docs/retrieve.md#adaptive-diversification).",
    options=(
        Option("run", (Path, object), REQUIRED, "run to diversify: a TREC run file (e.g. from `inferqa retrieve`), "
               "a Run or a {qid: {pid: score}} dict", positional=True, metavar="RUN"),
        Option("bench", (Path, object), REQUIRED, "benchmark folder the run was made on, or a Benchmark",
               flags=("--bench", "-b")),
        Option("split", str, "dev", "split to tune on; score the chosen margin on another one"),
        Option("margins", list, None, "margins to try, each ≥ 0 (default: those of --shares)", item=float),
        TUNE_SHARES,
        TUNE_METRIC,
        TUNE_MEASURES,
        TUNE_PER_GROUP,
        replace(GROUPING, flags=("--diversify-by",)),
    ))

TUNE_UNION = Stage(
    "tune-union", "Grid-search union_freq's alpha/beta on a split by reader EM; prints the grid, best first.",
    entry="inferqa.tune.union:tune_union_stage",
    options=(
        Option("run", str, "optimal", RUN_HELP, positional=True, metavar="RUN"),
        replace(BENCH, help="benchmark directory"),
        Option("split", str, "dev", "split to tune on"),
        LLM,
        replace(TUNE_KS, flags=("--k",), item=int),
        replace(TUNE_ALPHAS, help="union_freq: " + TUNE_ALPHAS.help, item=float),
        *CALL_CACHE,
        ALLOW_PARTIAL,
    ))
