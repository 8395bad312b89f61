"""Reranking over a window of distinct evidence (`inferqa rerank --window question|set|linked`):
one representative per group is scored, each followed by its group; the plain window stays the
default; the number of reranker calls is what the output says; bad windows are one line."""

from __future__ import annotations

import warnings

import pytest

from conftest import run_cli
from inferqa.errors import InputError
from inferqa.formats import Run
from inferqa.hints import window_groups
from inferqa.records import question_of
from inferqa.reranking.base import Reranker
from inferqa.reranking.run import RerankCounts, rerank_run


class ByText(Reranker):
    """Scores a passage by a fixed table of its id; counts its calls."""

    name = "by-id"

    def __init__(self, table: dict[str, float]):
        self.table, self.calls = table, 0

    def score_passages(self, bench, qid, pids):
        self.calls += len(pids)
        return [self.table.get(p, 0.0) for p in pids]

    def score(self, query, texts):  # not reached: score_passages is overridden
        raise AssertionError


def question(pid: str) -> str:
    return pid.split("_")[0]


RANKED = [("a_1_0", 9.0), ("a_10_1", 8.0), ("b_1_0", 7.0), ("a_11_01", 6.0), ("c_1_0", 5.0), ("b_10_1", 4.0),
          ("d_1_0", 3.0)]


def test_window_groups_are_the_first_groups_in_run_order_with_all_their_passages():
    assert window_groups(RANKED, 2, question) == [[0, 1, 3], [2, 5]]
    assert window_groups(RANKED, 10, question) == [[0, 1, 3], [2, 5], [4], [6]]
    assert window_groups([], 3, question) == []


def test_a_distinct_window_scores_one_representative_per_group_and_keeps_groups_together():
    # window of 3 questions: a (a_1_0), b (b_1_0), c (c_1_0); the reranker prefers c, then b, then a
    rr = ByText({"c_1_0": 3.0, "b_1_0": 2.0, "a_1_0": 1.0, "a_10_1": 99.0})
    out = rr.rerank_question("q", RANKED, None, 3, question)
    assert rr.calls == 3  # a_10_1 is no representative: never scored
    assert [p for p, _ in out] == ["c_1_0", "b_1_0", "b_10_1", "a_1_0", "a_10_1", "a_11_01", "d_1_0"]
    scores = [s for _, s in out]
    assert scores[:6] == [3.0, 2.0, 2.0, 1.0, 1.0, 1.0]  # a group at its representative's score
    assert scores[6] < scores[5] and scores == sorted(scores, reverse=True)


def test_the_plain_window_scores_the_top_passages_as_before():
    rr = ByText({"b_1_0": 5.0})
    out = rr.rerank_question("q", RANKED, None, 3, None)
    assert rr.calls == 3
    assert [p for p, _ in out][:3] == ["b_1_0", "a_1_0", "a_10_1"]  # ties keep the incoming order
    assert [p for p, _ in out][3:] == ["a_11_01", "c_1_0", "b_10_1", "d_1_0"]


def _run_of(bench, depth=None):
    """Every question's passages of the whole corpus ranked by a fixed shuffle: several questions per ranking."""
    import random

    pids = sorted(p for q in bench.qrels for p in bench.qrels[q])
    rng = random.Random(3)
    out = {}
    for q in bench.questions:
        order = pids[:]
        rng.shuffle(order)
        order = order[:depth] if depth else order
        out[q] = [(p, float(len(order) - i)) for i, p in enumerate(order)]
    return Run(out)


def test_rerank_run_with_the_oracle_over_a_question_window_puts_the_right_question_first(bench_factory):
    bench = bench_factory(4)
    run = _run_of(bench)
    counts = RerankCounts()
    out = rerank_run(run, bench, "oracle", depth=4, window="question", counts=counts)
    assert counts.scored == 4 * 4  # 4 questions, 4 representatives each
    for q in bench.questions:
        assert sorted(out[q]) != [] and sorted(p for p, _ in out[q]) == sorted(p for p, _ in run[q])
        own = [p for p, _ in out[q][:len(bench.qrels[q])]]
        assert all(p.startswith(q + "_") for p in own)  # the oracle's pick: the question's whole group first
    plain = RerankCounts()
    rerank_run(run, bench, "oracle", depth=4, counts=plain)
    assert plain.scored == 16


def test_a_run_too_shallow_for_the_window_says_so_in_one_warning_and_reranks_what_it_has(bench_factory):
    bench = bench_factory(3)
    run = _run_of(bench)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        counts = RerankCounts()
        rerank_run(run, bench, "oracle", depth=5, window="question", counts=counts)
    lines = [str(w.message) for w in caught]
    assert len(lines) == 1 and "3 of 3 questions hold fewer than 5 distinct question groups" in lines[0]
    assert "would fill the window" in lines[0]
    assert counts.scored == 9


@pytest.mark.parametrize("window,message", [("questoin", "unknown window 'questoin'"),
                                            ("Question", "(did you mean 'question'?)")])
def test_an_unknown_window_is_an_input_error_naming_the_windows(bench_factory, window, message):
    bench = bench_factory(2)
    with pytest.raises(InputError, match="the windows are plain, ") as err:
        rerank_run(_run_of(bench), bench, "oracle", depth=2, window=window)
    assert message in str(err.value)


def test_the_cli_writes_nothing_for_a_bad_window_or_depth(bench_factory, tmp_path, monkeypatch, capsys):
    bench = bench_factory(3)
    _run_of(bench).to_file(tmp_path / "in.trec")
    for bad in (("--window", "questoin"), ("--depth", "0")):
        code, out, err = run_cli(monkeypatch, capsys, "rerank", tmp_path / "in.trec", "--bench", bench.path,
                                 "-r", "oracle", *bad, "-o", tmp_path / "out.trec")
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert not (tmp_path / "out.trec").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.trec"]


def test_the_cli_and_the_experiment_file_give_the_same_windowed_run(bench_factory, tmp_path, monkeypatch, capsys):
    bench = bench_factory(3)
    _run_of(bench).to_file(tmp_path / "in.trec")
    code, out, err = run_cli(monkeypatch, capsys, "rerank", tmp_path / "in.trec", "--bench", bench.path,
                             "-r", "oracle", "--depth", "2", "--window", "set", "-o", tmp_path / "cli.trec")
    assert code == 0, err
    assert "reranker calls (one per set, at most 2 per question)" in out and ", 6 reranker calls" in out
    api = rerank_run(tmp_path / "in.trec", bench, "oracle", depth=2, window="set")
    cli = Run.from_file(tmp_path / "cli.trec", bench=bench)
    assert {q: [p for p, _ in v] for q, v in cli.items()} == {q: [p for p, _ in v] for q, v in api.items()}


@pytest.mark.parametrize("good,bad,field,value,message", [
    ("window: question", "window: questions", "window", "question", "unknown window 'questions'"),
    ("window: question, representative: all-hints", "window: set, representative: all-hints", "representative",
     "all-hints", "needs --window question")])
def test_the_experiment_file_takes_a_window_and_representative_and_checks_them(tmp_path, good, bad, field, value,
                                                                                message):
    from inferqa.experiments.config import load_config

    base = "name: w\nbenchmark: {demo: true}\nretrievers: [{kind: bm25}]\nrerankers: [{kind: oracle, depth: 3, %s}]\n"
    (tmp_path / "ok.yaml").write_text(base % good)
    assert getattr(load_config(tmp_path / "ok.yaml").rerankers[0], field) == value
    (tmp_path / "bad.yaml").write_text(base % bad)
    with pytest.raises(InputError, match=message) as err:
        load_config(tmp_path / "bad.yaml")
    assert f"rerankers[0].{field}" in str(err.value)


class Recording(ByText):
    """ByText that also keeps the passage ids it was asked to score."""

    def score_passages(self, bench, qid, pids):
        self.seen = list(pids)
        return super().score_passages(bench, qid, pids)


def test_an_all_hints_window_scores_each_questions_passage_of_all_its_hints(bench_factory):
    bench = bench_factory(3)  # 3 hints kept per question: the all-hints passage is QID_111_012
    q1, q2, q3 = bench.questions
    # each question enters the run by a one-hint passage; no all-hints passage is in the run
    ranked = [(f"{q2}_010_1", 9.0), (f"{q1}_100_0", 8.0), (f"{q2}_110_01", 7.0), (f"{q3}_001_2", 6.0)]
    rr = Recording({f"{q1}_111_012": 5.0, f"{q2}_111_012": 1.0, f"{q3}_111_012": 3.0, f"{q2}_010_1": 99.0})
    out = rr.rerank_question(q1, ranked, bench, 3, question_of, "all-hints")
    assert rr.seen == [f"{q2}_111_012", f"{q1}_111_012", f"{q3}_111_012"]  # in the run's question order
    assert [p for p, _ in out] == [f"{q1}_100_0", f"{q3}_001_2", f"{q2}_010_1", f"{q2}_110_01"]
    assert [s for _, s in out] == [5.0, 3.0, 1.0, 1.0]
    first = Recording({f"{q2}_010_1": 99.0})
    assert [p for p, _ in first.rerank_question(q1, ranked, bench, 3, question_of)][0] == f"{q2}_010_1"
    assert first.seen == [f"{q2}_010_1", f"{q1}_100_0", f"{q3}_001_2"]
    with pytest.raises(InputError, match="option 'representative' takes one of first, all-hints, not 'whole'"):
        first.rerank_question(q1, ranked, bench, 3, question_of, "whole")


def test_rerank_run_with_all_hints_representatives_keeps_each_questions_passages(bench_factory):
    bench = bench_factory(4)
    run = _run_of(bench, depth=60)
    counts = RerankCounts()
    out = rerank_run(run, bench, "oracle", depth=4, window="question", representative="all-hints", counts=counts)
    assert counts.scored == sum(len(window_groups(run[q], 4, question_of)) for q in run)
    for q in bench.questions:
        assert sorted(p for p, _ in out[q]) == sorted(p for p, _ in run[q])


@pytest.mark.parametrize("window,representative,message", [
    ("plain", "all-hints", "representative 'all-hints' needs --window question, not 'plain'"),
    ("set", "all-hints", "not 'set'"),
    ("question", "all_hints", "option 'representative' takes one of first, all-hints, not 'all_hints'")])
def test_a_representative_that_does_not_fit_is_an_input_error(bench_factory, window, representative, message):
    bench = bench_factory(2)
    with pytest.raises(InputError, match=message):
        rerank_run(_run_of(bench), bench, "oracle", depth=2, window=window, representative=representative)


def test_the_cli_writes_nothing_for_a_representative_that_does_not_fit(bench_factory, tmp_path, monkeypatch, capsys):
    bench = bench_factory(3)
    _run_of(bench).to_file(tmp_path / "in.trec")
    for bad in (("--representative", "all-hints"), ("--window", "question", "--representative", "whole")):
        code, out, err = run_cli(monkeypatch, capsys, "rerank", tmp_path / "in.trec", "--bench", bench.path,
                                 "-r", "oracle", *bad, "-o", tmp_path / "out.trec")
        assert code == 2 and len(err.strip().splitlines()) == 1, err
        assert "representative" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.trec"]
    code, out, err = run_cli(monkeypatch, capsys, "rerank", tmp_path / "in.trec", "--bench", bench.path, "-r",
                             "oracle", "--depth", "2", "--window", "question", "--representative", "all-hints",
                             "-o", tmp_path / "cli.trec")
    assert code == 0 and "(one per question, all its hints, at most 2 per question)" in out, err
    api = rerank_run(tmp_path / "in.trec", bench, "oracle", depth=2, window="question", representative="all-hints")
    cli = Run.from_file(tmp_path / "cli.trec", bench=bench)
    assert {q: [p for p, _ in v] for q, v in cli.items()} == {q: [p for p, _ in v] for q, v in api.items()}
