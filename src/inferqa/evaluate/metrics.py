"""QUIT's ranking metrics, vectorised over a (questions × depth) label matrix.

Definitions (relevant = label >= min_label):
- hit@k: 1 if a relevant passage is in the top k; questions without any relevant passage
  in the qrels are left out of the mean.
- recall@k: relevant passages in the top k / all relevant; same questions left out.
- mrr, mrr@k: 1 / rank of the first relevant passage (0 if none), over all questions.
- ndcg@k: gain 2^label - 1 (labels below min_label gain 0), discount 1/log2(rank + 1),
  ideal ranking from all judged labels of the question; 0 where no gain is possible;
  over all questions.
- map, map@k: average precision (sum of precision at each relevant rank, within the top k
  for map@k, / all relevant, as trec_eval's map_cut), over all questions (0 without
  relevant passages).
- p@k (also precision@k): relevant in the top k / k, over all questions.
- nDCG@k (ir_measures' name, spelled so) and ndcg_cut_k (trec_eval's): nDCG with gain =
  label, as trec_eval computes it; equal to ndcg@k on 0/1 labels.

The names of ir_measures, ranx and trec_eval are accepted beside ours (`ALIASES`): e.g.
RR, RR@10, R@100, P@5, AP, AP@100, Success@10, nDCG@10; mrr, recall@k, hit_rate@k,
map@k, ndcg_burges@k; recip_rank, P_5, recall_100, map_cut_100, ndcg_cut_10, success_10.
A result is keyed by the name as asked for (ours in lower case). ranx's own ndcg@k gains
the label (Järvelin & Kekäläinen); ours gains 2^label - 1 (ranx's ndcg_burges@k).

The questions evaluated are the run's questions; the ranking is the run's list order.

`protocol="paper"` applies the QUIT authors' rules instead (their results scripts):
every metric is a plain mean over the run's questions (a question without a relevant
passage, or with an empty list, counts 0 — hit and recall included, except that with
`min_label` 2 or more hit and recall leave out the questions without a passage of such a
label, as the authors' label-threshold variants do); precision@k divides by max(1, min(k, passages retrieved)); nDCG gains
2^label - 1 for every label, whatever `min_label`; means are rounded to 4 decimals. A
passage listed twice for a question (the authors' metrics keep duplicates) counts at each
of its ranks in MAP and nDCG, but once in recall and precision, which count the relevant
passages found (a set); it takes up a rank either way.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from itertools import repeat
from operator import itemgetter
from typing import Sequence

import numpy as np

from ..formats.benchmark import Benchmark
from ..errors import InputError
from ..formats.coerce import as_qrels, as_run
from ..defaults import MIN_LABEL
from ..formats import Qrels, Run
from ..formats.oracles import check_min_label  # noqa: F401 - part of this module's API

DEFAULT_METRICS: tuple[str, ...] = (
    "hit@1", "hit@5", "hit@10", "hit@50", "hit@100",
    "recall@5", "recall@10", "recall@50",
    "mrr", "ndcg@10", "ndcg@100",
)

PROTOCOLS = ("inferqa", "paper")  # ours, or the QUIT authors' rules (metrics and EM alike)
_KINDS_WITH_K = {"hit", "recall", "ndcg", "ndcg_lin", "p", "mrr", "map"}
_KINDS_WITHOUT_K = {"mrr", "map"}
# Means over questions that have a relevant passage only (undefined elsewhere).
_NEEDS_RELEVANT = {"hit", "recall"}
_NAME = re.compile(r"^(hit|recall|ndcg|precision|p|mrr|map)(?:@(\d+))?$")
# The one alias table: another tool's metric name (without its cutoff) -> our kind. A name
# is looked up as spelled, then in lower case: ir_measures' nDCG@k is its linear-gain nDCG,
# while NDCG@k or ndcg@k is ours. A cutoff is written @k, or _k as trec_eval does.
ALIASES = {
    # ir_measures
    "RR": "mrr", "R": "recall", "P": "p", "AP": "map", "nDCG": "ndcg_lin", "Success": "hit",
    "rr": "mrr", "r": "recall", "p": "p", "ap": "map", "success": "hit",
    # ranx (mrr, recall@k, precision@k, ndcg@k, map@k are spelled as ours)
    "hit_rate": "hit", "ndcg_burges": "ndcg",
    # trec_eval
    "recip_rank": "mrr", "recall": "recall", "map_cut": "map", "ndcg_cut": "ndcg_lin",
}
_ALIAS_NAME = re.compile(r"^([A-Za-z][A-Za-z_]*?)(?:@(\d+)|_(\d+))?$")


@dataclass(frozen=True)
class Metric:
    kind: str
    k: int | None
    spelled: str | None = None  # the alias asked for (precision@k), kept as the result's key

    @property
    def name(self) -> str:
        if self.spelled:
            return self.spelled
        return self.kind if self.k is None else f"{self.kind}@{self.k}"


def _alias(name: str) -> Metric | None:
    """A metric named as ir_measures, ranx or trec_eval name it, keyed by that name; None if not one."""
    m = _ALIAS_NAME.match(name)
    if not m:
        return None
    base, k = m.group(1), m.group(2) or m.group(3)
    kind = ALIASES.get(base) or ALIASES.get(base.lower())
    if kind is None:
        return None
    if k is None and kind not in _KINDS_WITHOUT_K:
        raise InputError(f"metric {name!r} needs a cutoff, e.g. {base}@10", field="metrics")
    if k is not None and int(k) < 1:
        raise InputError(f"metric {name!r}: cutoff must be at least 1", field="metrics")
    return Metric(kind, int(k) if k is not None else None, name)


def parse_metric(name: str) -> Metric:
    """`"hit@10"` → Metric("hit", 10); `"mrr"` → Metric("mrr", None); `precision@5` is `p@5`
    under its own name. Ours are case-insensitive; other tools' names (`ALIASES`) keep
    their spelling as the result's key."""
    stripped = name.strip()
    m = _NAME.match(stripped.lower())
    if not m or (stripped.startswith("nDCG") and "@" in stripped):
        alias = _alias(stripped)
        if alias is not None:
            return alias
    if not m:
        raise InputError(f"unknown metric {name!r} (use hit@k, recall@k, mrr, mrr@k, ndcg@k, map, map@k, "
                         "precision@k or p@k, or ir_measures/ranx/trec_eval names such as RR, R@k, AP, "
                         "nDCG@k, Success@k, hit_rate@k, ndcg_cut_k)", field="metrics")
    kind, k = m.group(1), m.group(2)
    if kind == "precision":
        if k is None:
            raise InputError(f"metric {name!r} needs a cutoff, e.g. precision@10", field="metrics")
        return Metric("p", int(k), f"precision@{k}") if int(k) >= 1 else parse_metric(f"p@{k}")
    if k is None and kind not in _KINDS_WITHOUT_K:
        raise InputError(f"metric {name!r} needs a cutoff, e.g. {kind}@10", field="metrics")
    if k is not None and kind not in _KINDS_WITH_K:
        raise InputError(f"metric {name!r} takes no cutoff", field="metrics")
    if k is not None and int(k) < 1:
        raise InputError(f"metric {name!r}: cutoff must be at least 1", field="metrics")
    return Metric(kind, int(k) if k is not None else None)


def _label_matrix(run: Run, qrels: Qrels, qids: list[str], depth: int) -> np.ndarray:
    """labels[i, r] = label of the passage at rank r + 1 for question i (0 past the run's end)."""
    out = np.zeros((len(qids), depth), dtype=np.int16)
    first = itemgetter(0)
    for i, qid in enumerate(qids):
        ranked = run[qid]
        rel = qrels.get(qid)
        if not ranked or not rel:
            continue
        n = min(len(ranked), depth)
        # map() over C callables: no Python bytecode per passage.
        out[i, :n] = np.fromiter(map(rel.get, map(first, ranked[:n]), repeat(0, n)), dtype=np.int16, count=n)
    return out


def _judged_matrix(qrels: Qrels, qids: list[str], min_label: int) -> tuple[np.ndarray, np.ndarray]:
    """Per question: judged labels >= min_label sorted descending (ideal ranking), and their count."""
    rows = [np.fromiter(qrels.get(q, {}).values(), dtype=np.int16) for q in qids]
    width = max((len(r) for r in rows), default=0)
    ideal = np.zeros((len(qids), max(width, 1)), dtype=np.int16)
    for i, r in enumerate(rows):
        ideal[i, : len(r)] = r
    ideal[ideal < min_label] = 0
    ideal = -np.sort(-ideal, axis=1)
    n_rel = np.count_nonzero(ideal, axis=1) if min_label > 0 else np.array([len(r) for r in rows])
    return ideal, n_rel.astype(np.int64)


def _first_listed(run: Run, qids: list[str], depth: int) -> np.ndarray | None:
    """first[i, r]: the passage at rank r + 1 is not listed higher for question i; None when no
    question lists a passage twice within `depth`."""
    out = None
    for i, qid in enumerate(qids):
        pids = [p for p, _ in run[qid][:depth]]
        if len(set(pids)) == len(pids):
            continue
        if out is None:
            out = np.ones((len(qids), depth), dtype=bool)
        seen: set[str] = set()
        for r, p in enumerate(pids):
            out[i, r] = p not in seen
            seen.add(p)
    return out


def _dcg(gains: np.ndarray, k: int) -> np.ndarray:
    g = gains[:, :k]
    return g @ (1.0 / np.log2(np.arange(2, g.shape[1] + 2)))


def check_protocol(protocol: str) -> None:
    if protocol not in PROTOCOLS:
        raise InputError(f"unknown protocol {protocol!r} (use {' or '.join(PROTOCOLS)})", field="protocol")


def per_query_scores(run: Run, qrels: Qrels, metrics: Sequence[str] = DEFAULT_METRICS,
                     min_label: int = MIN_LABEL.default,
                     protocol: str = "inferqa") -> tuple[list[str], dict[str, np.ndarray]]:
    """Question ids and, per metric name, a float array with NaN where the metric is undefined
    (under `protocol="paper"` only hit and recall with `min_label` >= 2; elsewhere such a
    question counts 0 there)."""
    check_protocol(protocol)
    paper = protocol == "paper"
    parsed = [parse_metric(m) for m in metrics]
    if not qrels:
        raise InputError("qrels are empty", field="qrels")
    check_min_label(min_label)
    qids = list(run)
    longest = max((len(r) for r in run.values()), default=0)
    if any(m.k is None for m in parsed):
        depth = longest
    else:
        depth = min(max(m.k for m in parsed), longest)
    depth = max(depth, 1)
    labels = _label_matrix(run, qrels, qids, depth)
    rel = labels >= min_label
    ideal, n_rel = _judged_matrix(qrels, qids, min_label)
    has_rel = n_rel > 0
    cum = np.cumsum(rel, axis=1, dtype=np.int32)
    found = cum  # relevant passages found within the top k: duplicates once (paper) or each time
    if paper and (first_listed := _first_listed(run, qids, depth)) is not None:
        found = np.cumsum(rel & first_listed, axis=1, dtype=np.int32)
    first = np.where(rel.any(axis=1), rel.argmax(axis=1) + 1, 0)  # 1-based rank, 0 = none
    if paper:  # every label gains, whatever min_label; ideal from all of the question's labels
        gains = (2.0 ** np.maximum(labels, 0)) - 1.0
        all_ideal, _ = _judged_matrix(qrels, qids, 0)
        ideal_gains = (2.0 ** np.maximum(all_ideal, 0)) - 1.0
    else:
        gains = np.where(rel, (2.0 ** labels) - 1.0, 0.0)
        ideal_gains = np.where(ideal >= min_label, (2.0 ** ideal) - 1.0, 0.0)
    lin_gains = np.log2(gains + 1.0)  # the label itself where 2^label - 1 gains
    lin_ideal = np.log2(ideal_gains + 1.0)
    retrieved = np.array([len(run[q]) for q in qids], dtype=np.int64)

    def at(k: int) -> np.ndarray:  # relevant retrieved within the top k
        return found[:, min(k, depth) - 1]

    out: dict[str, np.ndarray] = {}
    with np.errstate(divide="ignore", invalid="ignore"):
        for m in parsed:
            if m.kind == "hit":
                v = (at(m.k) > 0).astype(float)
            elif m.kind == "recall":
                v = at(m.k) / n_rel
            elif m.kind == "p":
                v = at(m.k) / (np.maximum(1, np.minimum(m.k, retrieved)) if paper else m.k)
            elif m.kind == "mrr":
                ok = first > 0 if m.k is None else (first > 0) & (first <= m.k)
                v = np.where(ok, 1.0 / np.maximum(first, 1), 0.0)
            elif m.kind == "map":
                cut = depth if m.k is None else min(m.k, depth)
                prec = np.where(rel[:, :cut], cum[:, :cut] / np.arange(1, cut + 1), 0.0).sum(axis=1)
                v = np.where(has_rel, prec / np.maximum(n_rel, 1), 0.0)
            else:  # ndcg: gain 2^label - 1, or the label itself (ndcg_lin)
                g, ig = (lin_gains, lin_ideal) if m.kind == "ndcg_lin" else (gains, ideal_gains)
                idcg = _dcg(ig, m.k)
                v = np.where(idcg > 0, _dcg(g, m.k) / np.where(idcg > 0, idcg, 1.0), 0.0)
            if m.kind in _NEEDS_RELEVANT:
                v = np.where(has_rel, v, 0.0 if paper and min_label < 2 else np.nan)
            out[m.name] = v.astype(float)
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
             metrics: Sequence[str] = DEFAULT_METRICS, min_label: int = MIN_LABEL.default, per_query: bool = False,
             protocol: str = "inferqa", *, split: str | None = None, allow_partial: bool = False) -> dict:
    """Mean of each metric over the run's questions: `{"hit@10": 0.25, ...}` (rounded to 4
    decimals under `protocol="paper"`).

    `run` is a `Run` or a run file; `qrels` is `Qrels`, a qrels file, or a benchmark
    (object or directory: its qrels, its passage ids checked against a run file, and
    `split` cuts the run to that split's questions); the run is read by `scored_run`.

    With `per_query=True`: `{"mean": {...}, "per_query": {qid: {metric: value or None}}}`
    (None where a metric is undefined for that question, e.g. hit@k without relevant passages).
    A mean over no defined question is NaN.
    """
    qrels, bench = as_qrels(qrels)
    run = scored_run(run, bench, split, min_label=min_label, protocol=protocol, allow_partial=allow_partial)
    qids, scores = per_query_scores(run, qrels, metrics, min_label, protocol)
    means = {}
    for name, v in scores.items():
        defined = v[~np.isnan(v)]
        means[name] = float(defined.mean()) if defined.size else float("nan")
        if protocol == "paper":
            means[name] = round(means[name], 4) if defined.size else 0.0
    if not per_query:
        return means
    table = {
        qid: {name: (None if np.isnan(v[i]) else float(v[i])) for name, v in scores.items()}
        for i, qid in enumerate(qids)
    }
    return {"mean": means, "per_query": table}
