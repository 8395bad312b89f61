"""Redundancy-aware ranking (hint-groups from hint text) and run fusion (RRF, weighted),
against hand-worked examples; both through the CLI and the experiment YAML."""

from __future__ import annotations

from functools import partial

import pytest

from inferqa.formats.benchmark import Benchmark
from conftest import run_cli
from inferqa.errors import InputError
from inferqa.experiments.config import config_from_dict
from inferqa.records import Hint, passage_id, Question
from inferqa.formats import Run
from inferqa.diversification import diversify
from inferqa.retrieve.fusion import fuse


@pytest.fixture(scope="module")
def bench(bench_factory) -> Benchmark:
    """Two questions; q2 shares the hint 'It is red.' with q1."""
    qs = [Question("q1", "Which planet?", ["Mars"], [Hint("It is red."), Hint("It is fourth."), Hint("It is dusty.")]),
          Question("q2", "Which fruit?", ["Apple"], [Hint("It is red."), Hint("It grows on trees."),
                                                     Hint("It keeps doctors away.")])]
    return bench_factory(qs, leak_policy="none", split=(0.0, 0.0, 1.0))


def as_written(folder, run):
    """`run` as a command writes it: Run.to_file breaks the ties of diversify's floors for trec_eval."""
    run.to_file(folder / "written.trec")
    return Run.from_file(folder / "written.trec")


def pid(qid, *order):
    return passage_id(qid, order, 3)


def test_at_most_n_per_hint_group_then_the_rest_in_order(bench):
    ranked = [(pid("q1", 0, 1), 6.0), (pid("q1", 1, 0), 5.0), (pid("q1", 0), 4.0), (pid("q1", 0, 1, 2), 3.0),
              (pid("q1", 2, 1, 0), 2.0), (pid("q1", 1), 1.0)]
    out = diversify(Run({"q1": ranked}), bench, 1)["q1"]
    assert [p for p, _ in out] == [pid("q1", 0, 1), pid("q1", 0), pid("q1", 0, 1, 2), pid("q1", 1),
                                   pid("q1", 1, 0), pid("q1", 2, 1, 0)]
    assert [s for _, s in out] == [6.0, 4.0, 3.0, 1.0, 1.0, 1.0]  # moved passages clamped below the head
    assert diversify(Run({"q1": ranked}), bench, 2)["q1"] == ranked


def test_groups_come_from_hint_text_not_the_question_id(bench):
    # q2's first hint is q1's first hint: the same text, so one group across questions
    ranked = [(pid("q1", 0), 3.0), (pid("q2", 0), 2.0), (pid("q2", 1), 1.0)]
    out = diversify(Run({"q1": ranked}), bench, 1)["q1"]
    assert [p for p, _ in out] == [pid("q1", 0), pid("q2", 1), pid("q2", 0)]


@pytest.fixture(scope="module")
def families(bench_factory) -> Benchmark:
    """q1 and q2 share 'It is red.'; q3 shares nothing; q4's third hint repeats q1's 'It is
    fourth.' but was dropped after the build (metadata.dropped_hints), so it links nothing."""
    qs = [Question("q1", "Which planet?", ["Mars"], [Hint("It is red."), Hint("It is fourth."), Hint("It is dusty.")]),
          Question("q2", "Which fruit?", ["Apple"], [Hint("It is red."), Hint("It grows on trees."),
                                                     Hint("It keeps doctors away.")]),
          Question("q3", "Which metal?", ["Gold"], [Hint("It is yellow."), Hint("It is heavy."), Hint("It is rare.")]),
          Question("q4", "Which place?", ["Fourth Street"], [Hint("It is a street."), Hint("It is in a town."),
                                                             Hint("It is fourth.")], {"dropped_hints": [2]})]
    return bench_factory(qs, leak_policy="none", split=(0.0, 0.0, 1.0))


def test_linked_groups_join_passages_through_shared_hint_text(families):
    ranked = [(pid("q1", 0), 5.0), (pid("q2", 1), 4.0), (pid("q1", 1, 2), 3.0), (pid("q3", 0), 2.0),
              (pid("q3", 1, 2), 1.0)]
    # q2 reaches q1 through 'It is red.' (a passage of q1 holds it with q1's other hints)
    out = diversify(Run({"q1": ranked}), families, 1, by="linked")["q1"]
    assert [p for p, _ in out] == [pid("q1", 0), pid("q3", 0), pid("q2", 1), pid("q1", 1, 2), pid("q3", 1, 2)]
    assert [s for _, s in out] == [5.0, 2.0, 2.0, 2.0, 1.0]
    assert diversify(Run({"q1": ranked}), families, 2, by="linked")["q1"] == [
        (pid("q1", 0), 5.0), (pid("q2", 1), 4.0), (pid("q3", 0), 2.0), (pid("q3", 1, 2), 1.0), (pid("q1", 1, 2), 1.0)]
    # by set, the five are five groups: nothing moves
    assert diversify(Run({"q1": ranked}), families, 1)["q1"] == ranked


def test_a_dropped_hint_links_nothing(families):
    ranked = [(pid("q1", 0), 3.0), (pid("q4", 0), 2.0), (pid("q3", 0), 1.0)]
    assert diversify(Run({"q1": ranked}), families, 1, by="linked")["q1"] == ranked
    with pytest.raises(InputError, match="unknown hint-group 'sentence'"):
        diversify(Run({"q1": ranked}), families, 1, by="sentence")


def test_diversified_run_saves_and_loads(bench, tmp_path):
    ranked = [(pid("q1", 0, 1), 0.9), (pid("q1", 1, 0), 0.8), (pid("q1", 2), 0.1)]
    diversify(Run({"q1": ranked}), bench, 1).to_file(tmp_path / "d.trec")
    assert [p for p, _ in Run.from_file(tmp_path / "d.trec")["q1"]] == [pid("q1", 0, 1), pid("q1", 2), pid("q1", 1, 0)]
    with pytest.raises(InputError, match="positive"):
        diversify(Run({"q1": ranked}), bench, 0)
    with pytest.raises(InputError, match="unknown passage id .q9_100_0. \\(not in the corpus"):
        diversify(Run({"q1": [("q9_100_0", 1.0)]}), bench, 1)


A = Run({"q": [("a", 3.0), ("b", 2.0), ("c", 1.0)]})
B = Run({"q": [("b", 10.0), ("d", 5.0)]})


def test_rrf_by_hand():
    out = fuse([A, B], "rrf")["q"]
    assert [p for p, _ in out] == ["b", "a", "d", "c"]
    want = {"a": 1 / 61, "b": 1 / 62 + 1 / 61, "c": 1 / 63, "d": 1 / 62}
    assert all(abs(s - want[p]) < 1e-12 for p, s in out)
    assert [p for p, _ in fuse([A, B], "rrf", rrf_k=0, weights=[3, 1])["q"]] == ["a", "b", "c", "d"]


def test_weighted_by_hand():
    # minmax: A → a 1, b .5, c 0; B → b 1, d 0; a missing passage gets the run's lowest (0)
    out = fuse([A, B], "weighted")["q"]
    assert out == [("b", 1.5), ("a", 1.0), ("d", 0.0), ("c", 0.0)]  # d ranked 2nd in B, c 3rd in A
    out = fuse([A, B], "weighted", weights=[2, 1])["q"]
    assert out[:2] == [("a", 2.0), ("b", 2.0)]  # tie: a was first in the first run
    z = dict(fuse([A, B], "weighted", norm="zscore")["q"])
    sa = 1 / (2 / 3) ** 0.5  # A's z-scores are ±1.2247, B's ±1
    assert abs(z["a"] - (sa - 1)) < 1e-9 and abs(z["b"] - 1) < 1e-9 and abs(z["c"] - (-sa - 1)) < 1e-9
    assert fuse([A, B], "rrf", depth=2)["q"] == fuse([A, B], "rrf")["q"][:2]
    with pytest.raises(InputError, match="fusion method"):
        fuse([A, B], "borda")
    with pytest.raises(InputError, match="at least two"):
        fuse([A], "rrf")


def test_cli_retrieve_diversify_and_fuse(bench, tmp_path, monkeypatch, capsys):
    assert run_cli(monkeypatch, capsys, "index", bench.path, "-r", "bm25")[0] == 0
    args = ["retrieve", bench.path, "-r", "bm25", "--split", "all", "--depth", "14"]
    assert run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "plain.trec")[0] == 0
    assert run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "div.trec", "--diversify", "1")[0] == 0
    plain, div = Run.from_file(tmp_path / "plain.trec"), Run.from_file(tmp_path / "div.trec")
    written = partial(as_written, tmp_path)
    assert div == written(diversify(plain, bench, 1)) and div != plain
    code, _, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "x.trec", "--diversify", "0")
    assert code == 2 and "positive" in err and not (tmp_path / "x.trec").exists()
    assert run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "q.trec", "--diversify", "1",
                   "--diversify-by", "linked")[0] == 0
    assert Run.from_file(tmp_path / "q.trec") == written(diversify(plain, bench, 1, by="linked"))
    for bad, why in ((["--diversify-by", "linked"], "needs --diversify"),
                     (["--diversify", "1", "--diversify-by", "qid"], "unknown hint-group")):
        code, _, err = run_cli(monkeypatch, capsys, *args, "--out", tmp_path / "x.trec", *bad)
        assert code == 2 and why in err and len(err.strip().splitlines()) == 1 and not (tmp_path / "x.trec").exists()
    code, out, _ = run_cli(monkeypatch, capsys, "fuse", tmp_path / "plain.trec", tmp_path / "div.trec",
                           "--method", "weighted", "--weights", "1,2", "--out", tmp_path / "f.trec")
    assert code == 0
    fused, want = Run.from_file(tmp_path / "f.trec"), fuse([plain, div], "weighted", weights=[1, 2])
    assert list(fused) == list(want)
    for q in want:
        assert [p for p, _ in fused[q]] == [p for p, _ in want[q]]
        assert max(abs(a - b) for (_, a), (_, b) in zip(fused[q], want[q])) < 1e-6
    code, _, err = run_cli(monkeypatch, capsys, "fuse", tmp_path / "plain.trec", tmp_path / "div.trec",
                           "--method", "mean", "--out", tmp_path / "g.trec")
    assert code == 2 and "fusion method" in err


def test_yaml_diversify():
    raw = {"name": "x", "benchmark": "demo", "retrievers": [{"kind": "bm25", "diversify": 2}],
           "rerankers": [{"name": "r", "kind": "llm-pointwise", "diversify": 1}]}
    cfg = config_from_dict(raw)
    assert cfg.retrievers[0].diversify == 2 and cfg.rerankers[0].diversify == 1
    assert cfg.retrievers[0].diversify_by == "set"
    raw["rerankers"][0]["diversify_by"] = "linked"
    assert config_from_dict(raw).rerankers[0].diversify_by == "linked"
    raw["rerankers"][0]["diversify_by"] = "qid"
    with pytest.raises(InputError, match="rerankers\\[0\\].diversify_by"):
        config_from_dict(raw)
    raw["rerankers"][0] = {"name": "r", "kind": "llm-pointwise", "diversify_by": "linked"}
    with pytest.raises(InputError, match="needs diversify"):
        config_from_dict(raw)
    raw["retrievers"][0]["diversify"] = 0
    with pytest.raises(InputError, match="retrievers\\[0\\].diversify"):
        config_from_dict(raw)


def test_linked_diversify_through_rerank_cli_and_experiment(families, tmp_path, monkeypatch, capsys):
    from inferqa.experiments.runner import run_experiment

    assert run_cli(monkeypatch, capsys, "index", families.path, "-r", "bm25")[0] == 0
    base = ["retrieve", families.path, "-r", "bm25", "--split", "all", "--depth", "40"]
    assert run_cli(monkeypatch, capsys, *base, "--out", tmp_path / "plain.trec")[0] == 0
    plain = Run.from_file(tmp_path / "plain.trec")
    # rerank (the oracle reranker: no model) then diversify by linked family
    assert run_cli(monkeypatch, capsys, "rerank", tmp_path / "plain.trec", "--bench", families.path, "--split", "all",
                   "-r", "oracle", "--depth", "40", "--diversify", "1", "--diversify-by", "linked",
                   "--out", tmp_path / "r.trec")[0] == 0
    assert run_cli(monkeypatch, capsys, "rerank", tmp_path / "plain.trec", "--bench", families.path, "--split", "all",
                   "-r", "oracle", "--depth", "40", "--out", tmp_path / "o.trec")[0] == 0
    want = as_written(tmp_path, diversify(Run.from_file(tmp_path / "o.trec"), families, 1, by="linked"))
    assert Run.from_file(tmp_path / "r.trec") == want and want != Run.from_file(tmp_path / "o.trec")
    # the same grain in an experiment file: its stored run is the diversified plain run
    cfg = config_from_dict({"name": "x", "benchmark": {"path": str(families.path)}, "split": "all",
                            "retrievers": [{"name": "fam", "kind": "bm25", "depth": 40, "diversify": 1,
                                            "diversify_by": "linked"}], "oracles": False})
    run_experiment(cfg, tmp_path / "exp", progress=False, log=lambda _: None, write_outputs=False)
    stored = [Run.from_file(f) for f in (tmp_path / "exp").rglob("run.trec") if "retrieve-fam" in str(f)]
    assert stored == [as_written(tmp_path, diversify(plain, families, 1, by="linked"))] and stored[0] != plain
