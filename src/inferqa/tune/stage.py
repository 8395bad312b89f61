"""`inferqa tune-diversify` and `inferqa tune-union`: the adaptive diversification margin, and
union_freq's alpha/beta, chosen on one split; `tune_margin` is the first in Python's words."""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Sequence

from ..errors import InputError
from ..parameters import (ALLOW_PARTIAL, BENCH_FLAG, CACHE, DEFAULT_SHARES, GROUPING, READER_LLM_FLAG, RUN_HELP,
                          TUNE_ALPHAS, TUNE_KS, TUNE_SPLIT, USE_CACHE)
from ..stage import Opt, stage
from .diversify import MarginRow, MarginTuning, check_grid, margin_at_share
from .union import UnionTuning, tune_union as union_grid

if TYPE_CHECKING:
    from ..formats import Benchmark, Run


@stage("tune-diversify")
def tune_diversify(run: Annotated["Path | Run | dict", Opt("run to diversify: a TREC run file (e.g. from `inferqa "
                                                           "retrieve`), a Run or a {qid: {pid: score}} dict",
                                                           metavar="RUN")], *,
                   bench: Annotated["Path | Benchmark", Opt("benchmark folder the run was made on, or a Benchmark",
                                                            flags=("--bench", "-b"))],
                   split: Annotated[str, replace(TUNE_SPLIT, help="split to tune on; score the chosen margin on "
                                                 "another one")] = TUNE_SPLIT.default,
                   margins: Annotated["list[float] | None", Opt("margins to try, each ≥ 0 (default: those of "
                                                                "--shares)")] = None,
                   shares: Annotated["list[float] | None", Opt("shares of the split's queries to diversify, each in "
                                                               "[0, 1]; their margins are the grid (instead of "
                                                               "--margins; default "
                                                               + ",".join(map(str, DEFAULT_SHARES)) + ")")] = None,
                   metric: Annotated[str, Opt("measure whose mean picks the margin (ties: the smaller margin)")]
                   = "hit@10",
                   measures: Annotated["list[str] | str", Opt("measures of the margin grid, names as `inferqa "
                                                              "evaluate` takes them", flags=("--measures", "-m"))]
                   = ["hit@1", "hit@10", "mrr", "ndcg@10"],
                   per_group: Annotated[int, Opt("at most N passages of one hint-group in the head of a diversified "
                                                 "query", min=1, flags=("--diversify",))] = 1,
                   diversify_by: Annotated[str, GROUPING] = GROUPING.default) -> MarginTuning:
    """Score a grid of --diversify-margin values on a split and print it, best first.

    Apply the chosen margin, or the share of queries it diversifies, to another split with
    `inferqa retrieve` or `inferqa rerank` --diversify-margin or --diversify-share
    (docs/retrieve.md#adaptive-diversification)."""
    from ..evaluation import evaluate
    from ..evaluation.measures import metric_names
    from ..evaluation.metrics import resolve
    from ..formats import as_run
    from ..formats.coerce import as_benchmark
    from ..diversification import check_diversify, diversify, gated, query_margins

    per_group, by, _, _ = check_diversify(per_group, diversify_by)
    grid = check_grid(margins, shares)
    if len(metric_names(metric)) != 1:
        raise InputError(f"metric must be one measure, got {metric!r}", field="metric")
    metric = metric_names(metric)[0]
    names = list(dict.fromkeys([*metric_names(measures), metric]))
    resolve(names)  # an unknown measure fails before the run is read
    bench = as_benchmark(bench)
    bench.split_qids(split)  # an unknown split fails before the run is read
    run = as_run(run, bench, split)
    if not len(run):
        raise InputError(f"the run holds no question of split {split!r}", field="split")
    gaps = query_margins(run, bench, by)
    if margins is None:
        grid = list(dict.fromkeys(margin_at_share(list(gaps.values()), s) for s in grid))
    plain = evaluate(run, bench, names, per_query=True, split=split)["per_query"]
    spread = evaluate(diversify(run, bench, per_group, by), bench, names, per_query=True, split=split)["per_query"]
    rows = []
    for m in grid:
        through = gated(gaps, m)
        chosen = [spread[q] if q in through else plain[q] for q in plain]
        rows.append(MarginRow(m, len(through) / len(gaps), {n: _mean(v[n] for v in chosen) for n in names}))
    rows.sort(key=lambda r: (-_orderable(r.scores[metric]), math.inf if r.margin is None else r.margin))
    return MarginTuning(split, len(run), per_group, by, metric, tuple(rows))


def _mean(values: Any) -> float:
    defined = [v for v in values if v is not None]
    return sum(defined) / len(defined) if defined else math.nan


def _orderable(value: float) -> float:
    return -math.inf if math.isnan(value) else value


_D = tune_diversify.stage.default


def tune_margin(run: Any, bench: "Benchmark | str | os.PathLike", *, split: str = _D("split"),
                margins: Sequence[Any] | None = None, shares: Sequence[float] | None = None,
                per_group: int = _D("per_group"), by: str = _D("diversify_by"),
                metric: str = _D("metric"), measures: Sequence[str] = tuple(_D("measures"))) -> MarginTuning:
    """`tune_diversify` in Python's words: each margin of the grid (`margins`, each ≥ 0 or None, or
    the margins at `shares` of the split's queries: `margin_at_share`) scored on `split` by `inferqa.evaluate`
    of `diversify(run, bench, per_group, by, margin)`; rows best first by `metric` (added to `measures`)."""
    return tune_diversify(run, bench=bench, split=split, margins=None if margins is None else list(margins),
                          shares=None if shares is None else list(shares), per_group=per_group, diversify_by=by,
                          metric=metric, measures=measures if isinstance(measures, str) else list(measures))


@stage("tune-union")
def tune_union(run: Annotated["str | Path", Opt(RUN_HELP, metavar="RUN")] = "optimal", *,
               bench: Annotated[Path, replace(BENCH_FLAG, help="benchmark directory")],
               split: Annotated[str, TUNE_SPLIT] = TUNE_SPLIT.default,
               llm: Annotated[str, READER_LLM_FLAG] = READER_LLM_FLAG.default,
               ks: Annotated[list[int], replace(TUNE_KS, flags=("--k",))] = TUNE_KS.default,
               alphas: Annotated[list[float], replace(TUNE_ALPHAS, help=f"union_freq: {TUNE_ALPHAS.help}")]
               = TUNE_ALPHAS.default,
               cache: Annotated["Path | None", CACHE] = None,
               use_cache: Annotated[bool, USE_CACHE] = USE_CACHE.default,
               allow_partial: Annotated[bool, ALLOW_PARTIAL] = False) -> UnionTuning:
    """Grid-search union_freq's alpha/beta on a split by reader EM; prints the grid, best first."""
    from ..reading.run import check_read_options, open_run_and_llm

    bench, ranked, model = open_run_and_llm(bench, run, split, allow_partial, llm,
                                            lambda: check_read_options(["union_freq"], ks, alphas), cache=cache,
                                            use_cache=use_cache)
    with model:
        return UnionTuning(union_grid(bench, ranked, model, ks, qids=ranked.qids, alphas=alphas), len(ranked.qids))
