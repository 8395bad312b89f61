"""`inferqa tune-diversify` and `inferqa tune-union`: the adaptive diversification margin, and
union_freq's alpha/beta, chosen on one split."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .diversify import GROUPING
from .evaluate import ALLOW_PARTIAL
from .llm import CALL_CACHE
from .read import BENCH, LLM, RUN_HELP
from . import REQUIRED, Option, Stage

DEFAULT_SHARES = [i / 10 for i in range(11)]  # from no query diversified to all

# The adaptive diversification margin's grid search (`inferqa.tune.diversify.tune_margin`).
TUNE_SHARES = Option("shares", list, None, "shares of the split's queries to diversify, each in [0, 1]; their "
                     "margins are the grid (instead of --margins; default " + ",".join(map(str, DEFAULT_SHARES)) + ")",
                     item=float)
TUNE_METRIC = Option("metric", str, "hit@10", "measure whose mean picks the margin (ties: the smaller margin)")
TUNE_MEASURES = Option("measures", (list, str), ["hit@1", "hit@10", "mrr", "ndcg@10"], "measures of the margin grid, "
                       "names as `inferqa evaluate` takes them", flags=("--measures", "-m"))
TUNE_PER_GROUP = Option("per_group", int, 1, "at most N passages of one hint-group in the head of a diversified "
                        "query", min=1, flags=("--diversify",))
# union_freq's alpha/beta grid search by reader EM (`inferqa.tune.union.tune_union`).
TUNE_KS = Option("ks", list, [3, 5], "cutoffs whose mean EM the union_freq grid search maximises")
TUNE_ALPHAS = Option("alphas", list, [round(a / 10, 1) for a in range(11)],
                     "alpha grid; beta = 1 - alpha (only their ratio orders hints)")
TUNE_ALPHA = Option("alpha", float, REQUIRED, "union_freq weight of 1/rank in a tuning grid (beta = 1 - alpha)",
                    min=0, max=1)  # each of TUNE_ALPHAS

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
