"""Oracle runs: oracle retriever, oracle reranker, optimal."""

from __future__ import annotations

import pytest

from inferqa.evaluation import evaluate, optimal, oracle_retriever
from inferqa.reranking import get_reranker
from inferqa.formats import Qrels, Run


@pytest.fixture
def qrels() -> Qrels:
    return Qrels({
        "q1": {"q1_100_0": 1, "q1_010_1": 2, "q1_110_01": 0, "q1_110_10": 2, "q1_001_2": 1},
        "q2": {"q2_100_0": 0},
    })


def test_oracle_retriever_is_seeded_and_complete(qrels):
    a = oracle_retriever(qrels, ["q1", "q2"], seed=7)
    b = oracle_retriever(qrels, ["q2", "q1"], seed=7)  # order of qids does not change a question's run
    assert a["q1"] == b["q1"]
    assert {p for p, _ in a["q1"]} == {"q1_100_0", "q1_010_1", "q1_110_10", "q1_001_2"}
    assert a["q2"] == []
    orders = {tuple(p for p, _ in oracle_retriever(qrels, ["q1"], seed=s)["q1"]) for s in range(30)}
    assert len(orders) > 5  # really shuffled
    scores = [s for _, s in a["q1"]]
    assert scores == sorted(scores, reverse=True) and len(set(scores)) == len(scores)
    only2 = oracle_retriever(qrels, ["q1"], seed=7, min_label=2)
    assert {p for p, _ in only2["q1"]} == {"q1_010_1", "q1_110_10"}


def test_oracle_reranker_sorts_by_label_stably(qrels):
    run = Run({"q1": [("q1_001_2", 9.0), ("q1_110_01", 8.0), ("q1_100_0", 7.0), ("q1_110_10", 6.0), ("x_100_0", 5.0)],
               "q2": [("q2_100_0", 1.0)]})
    oracle = get_reranker("oracle", qrels=qrels)
    out = Run({qid: oracle.rerank_question(qid, ranked, None, depth=len(ranked)) for qid, ranked in run.items()})
    assert [s for _, s in out["q1"]] == [2.0, 1.0, 1.0, 0.0, 0.0]  # its scores are the labels
    # below the reranking depth the run's order stays, like any reranker's
    head2 = oracle.rerank_question("q1", run["q1"], None, depth=2)
    assert [p for p, _ in head2] == ["q1_001_2", "q1_110_01", "q1_100_0", "q1_110_10", "x_100_0"]
    assert [p for p, _ in out["q1"]] == ["q1_110_10", "q1_001_2", "q1_100_0", "q1_110_01", "x_100_0"]
    assert [p for p, _ in out["q2"]] == ["q2_100_0"]
    before, after = evaluate(run, qrels, ["ndcg@5", "mrr"]), evaluate(out, qrels, ["ndcg@5", "mrr"])
    assert after["ndcg@5"] >= before["ndcg@5"] and after["mrr"] >= before["mrr"]


def test_optimal_reaches_the_ceiling(qrels):
    run = optimal(qrels, ["q1"])
    assert [p for p, _ in run["q1"]] == ["q1_010_1", "q1_110_10", "q1_100_0", "q1_001_2"]
    res = evaluate(run, qrels, ["ndcg@10", "hit@1", "recall@5", "mrr"], questions="run")
    assert res == {"ndcg@10": pytest.approx(1.0), "hit@1": 1.0, "recall@5": 1.0, "mrr": 1.0}


def test_oracle_on_a_benchmark(bench_factory):
    from inferqa.parameters import BUILD_SPLIT as SPLIT

    bench = bench_factory(3, top_k=2, split=SPLIT.default)
    run = oracle_retriever(bench, list(bench.questions), seed=1)
    assert all(len(r) == 4 for r in run.values())  # 2 hints: 0, 1, 01, 10
    assert evaluate(run, bench.qrels, ["hit@1", "recall@5"]) == {"hit@1": 1.0, "recall@5": 1.0}


def test_oracle_cli_without_seed_or_min_label_uses_the_declared_defaults(bench_factory, tmp_path, monkeypatch,
                                                                          capsys):
    """`inferqa oracle --kind retriever` with neither flag = oracle_retriever(seed=0, min_label=1)."""
    from conftest import run_cli
    from inferqa.formats import Run

    bench = bench_factory(4, root=tmp_path, name="b", split=(1.0,))
    code, _, err = run_cli(monkeypatch, capsys, "oracle", tmp_path / "b", "--kind", "retriever", "--split", "test",
                           "-o", tmp_path / "o.trec")
    assert code in (0, None), err
    want = oracle_retriever(bench, bench.split_qids("test"), seed=0, min_label=1)
    got = Run.from_file(tmp_path / "o.trec")
    assert {q: [p for p, _ in r] for q, r in got.items()} == {q: [p for p, _ in r] for q, r in want.items()}
    assert want != oracle_retriever(bench, bench.split_qids("test"), seed=1)  # the seed matters here
