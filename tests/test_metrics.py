"""QUIT metrics: hand-worked cases and a cross-check against ir_measures on random runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import random_graded_case
from inferqa.errors import InputError
from inferqa.evaluate import DEFAULT_METRICS, evaluate, parse_metric
from inferqa.formats import Qrels, Run


def run_of(d: dict[str, list[str]]) -> Run:
    return Run({q: [(p, float(len(ps) - i)) for i, p in enumerate(ps)] for q, ps in d.items()})


@pytest.fixture
def toy():
    # q1: relevant b (1) and d (2); q2: relevant only z (2), retrieved nowhere; q3: no relevant at all.
    qrels = Qrels({"q1": {"b": 1, "d": 2, "x": 0}, "q2": {"z": 2}, "q3": {"n": 0}})
    run = run_of({"q1": ["a", "b", "c", "d"], "q2": ["y", "w"], "q3": ["n", "m"]})
    return run, qrels


def test_hand_worked_min_label_1(toy):
    run, qrels = toy
    res = evaluate(run, qrels, ["hit@1", "hit@2", "recall@2", "recall@4", "mrr", "mrr@1", "map", "p@2",
                                "ndcg_exp@2", "ndcg_exp@4"])
    # hit/recall average over q1, q2 (q3 has no relevant passage).
    assert res["hit@1"] == 0.0
    assert res["hit@2"] == pytest.approx(0.5)
    assert res["recall@2"] == pytest.approx((1 / 2 + 0) / 2)
    assert res["recall@4"] == pytest.approx((2 / 2 + 0) / 2)
    # mrr/map/p/ndcg average over all three questions.
    assert res["mrr"] == pytest.approx((1 / 2) / 3)
    assert res["mrr@1"] == 0.0
    assert res["map"] == pytest.approx(((1 / 2 + 2 / 4) / 2) / 3)
    assert res["p@2"] == pytest.approx((1 / 2) / 3)
    idcg = 3 / math.log2(2) + 1 / math.log2(3)  # ideal: d (gain 3), b (gain 1)
    assert res["ndcg_exp@2"] == pytest.approx((1 / math.log2(3)) / idcg / 3)
    assert res["ndcg_exp@4"] == pytest.approx((1 / math.log2(3) + 3 / math.log2(5)) / idcg / 3)


def test_hand_worked_min_label_2(toy):
    run, qrels = toy
    res = evaluate(run, qrels, ["hit@2", "hit@4", "recall@4", "mrr", "ndcg_exp@4"], min_label=2)
    assert res["hit@2"] == 0.0
    assert res["hit@4"] == pytest.approx(0.5)  # q1 via d at rank 4; q2 misses
    assert res["recall@4"] == pytest.approx(0.5)
    assert res["mrr"] == pytest.approx((1 / 4) / 3)
    # b (label 1) gains nothing with min_label 2: ideal is d alone.
    assert res["ndcg_exp@4"] == pytest.approx((3 / math.log2(5)) / 3 / 3)


def test_per_query_and_undefined(toy):
    run, qrels = toy
    res = evaluate(run, qrels, ["hit@4", "mrr"], per_query=True)
    assert res["per_query"]["q3"]["hit@4"] is None
    assert res["per_query"]["q3"]["mrr"] == 0.0
    assert res["per_query"]["q1"] == {"hit@4": 1.0, "mrr": 0.5}
    assert res["mean"]["hit@4"] == pytest.approx(0.5)


def test_no_relevant_anywhere_gives_nan_hit():
    res = evaluate(run_of({"q": ["a"]}), Qrels({"q": {"a": 0}}), ["hit@1", "mrr"])
    assert math.isnan(res["hit@1"]) and res["mrr"] == 0.0


def test_metric_names():
    assert parse_metric("Hit@10").name == "Hit@10" and parse_metric("Hit@10").family == "Success"
    assert parse_metric("mrr").k is None and parse_metric("mrr@10").k == 10
    assert parse_metric("precision@5").name == "precision@5" and parse_metric("P@5").name == "P@5"
    assert parse_metric("map@50").k == 50
    for bad in ("hit", "precision", "precision@0", "ndcg_exp@0", "foo@3", "recall@x"):
        with pytest.raises(InputError):
            parse_metric(bad)
    with pytest.raises(InputError):
        evaluate(run_of({"q": ["a"]}), Qrels(), ["mrr"])


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_against_ir_measures(seed):
    ir_measures = pytest.importorskip("ir_measures")
    from ir_measures import AP, P, R, RR, Success, nDCG

    run, qrels = random_graded_case(seed)
    ir_qrels = [ir_measures.Qrel(q, d, lab) for q, docs in qrels.items() for d, lab in docs.items()]
    ir_run = [ir_measures.ScoredDoc(q, d, s) for q, ranked in run.items() for d, s in ranked]
    for min_label in (1, 2):
        gains = {0: 0, 1: 1 if min_label == 1 else 0, 2: 3}
        theirs_by = {
            f"hit@{k}": Success(rel=min_label) @ k for k in (1, 5, 10, 50, 100)
        } | {
            f"recall@{k}": R(rel=min_label) @ k for k in (5, 10, 50)
        } | {
            "mrr": RR(rel=min_label), "mrr@10": RR(rel=min_label) @ 10, "map": AP(rel=min_label),
            "map@20": AP(rel=min_label) @ 20,
            "p@5": P(rel=min_label) @ 5,
            "ndcg_exp@10": nDCG(gains=gains) @ 10, "ndcg_exp@100": nDCG(gains=gains) @ 100,
        }
        # Queries without any label >= min_label: ir_measures keeps them at 0 for all measures,
        # we leave them out of hit/recall; compare only over queries with a relevant passage.
        keep = {q for q, docs in qrels.items() if any(v >= min_label for v in docs.values())}
        sub_run = Run({q: r for q, r in run.items() if q in keep})
        ours = evaluate(sub_run, qrels, list(theirs_by), min_label=min_label, per_query=True)["per_query"]
        theirs = {}
        for m in ir_measures.iter_calc(list(theirs_by.values()), [x for x in ir_qrels if x.query_id in keep],
                                       [x for x in ir_run if x.query_id in keep]):
            theirs[(m.query_id, str(m.measure))] = m.value
        for name, measure in theirs_by.items():
            for q in keep:
                assert ours[q][name] == pytest.approx(theirs[(q, str(measure))], abs=1e-9), (name, q, min_label)


def test_default_metrics_are_the_papers():
    assert DEFAULT_METRICS == ("hit@1", "hit@5", "hit@10", "hit@50", "hit@100", "recall@5", "recall@10",
                               "recall@50", "mrr", "ndcg_exp@10", "ndcg_exp@100")
    run, qrels = random_graded_case(4)
    res = evaluate(run, qrels)
    assert set(res) == set(DEFAULT_METRICS)
    assert all(0.0 <= v <= 1.0 for v in res.values())
    # monotone in k
    assert res["hit@1"] <= res["hit@5"] <= res["hit@10"] <= res["hit@50"] <= res["hit@100"]
    assert np.isfinite(list(res.values())).all()


def test_paper_protocol_differs_from_ours_on_a_hand_worked_case():
    # q1: c(0) a(2) e(unjudged) b(1); relevant a, b, d -> 3. q2: nothing relevant. q3: an empty list.
    qrels = Qrels({"q1": {"a": 2, "b": 1, "c": 0, "d": 1}, "q2": {"x": 0}, "q3": {"y": 2}})
    run = Run({"q1": [("c", 4.0), ("a", 3.0), ("e", 2.0), ("b", 1.0)], "q2": [("x", 1.0)], "q3": []})
    names = ["hit@1", "hit@2", "recall@2", "precision@5", "p@2", "mrr@10", "map@3", "ndcg_exp@3"]
    ours = evaluate(run, qrels, names)
    paper = evaluate(run, qrels, names, protocol="paper")
    dcg = 3 / math.log2(3)                        # a (gain 3) at rank 2
    ndcg_q1 = dcg / (3 + 1 / math.log2(3) + 1 / 2)  # ideal gains 3, 1, 1
    # Ours: hit/recall over q1 and q3 (q2 has no relevant passage); precision@5 divides by 5.
    assert ours == pytest.approx({"hit@1": 0.0, "hit@2": 1 / 2, "recall@2": (1 / 3) / 2, "precision@5": (2 / 5) / 3,
                                  "p@2": (1 / 2) / 3, "mrr@10": (1 / 2) / 3, "map@3": ((1 / 2) / 3) / 3,
                                  "ndcg_exp@3": ndcg_q1 / 3})
    # Paper: every question in the denominator; precision@5 divides by the 4 retrieved; round(x, 4).
    assert paper == {"hit@1": 0.0, "hit@2": 0.3333, "recall@2": 0.1111, "precision@5": 0.1667, "p@2": 0.1667,
                     "mrr@10": 0.1667, "map@3": 0.0556, "ndcg_exp@3": 0.1527}
    # With only label 2 relevant: ours gains label 2 only (ideal: a alone); the paper gains every label.
    assert evaluate(run, qrels, ["ndcg_exp@3"], min_label=2)["ndcg_exp@3"] == pytest.approx((dcg / 3) / 3)
    assert evaluate(run, qrels, ["ndcg@3"], min_label=2, protocol="paper") == {"ndcg@3": 0.1527}
    # The paper's nDCG gains 2^label - 1 unless told otherwise; gain=lin gains the label.
    lin = evaluate(run, qrels, ["nDCG(gain=lin)@3", "ndcg_exp@3"], protocol="paper")
    assert lin == {"nDCG(gain=lin)@3": round((2 / math.log2(3)) / (2 + 1 / math.log2(3) + 1 / 2) / 3, 4),
                   "ndcg_exp@3": 0.1527}
    with pytest.raises(InputError, match="protocol"):
        evaluate(run, qrels, names, protocol="trec")
