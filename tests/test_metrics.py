"""QUIT metrics: hand-worked cases and a cross-check against ir_measures on random runs."""

from __future__ import annotations

import math

import numpy as np
import pytest

from conftest import random_graded_case
from inferqa.errors import InputError
from inferqa.evaluation import DEFAULT_METRICS, evaluate, parse_metric
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
    # every measure averages over all three questions; q3 (no relevant passage) counts 0, as in
    # ir_measures and ranx.
    assert res["hit@1"] == 0.0
    assert res["hit@2"] == pytest.approx(1 / 3)
    assert res["recall@2"] == pytest.approx((1 / 2 + 0 + 0) / 3)
    assert res["recall@4"] == pytest.approx((2 / 2 + 0 + 0) / 3)
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
    assert res["hit@4"] == pytest.approx(1 / 3)  # q1 via d at rank 4; q2 misses; q3 has none: 0
    assert res["recall@4"] == pytest.approx(1 / 3)
    assert res["mrr"] == pytest.approx((1 / 4) / 3)
    # b (label 1) gains nothing with min_label 2: ideal is d alone.
    assert res["ndcg_exp@4"] == pytest.approx((3 / math.log2(5)) / 3 / 3)


def test_per_query_counts_a_question_without_relevant_passage_0(toy):
    run, qrels = toy
    res = evaluate(run, qrels, ["hit@4", "mrr"], per_query=True)
    assert res["per_query"]["q3"] == {"hit@4": 0.0, "mrr": 0.0}
    assert res["per_query"]["q1"] == {"hit@4": 1.0, "mrr": 0.5}
    assert res["mean"]["hit@4"] == pytest.approx(1 / 3)
    # the authors' label-2 variant leaves q3 out (undefined): None per question, not in the mean
    paper = evaluate(run, qrels, ["hit@4"], per_query=True, min_label=2, protocol="paper")
    assert paper["per_query"]["q3"]["hit@4"] is None and paper["mean"]["hit@4"] == pytest.approx(0.5)


def test_no_relevant_anywhere_gives_0_hit_and_nan_under_the_paper_label_2_rule():
    res = evaluate(run_of({"q": ["a"]}), Qrels({"q": {"a": 0}}), ["hit@1", "mrr"])
    assert res["hit@1"] == 0.0 and res["mrr"] == 0.0
    paper = evaluate(run_of({"q": ["a"], "p": ["c"]}), Qrels({"q": {"a": 1}, "p": {"b": 2}}), ["hit@1"],
                     min_label=2, protocol="paper", per_query=True)
    assert paper["per_query"]["q"]["hit@1"] is None and paper["mean"]["hit@1"] == 0.0


def test_a_measure_ir_measures_has_and_inferqa_lacks_gets_no_near_spelling_of_another():
    import ir_measures

    with pytest.raises(InputError) as err:
        parse_metric("ERR@10")
    assert "ERR is an ir_measures measure inferqa does not compute" in str(err.value) and "rr@10" not in str(err.value)
    from inferqa.evaluation.measures import ELSEWHERE, SPELLINGS
    theirs = {name.lower() for name in ir_measures.measures.registry}
    assert ELSEWHERE <= theirs and not ELSEWHERE & set(SPELLINGS)
    # every ir_measures name is either one inferqa reads or one it says it does not compute
    assert {n for n in theirs if n.isascii()} - ELSEWHERE - {s.lower() for s in SPELLINGS} == set()


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
    # Ours: every question in the denominator (q2, without a relevant passage, counts 0, as in
    # ir_measures); precision@5 divides by 5.
    assert ours == pytest.approx({"hit@1": 0.0, "hit@2": 1 / 3, "recall@2": (1 / 3) / 3, "precision@5": (2 / 5) / 3,
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


# -- which questions are scored: the field's rule (ir_measures; trec_eval -c) --------------------

def _partial_case(seed: int):
    """A random run and qrels that only partly overlap: questions of the run without a
    judgement, judged questions the run lacks, judged ones without a relevant passage."""
    import random

    rng = random.Random(seed)
    run, qrels = random_graded_case(seed, n_q=24, n_docs=120, depth=40)
    qids = list(qrels)
    for q in rng.sample(qids, 5):  # unjudged: in the run only
        del qrels[q]
    for q in rng.sample([q for q in qids if q in qrels], 5):  # judged, not in the run
        del run[q]
    for q in rng.sample([q for q in qrels if q in run], 2):  # judged, nothing relevant
        qrels[q] = {d: 0 for d in qrels[q]}
    return run, qrels


def _ir_values(measure, run, qrels):
    ir_qrels = [ir_measures.Qrel(q, d, lab) for q, docs in qrels.items() for d, lab in docs.items()]
    ir_run = [ir_measures.ScoredDoc(q, d, s) for q, ranked in run.items() for d, s in ranked]
    return {m.query_id: m.value for m in ir_measures.iter_calc([measure], ir_qrels, ir_run)}


ir_measures = pytest.importorskip("ir_measures")


@pytest.mark.parametrize("seed", range(20))
def test_partial_runs_and_qrels_score_the_questions_ir_measures_scores(seed):
    from ir_measures import AP, P, R, RR, Judged, Rprec, Success, nDCG

    run, qrels = _partial_case(seed)
    theirs_by = {"hit@10": Success @ 10, "R@20": R @ 20, "P@5": P @ 5, "RR": RR, "mrr@10": RR @ 10, "AP": AP,
                 "map@20": AP @ 20, "Rprec": Rprec, "nDCG@10": nDCG @ 10, "ndcg_exp@10": nDCG(gains={0: 0, 1: 1, 2: 3}) @ 10,
                 "Judged@10": Judged @ 10}
    ours = evaluate(run, qrels, list(theirs_by), per_query=True)
    no_relevant = {q for q, docs in qrels.items() if max(docs.values()) < 1}
    for name, measure in theirs_by.items():
        theirs = _ir_values(measure, run, qrels)  # one measure per call (docs/field.md)
        assert set(ours["per_query"]) == set(theirs) == set(qrels), name  # unjudged out, judged missing in
        for q, value in theirs.items():
            assert ours["per_query"][q][name] == pytest.approx(value, abs=1e-9), (name, q, q in no_relevant)
        assert ours["mean"][name] == pytest.approx(sum(theirs.values()) / len(theirs), abs=1e-9), name
    if seed < 5:  # pytrec_eval (trec_eval) where it has the measure: over the questions of both
        pytrec_eval = pytest.importorskip("pytrec_eval")
        names = {"recip_rank": "RR", "map": "AP", "P_5": "P@5", "recall_20": "R@20", "ndcg_cut_10": "nDCG@10",
                 "Rprec": "Rprec", "success_10": "hit@10"}
        got = pytrec_eval.RelevanceEvaluator(dict(qrels), set(names)).evaluate(
            {q: dict(ranked) for q, ranked in run.items()})
        assert set(got) == {q for q in run if q in qrels}
        for q, values in got.items():
            for theirs_name, name in names.items():
                if ours["per_query"][q][name] is not None:
                    assert ours["per_query"][q][name] == pytest.approx(values[theirs_name], abs=1e-9)


@pytest.mark.parametrize("seed", range(3))
def test_the_cli_csv_and_json_give_ir_measures_numbers_on_partial_files(seed, tmp_path, monkeypatch, capsys):
    import csv
    import io
    import json

    from conftest import run_cli

    run, qrels = _partial_case(seed)
    run.to_file(tmp_path / "r.trec")
    qrels.to_file(tmp_path / "q.tsv")
    names = ["Success@10", "R@20", "P@5", "RR", "RR@10", "AP", "AP@20", "Rprec", "nDCG@10", "Judged@10"]
    theirs = {}
    for name in names:  # ir_measures reads the same two files
        values = [m.value for m in ir_measures.iter_calc([ir_measures.parse_measure(name)],
                                                          ir_measures.read_trec_qrels(str(tmp_path / "q.tsv")),
                                                          ir_measures.read_trec_run(str(tmp_path / "r.trec")))]
        theirs[name] = sum(values) / len(values)
    args = ("evaluate", tmp_path / "r.trec", "--qrels", tmp_path / "q.tsv", "-m", ",".join(names))
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--format", "csv")
    assert code in (0, None)
    got_csv = {row["metric"]: float(row["value"]) for row in csv.DictReader(io.StringIO(out))}
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--json")
    assert code in (0, None)
    got_json = json.loads(out)["metrics"]
    for name in names:
        assert got_csv[name] == pytest.approx(theirs[name], abs=1e-9), name
        assert got_json[name] == pytest.approx(theirs[name], abs=1e-9), name


def test_unjudged_questions_are_left_out_of_every_measure_alike():
    # q1 relevant at rank 1; q2 unjudged (in the run only); q3 judged, not in the run
    qrels = Qrels({"q1": {"a": 1}, "q3": {"c": 2}})
    run = run_of({"q1": ["a"], "q2": ["b"]})
    with pytest.warns(UserWarning, match="lacks 1 of the 2 judged questions"):
        res = evaluate(run, qrels, ["RR", "hit@10", "nDCG@10", "R@10"], per_query=True)
    assert res["mean"] == {"RR": 0.5, "hit@10": 0.5, "nDCG@10": 0.5, "R@10": 0.5}  # over q1 and q3, every one
    assert set(res["per_query"]) == {"q1", "q3"}
    # only the run's judged questions (trec_eval without -c)
    assert evaluate(run, qrels, ["RR", "hit@10"], questions="run") == {"RR": 1.0, "hit@10": 1.0}
    with pytest.raises(InputError, match="no judged question"):
        evaluate(run_of({"q2": ["b"]}), qrels, ["RR"], questions="run")
    with pytest.raises(InputError) as bad:
        evaluate(run, qrels, ["RR"], questions="all")
    assert str(bad.value) == "evaluate: option 'questions' takes one of judged, run, not 'all'"


def test_summary_counts_scored_left_out_and_counted_zero():
    from inferqa.evaluation.stage import evaluate as evaluate_runs

    qrels = Qrels({"q1": {"a": 1}, "q3": {"c": 2}, "q4": {"d": 0}})
    run = run_of({"q1": ["a"], "q2": ["b"], "q4": ["d"]})
    with pytest.warns(UserWarning):
        (e,) = evaluate_runs([run], qrels=qrels, metrics=["RR", "hit@10", "R@5"])
    assert (e.scored, e.left_out, e.counted_zero) == (3, 1, 1)
    assert e.summary() == "3 questions scored, 1 left out (not judged), 1 counted 0 (judged, not in the run)"
    assert e.means["hit@10"] == pytest.approx(1 / 3)  # q4 has no relevant passage: 0, as ir_measures


def test_cli_counts_questions_and_warns_once_for_a_partial_split(tmp_path, monkeypatch, capsys, demo_bench_8q):
    import json

    from conftest import run_cli

    bench = demo_bench_8q
    test = bench.split_qids("test")
    run = Run({q: [(next(iter(bench.qrels[q])), 1.0)] for q in [*test[1:], *bench.split_qids("train")[:1]]})
    run.to_file(tmp_path / "r.trec")
    bench.qrels.only(test).to_file(tmp_path / "test.qrels")
    args = ("evaluate", tmp_path / "r.trec", "-m", "RR,hit@10,nDCG@10")
    # qrels of the test questions only: the train question is left out of every measure alike
    code, out, err = run_cli(monkeypatch, capsys, *args, "--qrels", tmp_path / "test.qrels", "--json")
    got = json.loads(out)
    assert code in (0, None) and (got["questions"], got["left_out"], got["counted_zero"]) == (len(test), 1, 1)
    want = evaluate(run, bench.qrels.only(test), ["RR", "hit@10", "nDCG@10"])
    assert got["metrics"] == pytest.approx(want) and want["RR"] == pytest.approx((len(test) - 1) / len(test))
    code, out, err = run_cli(monkeypatch, capsys, *args, "--bench", bench.path, "--split", "test")
    assert code in (0, None) and len(err.strip().splitlines()) == 1
    assert err.startswith(f"inferqa: warning: r lacks 1 of the {len(test)} judged questions of split test")


def test_cli_evaluates_several_runs_one_row_each_and_per_query_csv_in_fractions(tmp_path, monkeypatch, capsys,
                                                                                 demo_bench_8q):
    import csv
    import io
    import json

    from conftest import run_cli

    bench = demo_bench_8q
    test = bench.split_qids("test")
    good = Run({q: [(p, 2.0 - i) for i, p in enumerate(list(bench.qrels[q])[:2])] for q in test})
    worse = Run({q: list(reversed(r)) for q, r in good.items()})
    good.to_file(tmp_path / "good.trec")
    worse.to_file(tmp_path / "worse.trec")
    args = ("evaluate", tmp_path / "good.trec", tmp_path / "worse.trec", "--bench", bench.path, "--split", "test",
            "-m", "RR,nDCG@10")
    code, out, err = run_cli(monkeypatch, capsys, *args, "--json")
    assert code in (0, None), err
    got = json.loads(out)["runs"]
    assert [r["run"] for r in got] == ["good", "worse"]
    for r, run in zip(got, (good, worse)):
        assert r["metrics"] == pytest.approx(evaluate(run, bench, ["RR", "nDCG@10"], split="test"))
    code, out, err = run_cli(monkeypatch, capsys, *args, "--format", "md")
    lines = out.splitlines()
    assert lines[2] == "| run | RR | nDCG@10 |"
    assert lines[4] == f"| good | {100 * got[0]['metrics']['RR']:.2f} | {100 * got[0]['metrics']['nDCG@10']:.2f} |"
    assert lines[5].startswith("| worse | ")
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "worse.trec", "--bench", bench.path,
                             "--split", "test", "-m", "RR,hit@1", "--per-query", "--format", "csv")
    rows = list(csv.reader(io.StringIO(out)))
    want = evaluate(worse, bench, ["RR", "hit@1"], split="test", per_query=True)
    assert rows[0] == ["question", "RR", "hit@1"] and len(rows) == len(test) + 2
    assert {r[0]: [float(r[1]), float(r[2])] for r in rows[1:-1]} == {
        q: [v["RR"], v["hit@1"]] for q, v in want["per_query"].items()}  # fractions, every digit
    assert rows[-1] == ["mean", repr(want["mean"]["RR"]), repr(want["mean"]["hit@1"])]


def test_evaluate_scores_the_one_split_that_holds_the_run_as_retrieve_made_it(demo_bench_8q):
    from inferqa.evaluation.metrics import ScopeWarning
    from inferqa.evaluation.stage import evaluate as evaluate_runs

    bench = demo_bench_8q
    test, train = bench.split_qids("test"), bench.split_qids("train")
    hit = {q: next(p for p, label in bench.qrels[q].items() if label >= 1) for q in bench.questions}
    run = Run({q: [(hit[q] if i == 0 else hit[train[0]], 1.0)] for i, q in enumerate(test)})  # only the first hits
    (default,) = evaluate_runs(run, bench=bench, metrics="hit@10")
    (explicit,) = evaluate_runs(run, bench=bench, split="test", metrics="hit@10")
    assert default.means == explicit.means == {"hit@10": pytest.approx(1 / len(test))}
    assert (default.inferred_split, explicit.inferred_split) == ("test", None)
    assert default.summary().startswith(f"{len(test)} questions scored (split test, which holds every question")
    with pytest.warns(ScopeWarning, match=f"lacks {len(bench.questions) - len(test)} of the"):
        (every,) = evaluate_runs(run, bench=bench, split="all", metrics="hit@10")
    assert every.scored == len(bench.questions) and every.means["hit@10"] == pytest.approx(1 / len(bench.questions))
    spanning = Run({q: [(hit[q], 1.0)] for q in [*test, train[0]]})  # two splits: every judged question
    with pytest.warns(ScopeWarning):
        (wide,) = evaluate_runs(spanning, bench=bench, metrics="hit@10")
    assert wide.inferred_split is None and wide.scored == len(bench.questions)
    (paper,) = evaluate_runs(run, bench=bench, metrics="hit@10", protocol="paper")  # the run's questions
    assert paper.inferred_split is None and paper.scored == len(test)
