"""The reranking window (`inferqa diagnose window`): every field worked by hand on a tiny run,
the same against an independent implementation over a TREC file and the qrels, the command's
JSON and table, and bad input."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import inferqa
from inferqa.diagnose import window
from inferqa.errors import InputError
from inferqa.formats import Run

from conftest import one_line_error, run_cli

# -- by hand -------------------------------------------------------------------------------------


def relevant_if_hint_0(qid, order):
    """Label 1 for a passage holding its question's hint 0; the 4th question has none."""
    return 0 if qid.endswith("4") else int(0 in order)


@pytest.fixture(scope="module")
def hand_bench(bench_factory):
    """The first 4 demo questions, 3 hints each (15 passages); called A, B, C, D below."""
    return bench_factory(4, split="0,0,4", relabel=relevant_if_hint_0)


def pid_of(bench, qid, order):
    """The passage of question `qid` holding its hints in `order`."""
    from inferqa.records import parse_passage_id

    return next(p for p in bench.qrels[qid] if parse_passage_id(p)[1] == tuple(order))


def hand_run(bench):
    a, b, c, d = bench.questions
    p = lambda q, *order: pid_of(bench, q, order)  # noqa: E731
    rankings = {
        # A: relevant = A's passages with hint 0 (ranks 6 and 8)
        a: [p(b, 1), p(b, 1, 2), p(b, 2, 1), p(a, 1), p(c, 0), p(a, 0, 1), p(b, 0), p(a, 0)],
        # B: its relevant B{0} at rank 3; a run shorter than most windows
        b: [p(a, 0), p(b, 1), p(b, 0)],
        # C: relevant passages in the qrels, none in the run
        c: [p(c, 1, 2), p(c, 2)],
        # D: no passage of label >= 1 at all: left out of every mean
        d: [p(d, 0), p(a, 0)],
    }
    return Run({q: [(pid, float(len(r) - i)) for i, pid in enumerate(r)] for q, r in rankings.items()})


# Per query and k = 1, 3, 5, 10 (groups in order of first appearance; a set is named by its question and hints):
# A: questions B A C (first at ranks 1, 4, 5); sets B{1} B{1,2} A{1} C{0} A{0,1} B{0} A{0} (ranks 1 2 4 5 6 7 8).
#    distinct questions 1 1 3 3; sets 1 2 4 7; Hit: first relevant at rank 6 -> 0 0 0 1;
#    window of questions: A (holding relevant A{0,1}) is the 2nd question -> 0 1 1 1;
#    window of sets: the first relevant set A{0,1} is the 5th set -> 0 0 1 1.
# B: questions A B; sets A{0} B{1} B{0}. distinct questions 1 2 2 2; sets 1 3 3 3; Hit (rank 3) 0 1 1 1;
#    window of questions (B 2nd) 0 1 1 1; of sets (B{0} 3rd) 0 1 1 1.
# C: one question, sets C{1,2} C{2}: distinct questions 1 1 1 1; sets 1 2 2 2; nothing relevant in the run: 0s.
# D: unjudged. Means over A, B, C:
HAND = [
    {"k": 1, "distinct_questions": 1, "distinct_sets": 1, "recall": 0, "recall_distinct_questions": 0,
     "recall_distinct_sets": 0},
    {"k": 3, "distinct_questions": 4 / 3, "distinct_sets": 7 / 3, "recall": 1 / 3,
     "recall_distinct_questions": 2 / 3, "recall_distinct_sets": 1 / 3},
    {"k": 5, "distinct_questions": 2, "distinct_sets": 3, "recall": 1 / 3, "recall_distinct_questions": 2 / 3,
     "recall_distinct_sets": 2 / 3},
    {"k": 10, "distinct_questions": 2, "distinct_sets": 4, "recall": 2 / 3, "recall_distinct_questions": 2 / 3,
     "recall_distinct_sets": 2 / 3},
]


def test_hand_worked_window(hand_bench):
    report = window(hand_run(hand_bench), hand_bench, depths=(10, 3, 1, 5, 3))  # sorted, once each
    assert (report.queries, report.unjudged, report.min_label) == (3, 1, 1)
    assert [r["k"] for r in report.depths] == [1, 3, 5, 10]
    for got, want in zip(report.depths, HAND):
        assert list(got) == list(want)
        assert got == pytest.approx(want)
    data = report.to_dict()
    assert data["queries"] == 3 and data["unjudged"] == 1 and data["depths"][1] == pytest.approx(HAND[1])
    table = report.text_table()
    assert table.rows[1] == ("3", "1.3", "2.3", "33.3", "66.7", "33.3")
    assert inferqa.window is window


def test_a_split_keeps_the_run_s_questions_of_it(hand_bench, bench_factory):
    bench = bench_factory(4, split="2,0,2", relabel=relevant_if_hint_0)
    run = hand_run(bench)
    test = bench.split_qids("test")
    report = window(run, bench, depths=[10], split="test")
    assert report.queries + report.unjudged == len(test)
    assert report.depths == window(run.only(test), bench, depths=[10]).depths


# -- against an independent implementation -------------------------------------------------------

def brute_force(trec: Path, bench_dir: Path, depths):
    """The report's records from the TREC lines, qrels.tsv and questions.jsonl, by loops."""
    rankings = {}
    for line in trec.read_text().splitlines():
        qid, _, pid, rank, _, _ = line.split()
        rankings.setdefault(qid, []).append((int(rank), pid))
    relevant = {}
    for line in (bench_dir / "qrels.tsv").read_text().splitlines():
        qid, _, pid, label = line.split()
        if int(label) >= 1:
            relevant.setdefault(qid, set()).add(pid)
    hints = {}
    for line in (bench_dir / "questions.jsonl").read_text().splitlines():
        q = json.loads(line)
        hints[q["id"]] = [h["text"] for h in q["hints"]]

    def question(pid):
        return pid.rsplit("_", 2)[0]

    def hint_set(pid):
        qid, _, perm = pid.rsplit("_", 2)
        return frozenset(hints[qid][int(c)] for c in perm)

    judged = [q for q in rankings if relevant.get(q)]
    records = []
    for k in depths:
        sums = dict.fromkeys(("dq", "ds", "hit", "wq", "ws"), 0)
        for q in judged:
            pids = [pid for _, pid in sorted(rankings[q])]
            top = pids[:k]
            sums["dq"] += len({question(p) for p in top})
            sums["ds"] += len({hint_set(p) for p in top})
            sums["hit"] += any(p in relevant[q] for p in top)
            for name, group in (("wq", question), ("ws", hint_set)):
                window_groups = []
                for p in pids:
                    if group(p) not in window_groups and len(window_groups) < k:
                        window_groups.append(group(p))
                sums[name] += any(p in relevant[q] and group(p) in window_groups for p in pids)
        n = len(judged)
        records.append({"k": k, "distinct_questions": sums["dq"] / n, "distinct_sets": sums["ds"] / n,
                        "recall": sums["hit"] / n, "recall_distinct_questions": sums["wq"] / n,
                        "recall_distinct_sets": sums["ws"] / n})
    return len(judged), len(rankings) - len(judged), records


@pytest.fixture(scope="module")
def bench5(bench_factory):
    """6 demo questions of 5 hints (325 passages each), labels 0-2 at random, the last question unjudged."""
    rng = random.Random(5)
    return bench_factory(6, top_k=5, split="0,0,6",
                         relabel=lambda qid, order: 0 if qid.endswith("6") else rng.choice((0, 0, 1, 2)))


def random_run(bench, seed):
    """Each question ranks 150 passages, a few of its own among others': each question's passages
    near a place of its own in the ranking, so that they come in runs."""
    rng = random.Random(seed)
    every = sorted(p for q in bench.qrels for p in bench.qrels[q])
    run = {}
    for qid in bench.questions:
        place = {q: rng.random() for q in bench.questions}
        picked = list(dict.fromkeys(rng.sample(sorted(bench.qrels[qid]), 8) + rng.sample(every, 160)))[:150]
        ranked = sorted(picked, key=lambda p: place[p.rsplit("_", 2)[0]] + rng.random() / 3)
        run[qid] = [(p, float(len(ranked) - i)) for i, p in enumerate(ranked)]
    return Run(run)


def test_equals_an_independent_implementation(bench5, tmp_path):
    trec = tmp_path / "random.trec"
    random_run(bench5, 3).to_file(trec)
    depths = [1, 2, 5, 10, 20, 100, 150, 400]
    queries, unjudged, want = brute_force(trec, bench5.path, depths)
    report = window(trec, bench5.path, depths=depths)
    assert (report.queries, report.unjudged) == (queries, unjudged) == (5, 1)
    assert [list(r) for r in report.depths] == [list(r) for r in want]
    for got, expected in zip(report.depths, want):
        assert got == pytest.approx(expected)
    assert report.depths[-1] == pytest.approx({**report.depths[-2], "k": 400})  # the run holds 150
    # the windows of distinct groups reach further than a window of as many passages
    assert all(r["recall_distinct_questions"] >= r["recall"] for r in report.depths)


# -- the command, and bad input ------------------------------------------------------------------

def test_command_prints_json_and_a_table(hand_bench, tmp_path, monkeypatch, capsys):
    trec = tmp_path / "hand.trec"
    hand_run(hand_bench).to_file(trec)
    code, out, err = run_cli(monkeypatch, capsys, "diagnose", "window", trec, "--bench", hand_bench.path,
                             "--depth", "1,3", "--depth", "5,10", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert {"queries", "unjudged", "depths"} <= set(data) and data["queries"] == 3
    assert [list(r) for r in data["depths"]] == [list(HAND[0])] * 4
    assert all(got == pytest.approx(want) for got, want in zip(data["depths"], HAND))
    code, out, err = run_cli(monkeypatch, capsys, "diagnose", "window", trec, "-b", hand_bench.path)
    assert code == 0, err
    assert "k questions %" in out and "(1 without one left out)" in out.replace("\n", " ")
    code, out, _ = run_cli(monkeypatch, capsys, "diagnose", "window", trec, "-b", hand_bench.path, "--format", "md")
    assert code == 0 and "| 100 |" in out  # the default depths 10, 20, 100


@pytest.mark.parametrize("args, needles", [
    (("--depth", "0"), ("diagnose window: option 'depths' takes an integer ≥ 1, not 0",)),
    (("--depth", "10,x"), ("diagnose window: option 'depths' takes an integer, not 'x'",)),
    (("--split", "nope"), ("unknown split 'nope'",)),
])
def test_bad_options_are_one_line_errors(hand_bench, tmp_path, monkeypatch, capsys, args, needles):
    trec = tmp_path / "hand.trec"
    hand_run(hand_bench).to_file(trec)
    before = sorted(tmp_path.iterdir())
    code, out, err = run_cli(monkeypatch, capsys, "diagnose", "window", trec, "-b", hand_bench.path, *args, "--json")
    one_line_error(code, err, *needles)
    assert out == "" and sorted(tmp_path.iterdir()) == before


def test_bad_runs_are_one_line_errors(hand_bench, tmp_path, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "diagnose", "window", tmp_path / "none.trec", "-b", hand_bench.path)
    one_line_error(code, err, "none.trec")
    foreign = tmp_path / "foreign.trec"
    foreign.write_text("demo_01 Q0 elsewhere_1_0 1 1.0 x\n")
    code, out, err = run_cli(monkeypatch, capsys, "diagnose", "window", foreign, "-b", hand_bench.path)
    one_line_error(code, err, "elsewhere_1_0")
    assert out == ""


def test_python_refusals(hand_bench):
    run = hand_run(hand_bench)
    with pytest.raises(InputError, match="diagnose window: option 'depths' takes an integer ≥ 1, not 0"):
        window(run, hand_bench, depths=[10, 0])
    with pytest.raises(InputError, match="at least one depth"):
        window(run, hand_bench, depths=[])
    d = next(q for q in hand_bench.questions if q.endswith("4"))
    with pytest.raises(InputError, match="no question of the run has a passage of label"):
        window(run.only([d]), hand_bench)
