"""QUIT's ranking measures, vectorised over a (questions × depth) label matrix.

Measures are named as ir_measures names them, with their parameters (`inferqa.evaluate.measures`):
`nDCG@k`, `nDCG(gain=exp)@k`, `P(rel=2)@k`, `RR`, `AP@k`, `Success@k`, `Judged@k`, and the
spellings of ranx and trec_eval beside them; no name depends on letter case. Relevant means
label >= rel (default: the call's `min_label`, itself 1).

The definitions are a provider's. `inferqa` (the default):
- Success@k (hit@k, hit_rate@k): 1 if a relevant passage is in the top k; questions without any
  relevant passage in the qrels are left out of the mean. R@k (recall@k): relevant in the top k /
  all relevant, same questions left out.
- Hits@k (ranx's hits@k): relevant passages in the top k, a count; P@k: that count / k.
- RR, RR@k (mrr, mrr@k): 1 / rank of the first relevant passage (0 if none).
- AP, AP@k (map, map@k): sum of precision at each relevant rank (within the top k) / all
  relevant, as trec_eval's map_cut (0 without relevant passages).
- nDCG@k: gain = the label (`gain=lin`, the default, as ir_measures, ranx's ndcg and trec_eval
  compute it) or 2^label - 1 (`gain=exp`, also `ndcg_exp@k` and ranx's `ndcg_burges@k`); labels
  below rel gain 0; discount 1/log2(rank + 1); ideal ranking from all judged labels of the
  question; 0 where no gain is possible. Without a cutoff, over the whole list.
- Rprec (r-precision): relevant in the top R / R, R = the question's relevant passages.
- Judged@k: passages in the top k that have a label (0 included) / passages ranked there.
Every measure but Success and R is a mean over all the run's questions.

The questions evaluated are the run's questions; the ranking is the run's list order.

`protocol="paper"` is the QUIT authors' rules (their results scripts): every measure is a plain
mean over the run's questions (a question without a relevant passage, or with an empty list,
counts 0 — Success and R included, except that with rel 2 or more they leave out the
questions without a passage of such a label, as the authors' label-threshold variants do);
P@k divides by max(1, min(k, passages retrieved)); nDCG gains 2^label - 1 by default
(`gain=lin`: the label) for every label, whatever rel; means are rounded to 4 decimals. A
passage listed twice for a question (the authors' metrics keep duplicates) counts at each of
its ranks in AP and nDCG, but once in Success, R and P, which count the relevant passages found
(a set); it takes up a rank either way.
"""

from __future__ import annotations

import os
import warnings
from typing import Any

import numpy as np

from ..formats.benchmark import Benchmark
from ..errors import InputError
from ..formats.coerce import as_qrels, as_run
from ..defaults import MIN_LABEL
from ..formats import Qrels, Run
from ..formats.oracles import check_min_label  # noqa: F401 - part of this module's API
from .measures import Measure, metric_names, parse_measure
from .providers import PROVIDERS, Lists, provider

# inferqa's own nDCG gains 2^label - 1 (QUIT's); it is named so, nDCG@k being linear as elsewhere.
DEFAULT_METRICS: tuple[str, ...] = (
    "hit@1", "hit@5", "hit@10", "hit@50", "hit@100",
    "recall@5", "recall@10", "recall@50",
    "mrr", "ndcg_exp@10", "ndcg_exp@100",
)

PROTOCOLS = tuple(PROVIDERS)  # ours, or the QUIT authors' rules (metrics and EM alike)
Metric = Measure  # the name this module exported before measures had parameters
parse_metric = parse_measure


def check_protocol(protocol: str) -> None:
    provider(protocol)


def resolve(metrics: Any, min_label: int = MIN_LABEL.default, protocol: str = "inferqa") -> list[Measure]:
    """The measures asked for, keyed as spelled; two spellings of one measure are computed once
    (both keys are kept), with a warning naming them (to the caller of the caller)."""
    parsed = [parse_measure(m) for m in metric_names(metrics)]
    defaults = provider(protocol).defaults
    seen: dict[str, list[str]] = {}
    for m in parsed:
        seen.setdefault(m.canonical(min_label, defaults.get(m.family, {})), []).append(m.name)
    for canonical, names in seen.items():
        if len(names) > 1:
            warnings.warn(f"{', '.join(dict.fromkeys(names))} are one measure ({canonical}): computed once, "
                          "reported under each name", stacklevel=3)
    return parsed


def per_query_scores(run: Run, qrels: Qrels, metrics: Any = DEFAULT_METRICS,
                     min_label: int = MIN_LABEL.default,
                     protocol: str = "inferqa") -> tuple[list[str], dict[str, np.ndarray]]:
    """Question ids and, per metric name, a float array with NaN where the metric is undefined
    (Success and R without a relevant passage under `inferqa`; under `paper` only with rel >= 2)."""
    source = provider(protocol)
    parsed = [parse_measure(m) for m in metric_names(metrics)]
    if not parsed:
        raise InputError("give at least one metric", field="metrics")
    if not qrels:
        raise InputError("qrels are empty", field="qrels")
    check_min_label(min_label)
    qids = list(run)
    longest = max((len(r) for r in run.values()), default=0)
    if any(m.k is None for m in parsed):
        depth = longest
    else:
        depth = min(max(m.k for m in parsed), longest)
    lists = Lists(run, qrels, qids, max(depth, 1))
    out: dict[str, np.ndarray] = {}
    done: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for m in parsed:
            defaults = source.defaults.get(m.family, {})
            key = m.canonical(min_label, defaults)
            if key not in done:
                done[key] = source.measures[m.family](lists, m, m.params(min_label, defaults)).astype(float)
            out[m.name] = done[key]
    return qids, out


def scored_run(run: Run | str | os.PathLike, bench: Benchmark | None = None, split: str | None = None, *,
               min_label: int = MIN_LABEL.default, protocol: str = "inferqa", allow_partial: bool = False) -> Run:
    """The run as `evaluate` and `compare` score it: a `Run`, or a file read by `open_run`
    (`min_label` for `optimal`, `allow_partial` for a Rankify file of fewer questions than
    `split`, duplicate passages kept under the paper protocol), cut to `split`; under the
    paper protocol a question of `split` the run lacks is an empty ranking (the authors'
    files list every question, some empty)."""
    check_protocol(protocol)
    if split is not None and bench is None:
        raise InputError("split needs a benchmark as qrels (its splits name the questions)", field="split")
    paper = protocol == "paper"
    run = as_run(run, bench, split, min_label=min_label, allow_partial=allow_partial, allow_duplicates=paper)
    if paper and split is not None:
        run = run.only(bench.split_qids(split), fill=True)
    return run


def evaluate(run: Run | str | os.PathLike, qrels: Qrels | Benchmark | str | os.PathLike,
             metrics: Any = DEFAULT_METRICS, min_label: int = MIN_LABEL.default, per_query: bool = False,
             protocol: str = "inferqa", *, split: str | None = None, allow_partial: bool = False) -> dict:
    """Mean of each metric over the run's questions: `{"hit@10": 0.25, ...}` (rounded to 4
    decimals under `protocol="paper"`), keyed by the names as given. `metrics` is one name
    (`"RR"`), a comma-separated string, ir_measures measure objects, or a list of these.

    `run` is a `Run` or a run file; `qrels` is `Qrels`, a qrels file, or a benchmark
    (object or directory: its qrels, its passage ids checked against a run file, and
    `split` cuts the run to that split's questions); the run is read by `scored_run`.

    With `per_query=True`: `{"mean": {...}, "per_query": {qid: {metric: value or None}}}`
    (None where a metric is undefined for that question, e.g. hit@k without relevant passages).
    A mean over no defined question is NaN.
    """
    measures = resolve(metrics, min_label, protocol)
    qrels, bench = as_qrels(qrels)
    run = scored_run(run, bench, split, min_label=min_label, protocol=protocol, allow_partial=allow_partial)
    qids, scores = per_query_scores(run, qrels, measures, min_label, protocol)
    source = provider(protocol)
    means = {}
    for name, v in scores.items():
        defined = v[~np.isnan(v)]
        mean = float(defined.mean()) if defined.size else source.empty_mean
        means[name] = round(mean, source.decimals) if source.decimals is not None and defined.size else mean
    if not per_query:
        return means
    table = {
        qid: {name: (None if np.isnan(v[i]) else float(v[i])) for name, v in scores.items()}
        for i, qid in enumerate(qids)
    }
    return {"mean": means, "per_query": table}
