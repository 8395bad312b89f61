"""Confidence intervals and paired tests for an experiment, from its per-question scores.

This module only chooses the pairs; `inferqa.evaluation.significance` computes every test.
Which pairs are tested (two-sided paired randomisation test; each p-value also corrected,
`CORRECTION` (Holm, `inferqa compare`'s default) over the tests of one table column: a
ranking metric, or reader EM at one k; `with_corrected_p`):
- ranking metrics: each reranked run against its first-stage run (does reranking help?),
  each retriever against the first retriever of the config;
- reader EM, per reader, strategy and k: every setting against optimal (how far from
  perfect evidence), each reranked pipeline against its first stage.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Sequence

import numpy as np

from ..defaults import TEST_SEED
from ..evaluation.significance import RESAMPLES, adjust_p, bootstrap_cis, paired_tests
from ..parameters import CORRECTION
from .results import OPTIMAL, PIPELINE, ExperimentResults, run_label

HEADLINE = ("hit@10", "mrr", "ndcg_exp@10")
SIGNIFICANT = 0.05


def with_corrected_p(tests: Sequence[dict]) -> list[dict]:
    """`tests` each with `p_corrected`: its p `CORRECTION`-corrected over the tests of one
    table column (family and metric, and for reader EM the k), and `correction` naming it."""
    groups: dict[tuple, list[int]] = {}
    for i, t in enumerate(tests):
        groups.setdefault((t["family"], t["metric"], t.get("k")), []).append(i)
    out = [dict(t) for t in tests]
    for members in groups.values():
        ps = [np.nan if tests[i]["p"] is None else tests[i]["p"] for i in members]
        for i, pc in zip(members, adjust_p(ps, CORRECTION)):
            out[i].update(p_corrected=None if np.isnan(pc) else float(pc), correction=CORRECTION,
                          family_size=len(members))
    return out


def significant(test: dict) -> bool:
    """Whether a test's corrected p is below SIGNIFICANT (the report's † and the demo's count)."""
    p = test.get("p_corrected")
    return p is not None and p < SIGNIFICANT


def tested_metrics(metrics: Sequence[str]) -> list[str]:
    picked = [m for m in HEADLINE if m in metrics]
    return picked or list(metrics)[:3]


def _pairs(results: ExperimentResults) -> list[tuple[str, int, int, str]]:
    """(family, index a, index b, metric-or-em) for every test, indices into results.ranking/.reader."""
    pairs = []
    rk = results.ranking
    first = {r.retriever: i for i, r in enumerate(rk) if r.setting == PIPELINE and r.reranker is None}
    metrics = tested_metrics(list(rk[0].metrics)) if rk else []
    firsts = list(first.values())
    for i, r in enumerate(rk):
        if r.setting != PIPELINE:
            continue
        base = first.get(r.retriever) if r.reranker else (firsts[0] if firsts and i != firsts[0] else None)
        if base is not None and base != i:
            pairs += [("ranking", i, base, m) for m in metrics]
    rd = results.reader
    groups: dict[tuple, dict[str, int]] = {}
    for i, r in enumerate(rd):
        groups.setdefault((r.reader, r.strategy, r.k), {})[f"{r.setting}|{run_label(r)}"] = i
    for i, r in enumerate(rd):
        g = groups[(r.reader, r.strategy, r.k)]
        opt = next((j for key, j in g.items() if key.startswith(OPTIMAL + "|")), None)
        if opt is not None and opt != i:
            pairs.append(("reader", i, opt, "em"))
        if r.setting == PIPELINE and r.reranker:
            base = g.get(f"{PIPELINE}|{r.retriever}")
            if base is not None:
                pairs.append(("reader", i, base, "em"))
    return pairs


def add_statistics(results: ExperimentResults, ranking_scores: Sequence[dict[str, np.ndarray]],
                   reader_scores: Sequence[np.ndarray], *, seed: int = TEST_SEED,
                   resamples: int = RESAMPLES) -> ExperimentResults:
    """A copy of `results` with 95 % CIs on every score and the paired tests in `tests`.

    `ranking_scores[i]` maps each metric of `results.ranking[i]` to its per-question
    vector, `reader_scores[i]` is the per-question EM of `results.reader[i]`; every vector
    lists the same questions in the same order (NaN = undefined for that question).
    """
    rows, where = [], []
    for i, scores in enumerate(ranking_scores):
        for m, v in scores.items():
            rows.append(v)
            where.append((i, m))
    rows += list(reader_scores)
    cis = bootstrap_cis(np.array(rows), seed=seed, resamples=resamples) if rows else np.zeros((0, 2))
    by_run: dict[int, dict[str, list[float]]] = {}
    for (i, m), ci in zip(where, cis):
        by_run.setdefault(i, {})[m] = [float(ci[0]), float(ci[1])]
    ranking = [replace(r, ci=by_run.get(i, {})) for i, r in enumerate(results.ranking)]
    reader = [replace(r, ci=[float(lo), float(hi)]) for r, (lo, hi) in zip(results.reader, cis[len(where):])]

    pairs = _pairs(results)
    vec = lambda fam, i, m: ranking_scores[i][m] if fam == "ranking" else reader_scores[i]  # noqa: E731
    a = np.array([vec(f, i, m) for f, i, _, m in pairs]) if pairs else np.zeros((0, 0))
    b = np.array([vec(f, j, m) for f, _, j, m in pairs]) if pairs else np.zeros((0, 0))
    tests = []
    for (fam, i, j, m), t in zip(pairs, paired_tests(a, b, seed=seed, resamples=resamples) if pairs else []):
        ra, rb = (ranking[i], ranking[j]) if fam == "ranking" else (reader[i], reader[j])
        defined = t.n > 0
        test = {"family": fam, "metric": m, "a": run_label(ra), "b": run_label(rb), "n": t.n,
                "mean_a": t.mean_a if defined else None, "mean_b": t.mean_b if defined else None,
                "diff": t.diff if defined else None, "ci_low": t.ci_low, "ci_high": t.ci_high, "p": t.p,
                "exact": t.exact}
        if fam == "reader":
            test.update(reader=ra.reader, strategy=ra.strategy, k=ra.k)
        tests.append(test)
    return replace(results, ranking=ranking, reader=reader, tests=with_corrected_p(tests))


def per_question_em(rows: Sequence[dict], qids: Sequence[str]) -> dict[tuple[str, int], np.ndarray]:
    """(strategy, k) -> EM per question in `qids` order (NaN where a question has no row)."""
    index = {q: i for i, q in enumerate(qids)}
    out: dict[tuple[str, int], np.ndarray] = {}
    for row in rows:
        i = index.get(row["qid"])
        if i is None:
            continue
        v = out.setdefault((row["strategy"], int(row["k"])), np.full(len(qids), np.nan))
        v[i] = float(row["em"])
    return out


def per_question_metrics(per_query: dict[str, dict[str, float | None]], qids: Sequence[str],
                         metrics: Sequence[str]) -> dict[str, np.ndarray]:
    """`evaluate(..., per_query=True)["per_query"]` as one vector per metric in `qids` order."""
    nan = float("nan")
    return {m: np.array([nan if (v := per_query.get(q, {}).get(m)) is None else v for q in qids], dtype=float)
            for m in metrics}
