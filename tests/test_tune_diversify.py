"""Choosing the adaptive diversification margin on a dev split: a benchmark whose dev
rankings are worked by hand, and the chosen margin, shares and means checked against them
and against `evaluate(diversify(...))` of each margin."""

from __future__ import annotations

import csv
import io
import json
import math

import pytest

from conftest import one_line_error, run_cli
from inferqa.construct import build_benchmark
from inferqa.errors import InputError
from inferqa.evaluation import evaluate
from inferqa.experiments.config import config_from_dict
from inferqa.formats import Benchmark, Run
from inferqa.records import Hint, Question, passage_id
from inferqa.diversification import check_diversify, diversify
from inferqa.diversification import query_margins
from inferqa.tune import tune_margin
from inferqa.tune.diversify import margin_at_share


def pid(qid, *order):
    return passage_id(qid, order, 3)


@pytest.fixture(scope="module")
def five(tmp_path_factory) -> Benchmark:
    """Five questions with their own hints (five linked families, one per question); a, b, c
    are dev, d and e test. Every passage of a question is relevant to it (label 1)."""
    qs = [Question(q, f"Question {q}?", [q.upper()], [Hint(f"{q} hint {i}.") for i in range(3)],
                   metadata={"split": "dev" if q in "abc" else "test"}) for q in "abcde"]
    out = tmp_path_factory.mktemp("tune") / "bench"
    build_benchmark(qs, out, top_k=3, leak_policy="none", split="source")
    return Benchmark(out)


C_TEN = [(0,), (1,), (2,), (0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1), (0, 1, 2)]
RUN = {
    # a: its own family leads e's by 5.0 - 4.0 = 1.0; diversifying keeps a relevant passage at rank 1
    "a": [(pid("a", 0), 5.0), (pid("a", 1), 4.9), (pid("a", 2), 4.8), (pid("e", 0), 4.0)],
    # b: ten passages of c's family, then b's own at rank 11: margin 3.0 - 2.5 = 0.5;
    # diversified, b's passage is 2nd
    "b": [*[(pid("c", *o), 3.0 - 0.05 * i) for i, o in enumerate(C_TEN)], (pid("b", 0), 2.5)],
    # c: no passage of its own: 0 on every measure either way; margin 6.0 - 4.0 = 2.0
    "c": [(pid("a", 0), 6.0), (pid("d", 0), 4.0)],
    # d (test): margin 0.05; it must not count
    "d": [(pid("e", 0), 1.0), (pid("d", 0), 0.95)],
}


def test_margins_of_the_dev_queries(five):
    assert query_margins(Run(RUN).only(["a", "b", "c"]), five, "linked") == pytest.approx(
        {"a": 1.0, "b": 0.5, "c": 2.0})


def test_default_grid_picks_the_smallest_best_margin_on_dev_only(five):
    t = tune_margin(Run(RUN), five, split="dev", by="linked", measures=("hit@1", "hit@10", "mrr"))
    assert (t.split, t.questions, t.metric, t.per_group, t.by) == ("dev", 3, "hit@10", 1, "linked")
    # shares 0, .1..1 of 3 queries diversify 0, 1, 2 or 3 of them (sorted margins 0.5, 1.0, 2.0)
    by_margin = {r.margin: r for r in t.rows}
    assert list(by_margin) == [0.75, 1.5, None, 0.0]  # hit@10 2/3 three times (smaller first), then 1/3
    assert {m: r.share for m, r in by_margin.items()} == pytest.approx({0.0: 0, 0.75: 1 / 3, 1.5: 2 / 3, None: 1})
    hand = {0.0: {"hit@1": 1 / 3, "hit@10": 1 / 3, "mrr": (1 + 1 / 11) / 3},
            0.75: {"hit@1": 1 / 3, "hit@10": 2 / 3, "mrr": (1 + 1 / 2) / 3}}
    hand[1.5] = hand[None] = hand[0.75]  # a and c score the same diversified
    for m, r in by_margin.items():
        assert r.scores == pytest.approx(hand[m])
    assert t.margin == 0.75 and t.best is t.rows[0]


@pytest.mark.parametrize("metric", ["ndcg@10", "ndcg_exp@10", "recall@5"])
def test_each_rows_means_are_evaluate_of_diversify(five, metric):
    dev = Run(RUN).only(["a", "b", "c"])
    t = tune_margin(Run(RUN), five, split="dev", margins=[0, 0.6, 1.2, 3.0, None], by="linked", metric=metric)
    for r in t.rows:
        direct = evaluate(diversify(dev, five, 1, by="linked", margin=r.margin), five, [metric], split="dev")[metric]
        assert r.scores[metric] == pytest.approx(direct)
    assert [r.scores[metric] for r in t.rows] == sorted((r.scores[metric] for r in t.rows), reverse=True)
    # a's head loses relevant passages when diversified: nDCG prefers 0.6 (b alone) over every larger margin
    if metric.startswith("ndcg"):
        assert t.margin == 0.6 and {r.margin: r.share for r in t.rows}[1.2] == pytest.approx(2 / 3)


def test_shares_pick_the_margin_quantile(five):
    t = tune_margin(Run(RUN), five, split="dev", shares=[0.4], by="linked")
    assert [(r.margin, r.share) for r in t.rows] == [(0.75, pytest.approx(1 / 3))]


@pytest.mark.parametrize("margins, share, expect", [
    ([0.5, 1.0, 2.0], 0.0, 0.0), ([0.5, 1.0, 2.0], 0.5, 1.5), ([0.5, 1.0, 2.0], 1.0, None),
    ([0.5, 0.5, 2.0], 1 / 3, 1.25),  # a tie takes both in
    ([0.5, math.inf], 0.5, None), ([0.2, 0.4, math.inf], 2 / 3, None)])
def test_margin_at_share_by_hand(margins, share, expect):
    assert margin_at_share(margins, share) == (expect if expect is None else pytest.approx(expect))


@pytest.mark.parametrize("kw, field", [({"margins": [0.1, -0.2]}, "margins"),
                                       ({"margins": [float("nan")]}, "margins"),
                                       ({"shares": [1.5]}, "shares"), ({"margins": []}, "margins"),
                                       ({"margins": [0.1], "shares": [0.5]}, "margins"),
                                       ({"split": "valid"}, "valid"), ({"by": "famliy"}, "diversify_by"),
                                       ({"metric": "hit@10,mrr"}, "metric"), ({"per_group": 0}, "diversify")])
def test_bad_tuning_inputs_are_one_line(five, kw, field):
    with pytest.raises(InputError) as exc:
        tune_margin(Run(RUN), five, **{"split": "dev", **kw})
    assert field in str(exc.value) and "\n" not in str(exc.value)


def test_tune_margin_is_the_stage_in_python_words(five):
    """`tune_margin` runs `inferqa tune-diversify`'s function: the same grid, the same checks."""
    from inferqa.tune.stage import tune_diversify

    want = tune_diversify(Run(RUN), bench=five, split="dev", diversify_by="linked", measures=["mrr"])
    got = tune_margin(Run(RUN), five, split="dev", by="linked", measures=("mrr",))
    assert got == want and got.by == "linked" and got.share == pytest.approx(1 / 3)
    with pytest.raises(InputError, match=r"^tune-diversify: option 'per_group' takes an integer ≥ 1, not '2' \(text\)$"):
        tune_margin(Run(RUN), five, split="dev", per_group="2")


# -- the share gate ------------------------------------------------------------------------

# Every query's head is two passages of one family, so diversifying moves the other family
# to rank 2. Margins (linked): a 1.0, b 0.5, c 2.0, d 0.05, e 0.5 (b and e tie).
SHARE_RUN = {
    "a": [(pid("a", 0), 5.0), (pid("a", 1), 4.9), (pid("e", 0), 4.0)],
    "b": [(pid("c", 0), 3.0), (pid("c", 1), 2.9), (pid("b", 0), 2.5)],
    "c": [(pid("a", 0), 6.0), (pid("a", 1), 5.9), (pid("d", 0), 4.0)],
    "d": [(pid("e", 0), 1.0), (pid("e", 1), 0.99), (pid("d", 0), 0.95)],
    "e": [(pid("a", 0), 1.5), (pid("a", 1), 1.4), (pid("e", 0), 1.0)],
}


@pytest.mark.parametrize("share, chosen", [
    (0.0, ""), (0.1, ""),  # round(0.5) = 0
    (0.2, "d"), (0.4, "bd"),  # the smallest margins first; b before e (same margin) by qid
    (0.5, "bd"),  # round(2.5) = 2, half to even
    (0.6, "bde"), (0.8, "abde"), (1.0, "abcde")])
def test_share_diversifies_the_queries_led_by_least(five, share, chosen):
    got = diversify(Run(SHARE_RUN), five, 1, by="linked", share=share)
    diversified = {q for q in SHARE_RUN if [p for p, _ in got[q]] != [p for p, _ in SHARE_RUN[q]]}
    assert "".join(sorted(diversified)) == chosen
    for q in diversified:  # the second passage went below the other family's; its score is clamped
        (p0, s0), (p1, _), (p2, s2) = SHARE_RUN[q]
        assert got[q] == [(p0, s0), (p2, s2), (p1, s2)]


def test_a_share_breaks_the_tie_a_margin_cannot(five):
    # a margin takes in both of a tie or neither: 0.5 diversifies d, 0.6 diversifies b, d and e
    by_margin = {m: {q for q, r in diversify(Run(SHARE_RUN), five, 1, "linked", margin=m).items()
                     if r != SHARE_RUN[q]} for m in (0.5, 0.6)}
    assert by_margin == {0.5: {"d"}, 0.6: {"b", "d", "e"}}
    shared = diversify(Run(SHARE_RUN), five, 1, "linked", share=0.6)
    assert shared == diversify(Run(SHARE_RUN), five, 1, "linked", margin=0.6)


@pytest.mark.parametrize("kw, needle", [
    ({"share": 1.5}, "diversify_share takes a number in [0, 1]"), ({"share": -0.1}, "in [0, 1]"),
    ({"share": float("nan")}, "in [0, 1], got nan"), ({"share": "half"}, "in [0, 1]"),
    ({"share": 0.5, "margin": 0.1}, "diversify_margin and diversify_share are two gates: give one")])
def test_bad_shares_are_one_line(five, kw, needle):
    with pytest.raises(InputError) as exc:
        diversify(Run(SHARE_RUN), five, 1, "linked", **kw)
    assert needle in str(exc.value) and "\n" not in str(exc.value)
    with pytest.raises(InputError, match="diversify_share needs diversify N"):
        check_diversify(None, None, None, 0.5)


def test_the_tuned_share_reproduces_the_tuned_margin_on_its_split(five):
    t = tune_margin(Run(RUN), five, split="dev", by="linked", metric="mrr")
    dev = Run(RUN).only(["a", "b", "c"])
    assert t.share == pytest.approx(1 / 3)  # b alone: dev margins 0.5, 1.0, 2.0, no tie
    by_share = evaluate(diversify(dev, five, 1, "linked", share=t.share), five, ["mrr"], split="dev")["mrr"]
    assert by_share == pytest.approx(t.best.scores["mrr"])


# -- the command line and the experiment file -------------------------------------------------

def test_cli_tune_diversify_prints_the_grid_best_first(five, tmp_path, monkeypatch, capsys):
    Run(RUN).to_file(tmp_path / "r.trec")
    args = ["tune-diversify", tmp_path / "r.trec", "--bench", five.path, "--diversify-by", "linked"]
    code, out, err = run_cli(monkeypatch, capsys, *args, "--json", "-m", "hit@1,mrr")
    assert code == 0, err
    got = json.loads(out)
    want = tune_margin(Run.from_file(tmp_path / "r.trec"), five, split="dev", by="linked", measures=("hit@1", "mrr"))
    assert (got["split"], got["questions"], got["margin"], got["metric"]) == ("dev", 3, 0.75, "hit@10")
    assert got["share"] == pytest.approx(1 / 3)
    assert [(r["margin"], r["share"]) for r in got["rows"]] == [(r.margin, pytest.approx(r.share)) for r in want.rows]
    assert [r["scores"] for r in got["rows"]] == [pytest.approx(r.scores) for r in want.rows]
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--margins", "0,0.6,3")
    rows = [ln.split("│")[1:-1] for ln in out.splitlines() if ln.startswith("│") and "margin" not in ln]
    assert [r[0].strip() for r in rows] == ["0.6", "3.0", "0.0"] and rows[0][1].strip() == "33.3"
    assert ("best on dev: --diversify 1 --diversify-by linked --diversify-margin 0.6 "
            "(or, as a share: --diversify-share 0.3333)") in " ".join(out.split())
    code, out, _ = run_cli(monkeypatch, capsys, *args, "--margins", "0,0.6,3", "--format", "csv")
    parsed = list(csv.reader(io.StringIO(out)))
    assert parsed[0][:2] == ["margin", "diversified %"] and [r[0] for r in parsed[1:4]] == ["0.6", "3.0", "0.0"]


@pytest.mark.parametrize("bad, needle", [
    (["--margins", "0.1,-0.2"], "margin must be a number ≥ 0"),
    (["--margins", "nan"], "tune-diversify: option 'margins' takes a number, not 'nan'"),
    (["--shares", "2"], "between 0 and 1"), (["--split", "valid"], "unknown split 'valid'"),
    (["--diversify-by", "famliy"], "unknown hint-group 'famliy' (did you mean 'linked'?)"),
    (["--diversify-by", "linkd"], "did you mean 'linked'"),
    (["--metric", "hit@"], "hit@"),
    (["--diversify", "0"], "tune-diversify: option 'per_group' takes an integer ≥ 1, not 0")])
def test_cli_tune_diversify_bad_inputs_are_one_line(five, tmp_path, monkeypatch, capsys, bad, needle):
    Run(RUN).to_file(tmp_path / "r.trec")
    code, _, err = run_cli(monkeypatch, capsys, "tune-diversify", tmp_path / "r.trec", "--bench", five.path, *bad)
    one_line_error(code, err, needle)


def test_cli_tune_diversify_unknown_run_or_bench(five, tmp_path, monkeypatch, capsys):
    Run(RUN).to_file(tmp_path / "r.trec")
    code, _, err = run_cli(monkeypatch, capsys, "tune-diversify", tmp_path / "none.trec", "--bench", five.path)
    one_line_error(code, err, "none.trec")
    code, _, err = run_cli(monkeypatch, capsys, "tune-diversify", tmp_path / "r.trec", "--bench", tmp_path / "nob")
    one_line_error(code, err, "nob")


@pytest.fixture(scope="module")
def gated(demo_bench_8q):
    """A margin between two of the BM25 run's query margins: some queries diversified, some not."""
    from inferqa.retrieve import get_retriever, question_queries

    bm25 = get_retriever("bm25")
    bm25.index(demo_bench_8q)
    plain = bm25.search(question_queries(demo_bench_8q, demo_bench_8q.split_qids("all")), 30)
    margin = margin_at_share(list(query_margins(plain, demo_bench_8q).values()), 0.5)
    assert margin is not None and margin > 0
    return demo_bench_8q, margin


def test_cli_and_yaml_gate_give_the_same_run(gated, tmp_path, monkeypatch, capsys):
    from inferqa.experiments.runner import run_experiment

    bench, margin = gated
    base = ["retrieve", bench.path, "-r", "bm25", "--split", "all", "--depth", "30"]
    assert run_cli(monkeypatch, capsys, *base, "--out", tmp_path / "plain.trec")[0] == 0
    assert run_cli(monkeypatch, capsys, *base, "--out", tmp_path / "full.trec", "--diversify", "1")[0] == 0
    assert run_cli(monkeypatch, capsys, *base, "--out", tmp_path / "gate.trec", "--diversify", "1",
                   "--diversify-margin", margin)[0] == 0
    plain, full, gate = (Run.from_file(tmp_path / f"{n}.trec") for n in ("plain", "full", "gate"))
    gaps = query_margins(plain, bench)
    for q in plain:  # each query is either as retrieved or fully diversified, by its own margin
        assert [p for p, _ in gate[q]] == [p for p, _ in (full if gaps[q] < margin else plain)[q]]
    assert {gaps[q] < margin for q in plain} == {True, False}
    assert gate != full and gate != plain
    cfg = config_from_dict({"name": "x", "benchmark": {"path": str(bench.path)}, "split": "all",
                            "retrievers": [{"name": "gate", "kind": "bm25", "depth": 30, "diversify": 1,
                                            "diversify_margin": margin}], "oracles": False})
    assert cfg.retrievers[0].diversify_margin == margin
    run_experiment(cfg, tmp_path / "exp", progress=False, log=lambda _: None, write_outputs=False)
    stored = [Run.from_file(f) for f in (tmp_path / "exp").rglob("run.trec") if "retrieve-gate" in str(f)]
    assert len(stored) == 1 and [[p for p, _ in stored[0][q]] for q in stored[0]] == [[p for p, _ in gate[q]]
                                                                                       for q in gate]
    # rerank: the gate after the reranker, on the reranked run's margins
    rr = ["rerank", tmp_path / "plain.trec", "--bench", bench.path, "--split", "all", "-r", "oracle", "--depth", "30"]
    assert run_cli(monkeypatch, capsys, *rr, "--out", tmp_path / "o.trec")[0] == 0
    assert run_cli(monkeypatch, capsys, *rr, "--out", tmp_path / "og.trec", "--diversify", "1",
                   "--diversify-margin", "0.5")[0] == 0
    want = diversify(Run.from_file(tmp_path / "o.trec"), bench, 1, margin=0.5)
    got = Run.from_file(tmp_path / "og.trec")
    assert [[p for p, _ in got[q]] for q in got] == [[p for p, _ in want[q]] for q in want]


def test_cli_yaml_and_library_share_gate_give_the_same_run(gated, tmp_path, monkeypatch, capsys):
    from inferqa.experiments.runner import run_experiment

    bench, _ = gated
    base = ["retrieve", bench.path, "-r", "bm25", "--split", "all", "--depth", "30"]
    assert run_cli(monkeypatch, capsys, *base, "--out", tmp_path / "plain.trec")[0] == 0
    assert run_cli(monkeypatch, capsys, *base, "--out", tmp_path / "share.trec", "--diversify", "1",
                   "--diversify-share", "0.5")[0] == 0
    plain, got = Run.from_file(tmp_path / "plain.trec"), Run.from_file(tmp_path / "share.trec")
    gaps = query_margins(plain, bench)
    half = sorted(gaps, key=lambda q: (gaps[q], q))[:round(len(gaps) / 2)]  # independent of diversify's own
    full = diversify(plain, bench, 1)
    assert {q: [p for p, _ in got[q]] for q in got} == {q: [p for p, _ in (full if q in half else plain)[q]]
                                                      for q in plain}
    lib = diversify(plain, bench, 1, share=0.5)
    assert [[p for p, _ in got[q]] for q in got] == [[p for p, _ in lib[q]] for q in lib]
    assert {q in half for q in plain} == {True, False} and got != full and got != plain
    cfg = config_from_dict({"name": "x", "benchmark": {"path": str(bench.path)}, "split": "all",
                            "retrievers": [{"name": "share", "kind": "bm25", "depth": 30, "diversify": 1,
                                            "diversify_share": 0.5}], "oracles": False})
    assert (cfg.retrievers[0].diversify_share, cfg.retrievers[0].diversify_margin) == (0.5, None)
    run_experiment(cfg, tmp_path / "exp", progress=False, log=lambda _: None, write_outputs=False)
    stored = [Run.from_file(f) for f in (tmp_path / "exp").rglob("run.trec") if "retrieve-share" in str(f)]
    assert len(stored) == 1 and {q: [p for p, _ in stored[0][q]] for q in stored[0]} == {
        q: [p for p, _ in got[q]] for q in got}
    # rerank: a share of the reranked run's queries (the oracle's margins are float32 steps that
    # the written file rounds, so which of the near-ties come first is not read back from it)
    rr = ["rerank", tmp_path / "plain.trec", "--bench", bench.path, "--split", "all", "-r", "oracle", "--depth", "30"]
    assert run_cli(monkeypatch, capsys, *rr, "--out", tmp_path / "o.trec")[0] == 0
    assert run_cli(monkeypatch, capsys, *rr, "--out", tmp_path / "os.trec", "--diversify", "1",
                   "--diversify-share", "0.5")[0] == 0
    oracle, rer = Run.from_file(tmp_path / "o.trec"), Run.from_file(tmp_path / "os.trec")
    spread = diversify(oracle, bench, 1)
    kept = {q for q in rer if [p for p, _ in rer[q]] == [p for p, _ in oracle[q]]}
    moved = {q for q in rer if [p for p, _ in rer[q]] == [p for p, _ in spread[q]] != [p for p, _ in oracle[q]]}
    assert kept | moved == set(oracle) and kept and 0 < len(moved) <= round(len(oracle) / 2)


@pytest.mark.parametrize("command", ["retrieve", "rerank"])
@pytest.mark.parametrize("bad, needle", [
    (["--diversify-margin", "0.1"], "--diversify-margin needs --diversify N"),
    (["--diversify", "1", "--diversify-margin", "-0.1"],
     "{command}: option 'diversify_margin' takes a number ≥ 0 or null, not -0.1"),
    (["--diversify", "1", "--diversify-margin", "nan"],
     "{command}: option 'diversify_margin' takes a number ≥ 0 or null, not 'nan'"),
    (["--diversify-share", "0.5"], "--diversify-share needs --diversify N"),
    (["--diversify", "1", "--diversify-share", "1.5"],
     "{command}: option 'diversify_share' takes a number in [0, 1] or null, not 1.5"),
    (["--diversify", "1", "--diversify-share", "-0.5"],
     "{command}: option 'diversify_share' takes a number in [0, 1] or null, not -0.5"),
    (["--diversify", "1", "--diversify-share", "nan"],
     "{command}: option 'diversify_share' takes a number in [0, 1] or null, not 'nan'"),
    (["--diversify", "1", "--diversify-margin", "0.1", "--diversify-share", "0.5"],
     "--diversify-margin and --diversify-share are two gates: give one"),
    (["--diversify", "1", "--diversify-by", "famliy"], "unknown hint-group 'famliy' (did you mean 'linked'?)"),
    (["--diversify", "1", "--diversify-by", "linkd"], "did you mean 'linked'")])
def test_cli_gate_bad_inputs_write_nothing(gated, tmp_path, monkeypatch, capsys, command, bad, needle):
    bench, _ = gated
    Run({"x": [("y", 1.0)]}).to_file(tmp_path / "in.trec")
    head = (["retrieve", bench.path, "-r", "bm25"] if command == "retrieve" else
            ["rerank", tmp_path / "in.trec", "--bench", bench.path, "-r", "oracle"])
    code, _, err = run_cli(monkeypatch, capsys, *head, "--out", tmp_path / "out.trec", *bad)
    one_line_error(code, err, needle.replace("{command}", command))
    assert not (tmp_path / "out.trec").exists()


@pytest.mark.parametrize("stage, field", [({"diversify_margin": 0.1}, "needs diversify"),
                                          ({"diversify": 1, "diversify_margin": -1}, "diversify_margin"),
                                          ({"diversify": 1, "diversify_margin": "x"}, "diversify_margin"),
                                          ({"diversify": 1, "diversify_by": "famliy"}, "diversify_by.*linked"),
                                          ({"diversify_share": 0.5}, "needs diversify"),
                                          ({"diversify": 1, "diversify_share": 1.5}, "diversify_share.*in \\[0, 1\\]"),
                                          ({"diversify": 1, "diversify_share": ".nan"}, "diversify_share"),
                                          ({"diversify": 1, "diversify_share": 0.5, "diversify_margin": 0.1},
                                           "diversify_share.*two gates"),
                                          ({"diversify": 1, "diversify_margn": 0.1},
                                           "diversify_margn; did you mean 'diversify_margin'")])
def test_yaml_gate_bad_values(stage, field):
    raw = {"name": "x", "benchmark": "demo", "retrievers": [{"kind": "bm25", **stage}]}
    with pytest.raises(InputError, match=f"retrievers.*{field}"):
        config_from_dict(raw)


def test_a_plugin_is_suggested_for_the_words_it_declares(scratch):
    from inferqa import registry

    registry.plugin("hint-group", "toy-clusters", help="toy", suggest_for=("cluster",))(lambda bench: None)
    for typed, meant in (("clustr", "toy-clusters"), ("cluster", "toy-clusters"), ("family", "linked"),
                         ("famliy", "linked"), ("toy-cluster", "toy-clusters")):
        with pytest.raises(InputError, match=f"unknown hint-group '{typed}' \\(did you mean '{meant}'\\?\\)"):
            registry.get("hint-group", typed)
    with pytest.raises(InputError) as exc:
        registry.get("hint-group", "passage")
    assert "did you mean" not in str(exc.value)
