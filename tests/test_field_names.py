"""The field's names and files: ir_measures/ranx/trec_eval metric names, tie order in written
runs, per-split qrels and topics, ir_datasets access; checked against ir_measures and pytrec_eval."""

from __future__ import annotations

import json
import math

import pytest

from conftest import random_graded_case, run_cli
from inferqa.formats import iter_corpus
from inferqa.errors import InputError
from inferqa.evaluation import evaluate, parse_metric
from inferqa.formats import Qrels, Run
from inferqa.formats.trec import trec_scores

ir_measures = pytest.importorskip("ir_measures")


ALIASES = ["RR", "RR@10", "R@5", "R@100", "P@5", "AP", "AP@20", "nDCG@10", "nDCG@100", "Success@1",
           "Success@10"]
TREC_EVAL = {"recip_rank": "RR", "P_5": "P@5", "recall_100": "R@100", "map": "AP", "map_cut_20": "AP@20",
             "ndcg_cut_10": "nDCG@10", "success_10": "Success@10"}
RANX = {"mrr": "RR", "recall@100": "R@100", "precision@5": "P@5", "map@20": "AP@20", "hit_rate@10": "Success@10",
        "mrr@10": "RR@10"}


@pytest.mark.parametrize("seed", [1, 2])
def test_other_tools_names_give_ir_measures_values(seed):
    run, qrels = random_graded_case(seed)
    ir_qrels = [ir_measures.Qrel(q, d, lab) for q, docs in qrels.items() for d, lab in docs.items()]
    ir_run = [ir_measures.ScoredDoc(q, d, s) for q, ranked in run.items() for d, s in ranked]
    theirs = {str(k): v for k, v in ir_measures.calc_aggregate([ir_measures.parse_measure(n) for n in ALIASES],
                                                               ir_qrels, ir_run).items()}
    ours = evaluate(run, qrels, ALIASES + list(TREC_EVAL) + list(RANX))
    for name in ALIASES:  # keyed as spelled
        assert ours[name] == pytest.approx(theirs[name], abs=1e-9), name
    for name, same in {**TREC_EVAL, **RANX}.items():
        assert ours[name] == pytest.approx(theirs[same], abs=1e-9), name
    # nDCG@k gains the label whatever the case; 2^label - 1 is ndcg_exp@k (ranx's ndcg_burges@k)
    lin = evaluate(run, qrels, ["ndcg@10"])["ndcg@10"]
    assert ours["nDCG@10"] == lin == evaluate(run, qrels, ["NDCG@10"])["NDCG@10"]
    exp = evaluate(run, qrels, ["ndcg_burges@10", "ndcg_exp@10", "nDCG(gain=exp)@10"])
    assert len(set(exp.values())) == 1 and exp["ndcg_exp@10"] != pytest.approx(lin, abs=1e-6)


def test_alias_parsing_keys_and_errors():
    assert parse_metric("RR").family == "RR" and parse_metric("RR").name == "RR"
    assert parse_metric("ndcg_cut_10").canonical() == "nDCG@10" and parse_metric("ndcg_cut_10").k == 10
    assert parse_metric("NDCG@10").canonical() == parse_metric("nDCG@10").canonical() == "nDCG@10"
    assert parse_metric("Success@5").family == "Success" and parse_metric("map_cut_100").k == 100
    for bad in ("Success", "R", "R@0", "Recall@x", "bpref"):
        with pytest.raises(InputError):
            parse_metric(bad)


def test_tied_scores_are_written_strictly_decreasing_as_float32():
    import numpy as np

    ranked = [("a", 2.5), ("b", 2.5), ("c", 2.5), ("d", 2.4999999), ("e", 1.0), ("f", -0.0), ("g", 0.0),
              ("h", 1e30), ("i", 1e30)][:7]
    col = trec_scores(ranked)
    assert col[0] == "2.500000" and col[4] == "1.000000"  # untied lines keep 6 decimals
    as32 = np.array(col, dtype=np.float32)
    assert (np.diff(as32) < 0).all(), col
    assert abs(float(col[3]) - 2.5) < 1e-5  # each tied line moves by a float32 step or so
    big = trec_scores([("h", 1e30), ("i", 1e30), ("j", -1e30)])
    assert (np.diff(np.array(big, dtype=np.float32)) < 0).all()


def test_trec_eval_order_equals_ours_on_a_tied_run(tmp_path):
    """Ties broken by passage id would put d (relevant) first; our file order puts it last."""
    pytrec_eval = pytest.importorskip("pytrec_eval")
    run = Run({"q": [("a", 1.0), ("b", 1.0), ("c", 1.0), ("d", 1.0)]})
    qrels = Qrels({"q": {"d": 1}})
    run.to_file(tmp_path / "r.trec")
    ours = evaluate(tmp_path / "r.trec", qrels, ["RR"])["RR"]
    assert ours == pytest.approx(0.25)
    read = {}
    for line in (tmp_path / "r.trec").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        read.setdefault(q, {})[d] = float(s)
    theirs = pytrec_eval.RelevanceEvaluator(dict(qrels), {"recip_rank"}).evaluate(read)["q"]["recip_rank"]
    assert theirs == pytest.approx(ours)
    unbroken = {"q": {d: 1.0 for d in "abcd"}}  # as the file would be without the tie break
    assert pytrec_eval.RelevanceEvaluator(dict(qrels), {"recip_rank"}).evaluate(unbroken)["q"]["recip_rank"] == 1.0


def test_export_qrels_and_topics_of_a_split(monkeypatch, capsys, tmp_path, demo_bench_8q):
    bench = demo_bench_8q
    test_q = bench.split_qids("test")
    code, out, err = run_cli(monkeypatch, capsys, "export", "qrels", "--bench", bench.path, "--split", "test",
                             "--out", tmp_path / "test.qrels")
    assert code in (0, None), err
    lines = (tmp_path / "test.qrels").read_text().splitlines()
    assert {line.split()[0] for line in lines} == set(test_q)
    assert len(lines) == sum(len(bench.qrels[q]) for q in test_q)
    assert Qrels.from_file(tmp_path / "test.qrels") == {q: bench.qrels[q] for q in test_q}
    code, out, err = run_cli(monkeypatch, capsys, "export", "topics", "--bench", bench.path, "--split", "test",
                             "--out", tmp_path / "test.tsv")
    assert code in (0, None), err
    rows = [line.split("\t") for line in (tmp_path / "test.tsv").read_text().splitlines()]
    assert rows == [[q, bench.questions[q].text] for q in test_q]
    code, _, err = run_cli(monkeypatch, capsys, "export", "qrels", "--bench", bench.path, "--split", "nope",
                           "--out", tmp_path / "x.qrels")
    assert code == 2 and "unknown split 'nope'" in err and not (tmp_path / "x.qrels").exists()


def test_ir_datasets_registration(tmp_path, demo_bench_8q):
    ir_datasets = pytest.importorskip("ir_datasets")
    from inferqa.irds import register

    bench = demo_bench_8q
    names = register(bench, "demo8")
    assert names == ["inferqa/demo8", *[f"inferqa/demo8/{s}" for s in bench.splits]]
    assert register(bench.path, "demo8") == names  # the same directory again: a no-op
    other = tmp_path / "other"
    import shutil

    shutil.copytree(bench.path, other, ignore=shutil.ignore_patterns("indexes"))
    with pytest.raises(InputError, match="taken"):
        register(other, "demo8")
    ds = ir_datasets.load("inferqa/demo8/test")
    test_q = bench.split_qids("test")
    assert [(q.query_id, q.text) for q in ds.queries_iter()] == [(q, bench.questions[q].text) for q in test_q]
    assert {(r.query_id, r.doc_id, r.relevance) for r in ds.qrels_iter()} == {
        (q, p, lab) for q in test_q for p, lab in bench.qrels[q].items()}
    docs = list(ds.docs_iter())
    assert len(docs) == ds.docs_count() == sum(1 for _ in iter_corpus(bench))
    assert docs[0].text == bench.passage_text(docs[0].doc_id)
    assert ds.docs_store().get(docs[5].doc_id).text == docs[5].text
    everything = ir_datasets.load("inferqa/demo8")
    assert sum(1 for _ in everything.queries_iter()) == len(bench.questions)


def test_quit_build_as_ir_dataset(tmp_path):
    """A QUIT release build (its own splits, ids and labels) loads by name like any benchmark."""
    ir_datasets = pytest.importorskip("ir_datasets")
    from inferqa.construct import build_benchmark
    from inferqa.data import load_questions
    from inferqa.irds import register
    from test_quit_release import record

    files = {"train": [record("Q_train_1")], "dev": [record("Q_dev_1")], "test": [record("Q_test_1")]}
    for name, recs in files.items():
        (tmp_path / f"{name}.json").write_text(json.dumps(recs), encoding="utf-8")
    questions = [q for n in files for q in load_questions(tmp_path / f"{n}.json")]
    build_benchmark(questions, tmp_path / "quit", split="source", leak_policy="none")
    assert register(tmp_path / "quit") == ["inferqa/quit", "inferqa/quit/train", "inferqa/quit/dev",
                                           "inferqa/quit/test"]
    ds = ir_datasets.load("inferqa/quit/test")
    assert [q.query_id for q in ds.queries_iter()] == ["Q_test_1"]
    labels = {r.relevance for r in ds.qrels_iter()}
    assert labels == {1, 2} and ds.docs_count() == 3 * 325
    assert ds.docs_store().get("Q_test_1_10110_320").text == "Q_test_1 clue number 3. Q_test_1 clue number 2. " \
                                                            "Q_test_1 clue number 0."


@pytest.mark.slow
def test_wikihint_bm25_equals_ir_measures_over_exported_qrels(monkeypatch, capsys, tmp_path, wikihint_file):
    pytrec_eval = pytest.importorskip("pytrec_eval")
    from ir_measures import RR, R, nDCG

    bench = tmp_path / "wh"
    for args in (("build", wikihint_file, "--out", bench),
                 ("index", bench, "-r", "bm25"),
                 ("retrieve", bench, "-r", "bm25", "--split", "test", "--depth", 100, "--out", tmp_path / "bm25.trec"),
                 ("export", "qrels", "--bench", bench, "--split", "test", "--out", tmp_path / "test.qrels")):
        code, _, err = run_cli(monkeypatch, capsys, *args)
        assert code in (0, None), err
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "bm25.trec", "--bench", bench, "--split",
                             "test", "--metrics", "nDCG@10,ndcg@10,RR,R@100", "--json")
    assert code in (0, None), err
    ours = json.loads(out)["metrics"]
    qrels = list(ir_measures.read_trec_qrels(str(tmp_path / "test.qrels")))
    theirs = ir_measures.calc_aggregate([nDCG @ 10, RR, R @ 100], qrels,
                                        ir_measures.read_trec_run(str(tmp_path / "bm25.trec")))
    assert ours["nDCG@10"] == pytest.approx(theirs[nDCG @ 10], abs=1e-9)
    assert ours["ndcg@10"] == pytest.approx(theirs[nDCG @ 10], abs=1e-9)  # labels are all 1 here
    assert ours["RR"] == pytest.approx(theirs[RR], abs=1e-9)
    assert ours["R@100"] == pytest.approx(theirs[R @ 100], abs=1e-9)
    run = {}
    for line in (tmp_path / "bm25.trec").read_text().splitlines():
        q, _, d, _, s, _ = line.split()
        run.setdefault(q, {})[d] = float(s)
    judged = dict(Qrels.from_file(tmp_path / "test.qrels"))
    per_q = pytrec_eval.RelevanceEvaluator(judged, {"ndcg_cut.10", "recip_rank"}).evaluate(run)
    assert sum(v["ndcg_cut_10"] for v in per_q.values()) / len(per_q) == pytest.approx(ours["nDCG@10"], abs=1e-9)
    assert not math.isnan(ours["RR"])


def test_ir_datasets_serves_what_export_qrels_and_topics_write(tmp_path, monkeypatch, capsys, demo_bench_8q):
    """One split's queries and qrels, in the same order, whether read from `export qrels|topics`
    files or from the registered ir_datasets dataset (a question text with a tab and a newline
    is one line in both)."""
    ir_datasets = pytest.importorskip("ir_datasets")
    import shutil

    from inferqa.formats.benchmark import Benchmark
    from inferqa.irds import register

    root = tmp_path / "tabbed"
    shutil.copytree(demo_bench_8q.path, root, ignore=shutil.ignore_patterns("indexes"))
    first = demo_bench_8q.split_qids("test")[0]
    rows = [json.loads(line) for line in (root / "questions.jsonl").read_text().splitlines()]
    for row in rows:
        if row["id"] == first:
            row["text"] = "Which\tcity is\n  it?"
    (root / "questions.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    bench = Benchmark(root)
    assert bench.questions[first].text == "Which\tcity is\n  it?"
    for what in ("qrels", "topics"):
        code, _, err = run_cli(monkeypatch, capsys, "export", what, "--bench", root, "--split", "test",
                               "--out", tmp_path / f"test.{what}")
        assert code in (0, None), err
    register(bench, "tabbed")
    ds = ir_datasets.load("inferqa/tabbed/test")
    topics = [line.split("\t") for line in (tmp_path / "test.topics").read_text().splitlines()]
    assert [[q.query_id, q.text] for q in ds.queries_iter()] == topics
    assert topics[0] == [first, "Which city is it?"]
    qrels = [line.split() for line in (tmp_path / "test.qrels").read_text().splitlines()]
    assert [[r.query_id, r.iteration, r.doc_id, str(r.relevance)] for r in ds.qrels_iter()] == qrels
    assert len(qrels) == sum(len(bench.qrels[q]) for q in bench.split_qids("test"))
