"""The benchmark scripts' cache keys and question-cut check (benchmarks/cache_keys.py,
benchmarks/inferential_hard.py, benchmarks/inferential_budget.py, benchmarks/rerank_window.py):
no training, no encoding, no hint files: the key and check functions are called directly."""

from __future__ import annotations

import hashlib
import importlib
import json
import sys
import warnings
from pathlib import Path
from types import SimpleNamespace

import pytest

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture(scope="module")
def scripts() -> SimpleNamespace:
    """The scripts as modules (they import their siblings, so benchmarks/ goes on the path)."""
    sys.path.insert(0, str(BENCHMARKS))
    try:
        yield SimpleNamespace(**{name: importlib.import_module(name) for name in
                                 ("cache_keys", "inferential_hard", "inferential_budget", "rerank_window")})
    finally:
        sys.path.remove(str(BENCHMARKS))


class Cut:
    """A benchmark as far as the keys look at it: its question ids per split, and its folder."""

    def __init__(self, splits: dict[str, list[str]], name: str = "bench"):
        self.splits, self.path = splits, Path("/nowhere") / name

    def split_qids(self, split: str | None = None) -> list[str]:
        return [q for ids in self.splits.values() for q in ids] if split is None else list(self.splits[split])


def trivia_cut(n: int) -> dict[str, list[str]]:
    """TriviaHG's first `n` questions cut as the script builds them (the builder's own cut)."""
    from inferqa.construct.splits import make_splits

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an empty dev split (N = 4, 5, 8): the check's business, tested below
        return make_splits([SimpleNamespace(id=f"q{i}") for i in range(n)], (0.7, 0.1, 0.2), 13)


def run_args(tmp_path: Path, questions: int, max_steps: int | None = 2, tokens: int = 256) -> SimpleNamespace:
    return SimpleNamespace(out=tmp_path, questions=questions, max_steps=max_steps, dense_max_length=tokens)


def keys_of(scripts, tmp_path: Path, n: int, **over) -> tuple[str, ...]:
    """Every cached artefact's name for `--questions n`: the three models (dense and the
    set-trained encoder after a clue encoder of 2 steps) and the tuned / EMVR key."""
    hard = scripts.inferential_hard
    cut = trivia_cut(n)
    train = Cut({"train": cut["train"]})
    args = run_args(tmp_path, n, **over)
    clue = hard.clue_dir(args, train)
    dense, sets = hard.follower_dirs(args, train, 2)
    bench = Cut({"test": cut["test"], "dev": cut["dev"]}, hard.small.sized("hard-1100", n))
    return clue.name, dense.name, sets.name, hard.results_key(bench, (clue, dense, sets))


# (a) a cut's key is its own, and the same for the same inputs ----------------------------------
def test_the_keys_of_6_questions_differ_from_7_and_8_and_are_stable(scripts, tmp_path):
    six = keys_of(scripts, tmp_path, 6)
    assert six == keys_of(scripts, tmp_path, 6)  # stable: a rerun reuses
    for other in (7, 8):
        assert all(a != b for a, b in zip(six, keys_of(scripts, tmp_path, other))), other


def test_steps_seed_and_encoding_tokens_are_in_the_model_keys(scripts, tmp_path):
    hard = scripts.inferential_hard
    train = Cut({"train": trivia_cut(6)["train"]})
    base = keys_of(scripts, tmp_path, 6)
    assert keys_of(scripts, tmp_path, 6, max_steps=3)[0] != base[0]
    assert keys_of(scripts, tmp_path, 6, tokens=128)[1] != base[1]  # dense only: it encodes at them
    assert keys_of(scripts, tmp_path, 6, tokens=128)[2] == base[2]
    opts = hard.clue_options(max_steps=2)
    reseeded = hard.clue_options(max_steps=2, seed=14)
    assert (scripts.cache_keys.model_dir(tmp_path, "clue", train, opts)
            != scripts.cache_keys.model_dir(tmp_path, "clue", train, reseeded))


def test_the_budget_models_are_keyed_by_cut_and_epochs(scripts, tmp_path):
    budget = scripts.inferential_budget

    def dirs(n: int, epochs: int = 3) -> tuple[str, str]:
        args = SimpleNamespace(out=tmp_path, budget={**budget.BUDGET, "epochs": epochs}, max_steps=2)
        cut = trivia_cut(n)
        benches = {"train": Cut({"train": cut["train"]}), "hard": Cut({"test": cut["test"], "dev": cut["dev"]})}
        budget.locate(args, benches)
        return args.dense_dir.name, args.sets_dir.name, args.tuned.name, args.emvr.name, args.runs.name

    assert dirs(6) == dirs(6)
    for other in (dirs(7), dirs(6, epochs=4)):
        assert all(a != b for a, b in zip(dirs(6), other))


def test_the_clue_encoder_is_shared_with_rerank_window_for_the_same_inputs(scripts, tmp_path):
    rw = scripts.rerank_window
    train = Cut({"train": trivia_cut(7)["train"]})
    args = rw.parse_args(["prepare", "--out", str(tmp_path), "--max-steps", "2"])
    ours = scripts.inferential_hard.clue_dir(run_args(tmp_path, 7), train)
    assert rw.model_dir(args, "clue", train, rw.hard_protocol.clue_options(max_steps=2)) == ours


# (b) the split check, before anything is built -------------------------------------------------
# By hand, from the builder's rule (cuts at round(0.7 N) and round(0.8 N), Python's rounding):
# N: train / dev / test
HAND = {4: (3, 0, 1), 5: (4, 0, 1), 6: (4, 1, 1), 7: (5, 1, 1), 8: (6, 0, 2), 9: (6, 1, 2), 10: (7, 1, 2),
        11: (8, 1, 2), 12: (8, 2, 2)}
REFUSED = {4: 6, 5: 6, 8: 9}  # N -> the smallest --questions from N up that fills all three


@pytest.mark.parametrize("n", range(4, 13))
def test_the_split_check_passes_or_refuses_in_one_line(scripts, n, capsys):
    hard = scripts.inferential_hard
    assert tuple(hard.split_sizes(n).values()) == HAND[n]
    problem = hard.split_problem(n)
    if n not in REFUSED:
        assert problem is None
        hard.require_splits(n)  # returns
        return
    assert "\n" not in problem and "dev split empty" in problem
    assert problem.endswith(f"the smallest --questions from {n} up that fills train, dev, test is {REFUSED[n]}")
    with pytest.raises(SystemExit) as exit_:
        hard.require_splits(n)
    assert exit_.value.code == 2
    assert capsys.readouterr().err == problem + "\n"


def test_without_a_cut_nothing_is_refused(scripts):
    assert scripts.inferential_hard.split_problem(None) is None


@pytest.mark.parametrize("script, extra", [("inferential_hard", []), ("inferential_budget", ["--device", "cpu"]),
                                           ("rerank_window", [])])
def test_the_scripts_refuse_an_empty_split_before_building_anything(scripts, script, extra, tmp_path, monkeypatch,
                                                                   capsys):
    out = tmp_path / "out"
    argv = (["prepare"] if script == "rerank_window" else []) + ["--out", str(out), "--questions", "8",
                                                                   "--max-steps", "2", *extra]
    module = getattr(scripts, script)
    with pytest.raises(SystemExit) as exit_:
        if script == "rerank_window":
            module.main(argv)
        else:
            monkeypatch.setattr(sys, "argv", [script, *argv])
            module.main()
    assert exit_.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1
    assert not (out / "triviahg-first8").exists() and not (out / "models").exists()


# (c) rerank_window's keys are what they were ---------------------------------------------------
def test_rerank_window_keys_are_unchanged(scripts, tmp_path):
    """The formulas rerank_window.py had before the shared module, inline: its caches stay valid."""
    rw, shared = scripts.rerank_window, scripts.cache_keys

    def old_key(**inputs) -> str:
        return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()[:16]

    def old_digest(bench, split=None) -> str:
        return hashlib.sha256("\n".join(bench.split_qids(split)).encode()).hexdigest()[:16]

    cut = trivia_cut(12)
    train, hard = Cut({"train": cut["train"]}), Cut({"dev": cut["dev"], "test": cut["test"]})
    args = rw.parse_args(["prepare", "--out", str(tmp_path)])
    opts = rw.reranker_options(args)
    inputs = dict(index="clue-9a2c7ae195", k=1000, q=old_digest(hard, "test"))
    assert rw.key(**inputs) == shared.key(**inputs) == old_key(**inputs)
    for split in ("dev", "test", None):
        assert rw.questions_digest(hard, split) == shared.questions_digest(hard, split) == old_digest(hard, split)
    old = old_key(opts=opts, train=old_digest(train), base="minilm", examples=rw.EXAMPLES)
    assert rw.model_dir(args, "reranker", train, opts, examples=rw.EXAMPLES) == tmp_path / "models" / f"reranker-{old}"


# (d) rerank_window's second registered round ---------------------------------------------------
def test_each_reranker_recipe_has_its_own_model_folder_and_round_two_its_own_files(scripts, tmp_path):
    rw = scripts.rerank_window
    train = Cut({"train": trivia_cut(12)["train"]})
    folders = {}
    for recipe, (start, over) in rw.RERANKERS.items():
        args = rw.parse_args(["reranker", "--out", str(tmp_path), "--reranker", recipe])
        opts = rw.reranker_options(args)
        assert all(getattr(opts, k) == v for k, v in over.items())
        init = {} if start == "minilm" else {"init": "dense-0123"}
        folders[recipe] = rw.model_dir(args, "reranker", train, opts, examples=rw.EXAMPLES, **init)
    assert len(set(folders.values())) == len(rw.RERANKERS)
    # the same options from other starting weights are another model
    args = rw.parse_args(["reranker", "--out", str(tmp_path), "--reranker", "dense-init"])
    opts = rw.reranker_options(args)
    assert rw.reranker_options(rw.parse_args(["reranker", "--out", str(tmp_path)])) == opts
    assert folders["dense-init"] != rw.model_dir(args, "reranker", train, opts, examples=rw.EXAMPLES)
    one = rw.parse_args(["test", "--out", str(tmp_path)])
    two = rw.parse_args(["test", "--out", str(tmp_path), "--round", "2"])
    assert rw.round_file(one, "preregistration.json") == tmp_path / "preregistration.json"
    assert rw.round_file(two, "preregistration.json") == tmp_path / "preregistration-2.json"
    assert rw.round_file(two, "report.md") == tmp_path / "report-2.md"


@pytest.mark.parametrize("extra", [["--reranker", "v1", "--depth", "10000"], ["--reranker", "dense-init"]])
def test_round_two_refuses_the_first_reranker_or_shallow_first_stages(scripts, tmp_path, monkeypatch, extra):
    rw = scripts.rerank_window
    monkeypatch.setattr(rw, "prepare", lambda args, build_dense=True: {"hard": None, "train": None, "models": {}})
    with pytest.raises(SystemExit) as exit_:
        rw.main(["register", "--out", str(tmp_path), "--round", "2", *extra])
    assert "round 2 registers" in str(exit_.value.code)
    assert not (tmp_path / "preregistration-2.json").exists()


# (e) rerank_window's third and fourth registered rounds: an LLM judge -------------------------------
@pytest.mark.parametrize("extra", [["--round", "3", "--reranker", "dense-init-long", "--depth", "10000"],
                                   ["--round", "3", "--reranker", "upr-smollm2"],
                                   ["--round", "4", "--reranker", "v1", "--depth", "10000"],
                                   ["--round", "2", "--reranker", "upr-smollm2", "--depth", "10000"],
                                   ["--reranker", "upr-smollm2"]])
def test_rounds_three_and_four_take_a_judge_and_no_other_round_does(scripts, tmp_path, monkeypatch, extra):
    rw = scripts.rerank_window
    monkeypatch.setattr(rw, "prepare", lambda args, build_dense=True: {"hard": None, "train": None, "models": {}})
    with pytest.raises(SystemExit) as exit_:
        rw.main(["register", "--out", str(tmp_path), *extra])
    assert "rounds 3 and 4, and only they, register an LLM judge" in str(exit_.value.code)
    assert list(tmp_path.iterdir()) == []
    assert rw.round_file(rw.parse_args(["test", "--out", str(tmp_path), "--round", "3"]),
                         "preregistration.json") == tmp_path / "preregistration-3.json"


def test_round_four_registers_only_the_trained_judge_and_counts_four_looks(scripts, tmp_path, monkeypatch):
    rw = scripts.rerank_window
    monkeypatch.setattr(rw, "prepare", lambda args, build_dense=True: {"hard": None, "train": None, "models": {}})
    with pytest.raises(SystemExit) as exit_:
        rw.main(["register", "--out", str(tmp_path), "--round", "4", "--reranker", "upr-smollm2", "--depth", "10000"])
    assert str(exit_.value.code) == "round 4 registers --reranker upr-smollm2-ft only"
    assert list(tmp_path.iterdir()) == []
    assert rw.round_file(rw.parse_args(["test", "--out", str(tmp_path), "--round", "4"]),
                         "report.md") == tmp_path / "report-4.md"
    assert [rw.looks(r) for r in (1, 2, 3, 4)] == [1, 1, 3, 4]
    assert "Holm p times 4 (Bonferroni" in rw.across_rounds(4)


class TableScores:
    """A score cache as `windowed` reads it: fixed scores by passage id, one second per pair."""

    computing = 0.0

    def __init__(self, table: dict[str, float]):
        self.table, self.asked = table, []

    def get(self, qid, pids):
        self.asked += list(pids)
        return [self.table[p] for p in pids]

    def charge(self, pairs):
        return float(len(pairs))


def test_an_all_hints_window_scores_whole_hint_sets_at_their_questions_first_stage_score(scripts, bench_factory):
    from inferqa.formats import Run

    rw = scripts.rerank_window
    bench = bench_factory(3)  # 3 hints each: a question's all-hints passage is QID_111_012
    q1, q2, q3 = bench.questions
    ranked = [(f"{q2}_010_1", 9.0), (f"{q1}_100_0", 8.0), (f"{q2}_110_01", 7.0), (f"{q3}_001_2", 6.0)]
    table = {f"{q1}_111_012": 5.0, f"{q2}_111_012": 1.0, f"{q3}_111_012": 3.0}
    alone = TableScores(table)
    out, seconds, pairs = rw.windowed(Run({q1: ranked}), bench, alone, "all-hints", 3, 1.0)
    assert alone.asked == [f"{q2}_111_012", f"{q1}_111_012", f"{q3}_111_012"] and pairs == 3
    assert [p for p, _ in out[q1]] == [f"{q1}_100_0", f"{q3}_001_2", f"{q2}_010_1", f"{q2}_110_01"]
    # half and half, each min-max scaled over the window: judge q2 0, q1 1, q3 0.5; first stage by
    # each question's first passage (9, 8, 6) 1, 2/3, 0: q1 0.83, q2 0.5, q3 0.25
    out, _, _ = rw.windowed(Run({q1: ranked}), bench, TableScores(table), "all-hints", 3, 0.5)
    assert [p for p, _ in out[q1]] == [f"{q1}_100_0", f"{q2}_010_1", f"{q2}_110_01", f"{q3}_001_2"]
    assert [round(s, 4) for _, s in out[q1][:2]] == [round(0.5 + 0.5 * 2 / 3, 4), 0.5]
    first = TableScores({f"{q2}_010_1": 0.0, f"{q1}_100_0": 1.0, f"{q3}_001_2": 2.0})
    out, _, _ = rw.windowed(Run({q1: ranked}), bench, first, "question", 3, 1.0)
    assert first.asked == [f"{q2}_010_1", f"{q1}_100_0", f"{q3}_001_2"]


def test_a_judge_is_charged_its_own_pairs_and_a_cross_encoder_the_mean(scripts, bench_factory, tmp_path):
    rw = scripts.rerank_window
    bench = bench_factory(2)
    q1, q2 = bench.questions
    (tmp_path / "upr-x.jsonl").write_text("".join(json.dumps(row) + "\n" for row in (
        [q1, f"{q1}_111_012", 0.5, 3.0], [q1, f"{q2}_111_012", 0.1, 1.0], [q2, f"{q2}_100_0", 0.2, 2.0])))
    (tmp_path / "ce-x.jsonl").write_bytes((tmp_path / "upr-x.jsonl").read_bytes())
    judge = SimpleNamespace(name="upr")
    pairs = [(q1, f"{q1}_111_012"), (q1, f"{q2}_111_012")]
    as_judge = rw.Scores(None, tmp_path, bench, ("upr-x", judge))
    assert as_judge.label == "UPR" and as_judge.charge(pairs) == 4.0
    as_ce = rw.Scores(tmp_path / "ce-x", tmp_path, bench)
    assert as_ce.label == "CE" and as_ce.charge(pairs) == 2 * (3.0 + 1.0 + 2.0) / 3
    assert as_judge.get(q2, [f"{q2}_100_0"]) == [0.2]  # read from the cache: the judge is not asked


def test_a_judge_scores_and_times_each_pair_alone_and_keeps_it(scripts, bench_factory, tmp_path):
    rw = scripts.rerank_window
    bench = bench_factory(2)
    q1, q2 = bench.questions

    class Judge:
        name, calls = "upr", []

        def score(self, query, texts):
            self.calls.append(len(texts))
            return [float(len(t)) for t in texts]

    pids = [f"{q1}_111_012", f"{q2}_100_0", f"{q1}_111_012"]
    scores = rw.Scores(None, tmp_path, bench, ("upr-y", Judge()))
    assert scores.get(q1, pids) == [float(len(bench.passage_text(p))) for p in pids]
    assert Judge.calls == [1, 1]  # two distinct pairs, one prompt each
    again = rw.Scores(None, tmp_path, bench, ("upr-y", Judge()))
    assert again.get(q1, pids[:2]) == scores.get(q1, pids[:2]) and Judge.calls == [1, 1]
    assert set(again.seconds) == {(q1, pids[0]), (q1, pids[1])}
