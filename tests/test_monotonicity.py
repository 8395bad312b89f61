"""Evidence monotonicity (`inferqa diagnose monotonicity`): additions counted by hand, EMVR and its
bootstrap CI against an independent implementation, real retrievers, the clue retriever's
monotone composition (EMVR exactly 0, and a property test), and bad input."""

from __future__ import annotations

import itertools
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from inferqa.diagnose import hint_additions, monotonicity
from inferqa.errors import InputError
from inferqa.formats.benchmark import Benchmark
from inferqa.records import parse_passage_id
from inferqa.retrieve import Retriever, get_retriever, question_queries

from conftest import one_line_error, run_cli


class TableRetriever(Retriever):
    """Scores looked up in a table {passage id: score}: a retriever with known scores."""

    name = "table"

    def __init__(self, table):
        super().__init__()
        self.table = table

    def _build(self, bench, out_dir):
        return {}

    def _load(self, index_dir):
        pass

    def _search(self, qids, texts, k):
        raise NotImplementedError

    def score_passages(self, query, pids):
        return np.array([self.table[p] for p in pids], dtype=np.float64)


def table_of(bench, set_score):
    """{pid: score} from set_score(qid, order), called once per passage."""
    return {p: set_score(*parse_passage_id(p)) for q in bench.questions.values()
            for p in _pids(bench, q.id)}


def _pids(bench, qid):
    return [line for line in (json.loads(x)["id"] for x in (bench.path / "corpus.jsonl").read_text().splitlines())
            if parse_passage_id(line)[0] == qid]


# -- counting by hand ----------------------------------------------------------------------------

HAND = {  # question A: 3 hints, {0, 1} scored 1 or 2 by order (mean 1.5)
    (0,): 1.0, (1,): 2.0, (2,): 3.0, (0, 1): 1.0, (1, 0): 2.0, (0, 2): 3.0, (2, 0): 3.0,
    (1, 2): 4.0, (2, 1): 4.0,
}


def hand_score(qid, order):
    if qid == "demo_01":
        return HAND.get(order, 3.5)  # the 6 orderings of {0, 1, 2}
    return -float(len(order))  # question B: every addition lowers the score


def test_hand_worked_emvr(bench_factory):
    """A: 1→2: {1}+0 falls (1.5 < 2), {2}+0 ties (3 = 3), 4 rise; 2→3: {1,2}+0 falls (3.5 < 4),
    2 rise. B: all 9 fall. 18 additions, 11 violations, 1 tie."""
    bench = bench_factory(2, top_k=3, split="1,0,1")  # demo_01, demo_02; 'all' diagnosed
    report = monotonicity(bench, TableRetriever(table_of(bench, hand_score)), split="all", resamples=50)
    assert (report.additions, report.violations, report.ties) == (18, 11, 1)
    assert report.emvr == pytest.approx(11 / 18)
    assert {k: (r.additions, r.violations, r.ties) for k, r in report.by_stage.items()} == {1: (12, 7, 1),
                                                                                        2: (6, 4, 0)}
    # rank 1 (hint 0): A's {1}+0 and {1,2}+0 fall, {2}+0 ties; B's 3 fall. Ranks 2, 3: only B's fall.
    assert {k: (r.additions, r.violations, r.ties) for k, r in report.by_rank.items()} == {1: (6, 5, 1),
                                                                                       2: (6, 3, 0), 3: (6, 3, 0)}
    assert report.by_stage[1].emvr == pytest.approx(7 / 12) and report.by_rank[1].emvr == pytest.approx(5 / 6)
    data = report.to_dict()
    assert [s["from"] for s in data["by_stage"]] == [1, 2] and [s["to"] for s in data["by_stage"]] == [2, 3]
    assert data["additions"] == 18 and data["violations"] == 11 and len(data["ci"]) == 2


def test_hint_additions_of_five_hints_are_75():
    """Each of the 31 sets of 5 hints: 5·4 + 10·3 + 10·2 + 5·1 = 75 additions; each hint is added
    to the 15 non-empty sets of the other four."""
    scores = {m: 0.0 for m in range(1, 32)}
    adds = hint_additions([scores])
    assert len(adds) == 75 and np.all(adds.outcome == 0)
    assert np.bincount(adds.size).tolist() == [0, 20, 30, 20, 5]
    assert np.bincount(adds.rank).tolist() == [0, 15, 15, 15, 15, 15]
    # a set missing from a question's passages takes its additions with it
    del scores[0b11]
    assert len(hint_additions([scores])) == 75 - 3 - 2  # {0}+1, {1}+0, and {0,1} + each of 3 hints


# -- against an independent implementation -------------------------------------------------------

def independent(bench, table, qids, seed, resamples):
    """EMVR and its CI from the table, by loops: set means, additions, percentile bootstrap."""
    per_q = []
    for qid in qids:
        sets = {}
        for p in _pids(bench, qid):
            sets.setdefault(frozenset(parse_passage_id(p)[1]), []).append(table[p])
        mean = {s: sum(v) / len(v) for s, v in sets.items()}
        hints = sorted(set().union(*mean))
        counts = {}  # (stage or rank key) -> [additions, violations]
        for s in mean:
            for h in hints:
                if h not in s and s | {h} in mean:
                    for key in ("all", ("stage", len(s)), ("rank", h + 1)):
                        c = counts.setdefault(key, [0, 0])
                        c[0] += 1
                        c[1] += mean[s | {h}] < mean[s]
        per_q.append(counts)
    draws = np.random.default_rng(seed).integers(0, len(qids), size=(resamples, len(qids)))
    out = {}
    for key in {k for c in per_q for k in c}:
        a = np.array([c.get(key, [0, 0])[0] for c in per_q])
        v = np.array([c.get(key, [0, 0])[1] for c in per_q])
        ratios = [v[row].sum() / a[row].sum() for row in draws if a[row].sum() > 0]
        out[key] = (a.sum(), v.sum(), v.sum() / a.sum(), tuple(np.percentile(ratios, [2.5, 97.5])))
    return out


@pytest.fixture(scope="module")
def bench5(bench_factory):
    """6 demo questions with their top 5 hints: 325 passages each."""
    return bench_factory(6, top_k=5, split="0,0,6")


def test_emvr_and_bootstrap_ci_equal_an_independent_implementation(bench5):
    rng = random.Random(7)
    table = table_of(bench5, lambda qid, order: float(rng.randint(0, 3)))  # ties between sets too
    qids = bench5.split_qids("test")
    report = monotonicity(bench5, TableRetriever(table), seed=11, resamples=300)
    want = independent(bench5, table, qids, 11, 300)
    assert report.additions == 6 * 75 == want["all"][0]
    got = {"all": report.overall, **{("stage", k): r for k, r in report.by_stage.items()},
           **{("rank", k): r for k, r in report.by_rank.items()}}
    assert set(got) == set(want) and len(report.by_stage) == 4 and len(report.by_rank) == 5
    for key, r in got.items():
        n, v, emvr, ci = want[key]
        assert (r.additions, r.violations) == (n, v), key
        assert r.emvr == pytest.approx(emvr) and r.ci == pytest.approx(ci), key
    again = monotonicity(bench5, TableRetriever(table), seed=11, resamples=300)
    assert again.ci == report.ci and again.by_rank[3].ci == report.by_rank[3].ci  # seeded: reproducible
    other = monotonicity(bench5, TableRetriever(table), seed=12, resamples=300)
    assert other.emvr == report.emvr and other.ci != report.ci


# -- real retrievers -----------------------------------------------------------------------------

def test_bm25_on_three_and_five_hints(demo_bench_8q, bench5):
    """3 hints: 9 additions a question (1→2: 6, 2→3: 3); 5 hints: 75. The violations are
    those of the scores `search` gives, aggregated here independently."""
    three = monotonicity(demo_bench_8q, "bm25", split="all", options={"show_progress": False})
    assert three.additions == 8 * 9 and sorted(three.by_stage) == [1, 2]
    assert (three.by_stage[1].additions, three.by_stage[2].additions) == (8 * 6, 8 * 3)
    r = get_retriever("bm25", show_progress=False).ensure_index(bench5)
    report = monotonicity(bench5, r)
    assert report.additions == 6 * 75 and report.retriever == "bm25"
    assert [s.additions for s in report.by_stage.values()] == [6 * 20, 6 * 30, 6 * 20, 6 * 5]
    run = r.search(question_queries(bench5, bench5.split_qids("test")), 6 * 325)
    table = {p: s for qid, ranked in run.items() for p, s in ranked if parse_passage_id(p)[0] == qid}
    want = independent(bench5, table, bench5.split_qids("test"), 0, 10)
    assert (report.violations, report.emvr) == (want["all"][1], pytest.approx(want["all"][2]))
    assert 0 < report.emvr < 1 and report.ci[0] <= report.emvr <= report.ci[1]


@pytest.fixture(scope="module")
def clue_index(bench5, encoder):
    pytest.importorskip("sentence_transformers")
    r = get_retriever("clue", show_progress=False)
    r._encoders["minilm"] = encoder  # the model loaded once
    return r.ensure_index(bench5).index_dir


def test_clue_monotone_composition_has_no_violation(bench5, encoder, clue_index):
    def clue(compose):
        r = get_retriever("clue", compose=compose, show_progress=False)
        r._encoders["minilm"] = encoder
        return r.attach(bench5, clue_index)

    mean = monotonicity(bench5, clue("mean-embedding"), split="all")
    mono = monotonicity(bench5, clue("monotone"), split="all")
    assert mean.additions == mono.additions == 6 * 75
    assert mean.violations > 0 and mono.violations == 0 and mono.emvr == 0.0 and mono.ci == (0.0, 0.0)
    assert all(r.violations == 0 for r in [*mono.by_stage.values(), *mono.by_rank.values()])


def test_a_monotone_composition_fills_the_head_with_one_question_s_full_hint_set(bench5, encoder, clue_index):
    """Why Hit@1 = Hit@10 = Hit@100 for every monotone row of docs/inferential.md: a superset
    never scores below its subsets and the orderings of one hint set tie, so each ranking opens
    with the 5! = 120 orderings of one question's full hint set."""
    r = get_retriever("clue", compose="monotone", show_progress=False)
    r._encoders["minilm"] = encoder
    run = r.attach(bench5, clue_index).retrieve(bench5, split="test", depth=130)
    for qid, ranking in run.items():
        head = [parse_passage_id(pid) for pid, _ in ranking[:120]]
        assert len({q for q, _ in head}) == 1, qid
        assert {tuple(sorted(order)) for _, order in head} == {(0, 1, 2, 3, 4)}, qid
        assert len({order for _, order in head}) == 120
        assert len({score for _, score in ranking[:120]}) == 1 and ranking[120][1] <= ranking[0][1]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 6), seed=st.integers(0, 2**32 - 1),
       center=st.floats(-1, 1), scale=st.floats(1e-3, 2))
def test_monotone_composition_never_falls_when_a_unit_is_added(k, seed, center, scale):
    """Random unit scores, every subset of k units a group (members in random order): a
    superset's score is never below its subset's, in float32 as returned."""
    rng = np.random.default_rng(seed)
    subsets = [s for n in range(1, k + 1) for s in itertools.combinations(range(k), n)]
    members = [list(rng.permutation(s)) for s in subsets]
    ptr = np.cumsum([0] + [len(m) for m in members])
    r = get_retriever("clue", compose="monotone", monotone_center=center, monotone_scale=scale)
    r._use_groups({"group_ptr": ptr, "group_units": np.concatenate(members).astype(np.int32),
                   "group_norm": np.ones(len(subsets), np.float32)}, k)
    unit_scores = rng.uniform(-1, 1, size=(4, k)).astype(np.float32)
    unit_scores[0] = rng.choice([-1.0, center, 1.0], size=k)  # extremes and exact centres
    scores = r.group_scores(unit_scores)
    at = {frozenset(s): i for i, s in enumerate(subsets)}
    for s, i in at.items():
        for u in set(range(k)) - s:
            assert np.all(scores[:, at[s | {u}]] >= scores[:, i])


# -- the command, and bad input ------------------------------------------------------------------

def test_command_prints_json_and_a_table(bench5, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "diagnose", "monotonicity", "--bench", bench5.path, "-r", "bm25",
                             "--opt", "show_progress=false", "--resamples", "200", "--json")
    assert code == 0, err
    data = json.loads(out)
    assert data["additions"] == 450 and 0 < data["emvr"] < 1 and data["ci"][0] <= data["emvr"] <= data["ci"][1]
    assert [(s["from"], s["to"], s["additions"]) for s in data["by_stage"]] == [(1, 2, 120), (2, 3, 180),
                                                                                (3, 4, 120), (4, 5, 30)]
    assert [(s["rank"], s["additions"]) for s in data["by_rank"]] == [(k, 90) for k in range(1, 6)]
    assert data["emvr"] == pytest.approx(monotonicity(bench5, "bm25", resamples=200).emvr)
    code, out, err = run_cli(monkeypatch, capsys, "diagnose", "monotonicity", "-b", bench5.path,
                             "--opt", "show_progress=false", "--format", "md")
    assert code == 0 and "| 4→5 hints |" in out and "| hint of rank 5 |" in out


def _listing(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*"))


def test_ids_without_hint_structure_are_refused_before_anything_is_written(tmp_path, monkeypatch, capsys):
    bench = tmp_path / "plain"
    bench.mkdir()
    (bench / "questions.jsonl").write_text(json.dumps({"id": "q1", "text": "Who?", "answers": ["x"],
                                                       "hints": []}) + "\n")
    (bench / "corpus.jsonl").write_text(json.dumps({"id": "doc1", "text": "some text", "qid": "q1"}) + "\n")
    (bench / "qrels.tsv").write_text("q1 0 doc1 1\n")
    before = _listing(bench)
    code, _, err = run_cli(monkeypatch, capsys, "diagnose", "monotonicity", "-b", bench, "--split", "all")
    one_line_error(code, err, "'doc1'", "no hint structure", "corpus.jsonl", "line 1", "id")
    assert _listing(bench) == before


def test_an_empty_split_and_a_foreign_option_are_one_line_errors(bench5, tmp_path, monkeypatch, capsys):
    bench = tmp_path / "bench"
    shutil.copytree(bench5.path, bench, ignore=shutil.ignore_patterns("indexes"))
    (bench / "splits.json").write_text(json.dumps({**Benchmark(bench).splits, "dev": []}))
    before = _listing(bench)
    code, _, err = run_cli(monkeypatch, capsys, "diagnose", "monotonicity", "-b", bench, "--split", "dev")
    one_line_error(code, err, "split 'dev' holds no questions", "splits.json")
    code, _, err = run_cli(monkeypatch, capsys, "diagnose", "monotonicity", "-b", bench, "-r", "bm25",
                           "--opt", "compose=monotone")
    one_line_error(code, err, "retriever 'bm25' has no option 'compose'")
    code, _, err = run_cli(monkeypatch, capsys, "diagnose", "monotonicity", "-b", bench, "--split", "nope")
    one_line_error(code, err, "unknown split 'nope'")
    code, _, err = run_cli(monkeypatch, capsys, "diagnose", "monotonicity", "-b", bench, "--resamples", "0")
    one_line_error(code, err, "diagnose monotonicity: option 'resamples' takes an integer ≥ 1, not 0")
    assert _listing(bench) == before


def test_a_retriever_that_cannot_score_passages_is_refused_before_indexing(bench5, tmp_path):
    class Unscored(TableRetriever):
        score_passages = Retriever.score_passages

    with pytest.raises(InputError, match="cannot score given passages"):
        monotonicity(bench5, Unscored({}), index_dir=tmp_path / "idx")
    assert not (tmp_path / "idx").exists()
    with pytest.raises(InputError, match="given by name"):
        monotonicity(bench5, TableRetriever({}), model="minilm")
