"""Benchmark construction: orders, passage ids and text, ranking, splits, labels, atomic output."""

from __future__ import annotations

import json
from itertools import product

import pytest

from inferqa.formats import iter_corpus
from inferqa.formats.benchmark import Benchmark
from inferqa.construct import build_benchmark, iter_orders, iter_passages, n_orders
from inferqa.construct.ranking import rank_hints, select_top
from inferqa.construct.splits import make_splits, parse_split
from inferqa.data.quit import LABELS_KEY
from inferqa.errors import InputError
from inferqa.io import write_jsonl
from inferqa.records import Hint, Question
from inferqa.formats import Qrels


def q(qid, n, answers=("zzz",), conv=None):
    conv = conv or [None] * n
    return Question(qid, f"question {qid}?", list(answers), [Hint(f"{qid} hint {i}.", conv[i]) for i in range(n)])


def test_k2_hand_worked_ids_and_texts():
    x = Question("X", "?", ["z"], [Hint("first."), Hint("second.")])
    assert list(iter_orders(2)) == [(0,), (1,), (0, 1), (1, 0)]
    assert [(p.id, p.text) for p in iter_passages(x)] == [
        ("X_10_0", "first."), ("X_01_1", "second."), ("X_11_01", "first. second."), ("X_11_10", "second. first.")]


def test_k5_count_and_id_set_match_brute_force():
    ids = [p.id for p in iter_passages(q("q_7", 5))]
    expected = {f"q_7_{''.join('1' if i in t else '0' for i in range(5))}_{''.join(map(str, t))}"
                for size in range(1, 6) for t in product(range(5), repeat=size) if len(set(t)) == size}
    assert len(ids) == 325 == len(set(ids)) and set(ids) == expected
    assert ids[:2] == ["q_7_10000_0", "q_7_01000_1"] and ids[-1] == "q_7_11111_43210"
    assert "q_7_10110_320" in ids
    assert [n_orders(k) for k in range(1, 7)] == [1, 4, 15, 64, 325, 1956]


def test_order_is_size_then_subset_then_permutation():
    orders = list(iter_orders(4))
    keys = [(len(o), sorted(o), o) for o in orders]
    assert keys == sorted(keys)


def test_passage_text_follows_the_order():
    p = next(p for p in iter_passages(q("a", 3)) if p.order == (2, 0, 1))
    assert p.id == "a_111_201" and p.text == "a hint 2. a hint 0. a hint 1."


def test_ranking_by_convergence_ties_by_source_order():
    hints = [Hint("a", 0.2), Hint("b", 0.9), Hint("c", None), Hint("d", 0.9), Hint("e", 0.5)]
    assert rank_hints(hints) == [1, 3, 4, 0, 2]
    assert rank_hints([Hint("a"), Hint("b")]) == [0, 1]
    assert select_top(hints, 3) == [1, 3, 4] and select_top(hints, 6) is None


def test_split_parsing_and_determinism():
    assert parse_split("0.7,0.1,0.2") == (0.7, 0.1, 0.2)
    assert parse_split("5,2,3") == (5.0, 2.0, 3.0) and parse_split("source") == "source"
    for bad in ("0.5,0.2", "a,b", "1,2,3,4", "-1,2"):
        with pytest.raises(InputError):
            parse_split(bad)
    qs = [q(f"q{i}", 1) for i in range(10)]
    s1 = make_splits(qs, (0.7, 0.1, 0.2), seed=13)
    assert {k: len(v) for k, v in s1.items()} == {"train": 7, "dev": 1, "test": 2}
    assert sorted(sum(s1.values(), [])) == sorted(x.id for x in qs)
    assert make_splits(qs, (0.7, 0.1, 0.2), seed=13) == s1 != make_splits(qs, (0.7, 0.1, 0.2), seed=14)
    counts = make_splits(qs, (5, 2, 1), seed=0)
    assert [len(counts[k]) for k in ("train", "dev", "test", "rest")] == [5, 2, 1, 2]
    with pytest.raises(InputError, match="only 10"):
        make_splits(qs, (8, 2, 1), seed=0)


def test_build_writes_a_readable_benchmark(tmp_path):
    questions = [q("a_1", 6, conv=[0.1, 0.9, 0.5, 0.9, 0.3, 0.0]), q("b", 5), q("c", 4)]
    out = tmp_path / "bench"
    meta = build_benchmark(questions, out, split=(0.5, 0.5), seed=1, sources=[])
    assert sorted(p.name for p in out.iterdir()) == ["corpus.jsonl", "meta.json", "qrels.tsv", "questions.jsonl",
                                                     "splits.json"]
    assert not list(tmp_path.glob(".*"))                       # no temp leftovers
    bench = Benchmark(out)
    assert list(bench.questions) == ["a_1", "b"]               # c has only 4 hints: skipped
    assert [h.text for h in bench.questions["a_1"].hints] == [f"a_1 hint {i}." for i in (1, 3, 2, 4, 0)]
    assert bench.questions["a_1"].metadata["source_hint_indices"] == [1, 3, 2, 4, 0]
    corpus = list(iter_corpus(bench))
    assert len(corpus) == 650 and len({p.id for p in corpus}) == 650
    assert all(p.text == bench.passage_text(p.id) for p in corpus)
    qrels = Qrels.from_file(out / "qrels.tsv")
    assert {pid for pid in qrels["b"]} == {p.id for p in corpus if p.qid == "b"}
    assert set(sum((list(v.values()) for v in qrels.values()), [])) == {1}
    assert sorted(sum(bench.splits.values(), [])) == ["a_1", "b"]
    assert meta["counts"]["questions"] == 2 and meta["counts"]["passages"] == 650
    assert meta["counts"]["questions_skipped_few_hints"] == 1 and meta["leakage"]["skipped_few_hints"] == ["c"]
    assert meta["labels"] == {"1": 650} and json.loads((out / "meta.json").read_text()) == meta


def test_corpus_lines_equal_json_dumps_of_the_passage(tmp_path):
    hard = Question("q\"1", "?", ["z"], [Hint('quote " and \\ back'), Hint("tab\tnewline é ☃"), Hint("x"),
                                           Hint("y"), Hint("w")])
    build_benchmark([hard], tmp_path / "b", split=(1.0,))
    lines = (tmp_path / "b" / "corpus.jsonl").read_text(encoding="utf-8").splitlines()
    assert lines == [json.dumps(p.to_dict(), ensure_ascii=False) for p in iter_passages(hard)]


def test_strict_and_top_k_options(tmp_path):
    with pytest.raises(InputError) as exc:
        build_benchmark([q("a", 5), q("c", 3)], tmp_path / "b", strict=True)
    assert exc.value.record == "c" and exc.value.field == "hints"
    assert not (tmp_path / "b").exists()
    meta = build_benchmark([q("a", 5), q("c", 3)], tmp_path / "b", top_k=3, split=(1.0,))
    assert meta["counts"]["passages"] == 2 * 15
    with pytest.raises(InputError, match="top-k"):
        build_benchmark([q("a", 5)], tmp_path / "b", top_k=11)


def test_build_defaults_are_the_declared_ones(tmp_path, monkeypatch, capsys):
    """build_benchmark and `inferqa build` with no --top-k/--split/--seed both use the build stage's
    declared defaults: 5 hints, 0.7/0.1/0.2 of the questions, seed 13 (written out by hand here)."""
    from conftest import run_cli

    questions = [q(f"q{i}", 6) for i in range(10)]
    meta = build_benchmark(questions, tmp_path / "lib")
    want = {"top_k": 5, "split": [0.7, 0.1, 0.2], "seed": 13}
    assert {k: meta["options"][k] for k in want} == want and meta["splits"] == {"train": 7, "dev": 1, "test": 2}
    write_jsonl(tmp_path / "q.jsonl", [{"id": x.id, "question": x.text, "answers": x.answers,
                                        "hints": [h.text for h in x.hints]} for x in questions])
    code, _, err = run_cli(monkeypatch, capsys, "build", tmp_path / "q.jsonl", "--out", tmp_path / "cli")
    assert code in (0, None), err
    assert Benchmark(tmp_path / "cli").splits == Benchmark(tmp_path / "lib").splits
    assert {k: Benchmark(tmp_path / "cli").meta["options"][k] for k in want} == want


def test_leaking_hint_is_dropped_before_ranking(tmp_path):
    leaky = q("a", 6, answers=["hint 1"], conv=[0.1, 0.99, 0.2, 0.3, 0.4, 0.5])
    meta = build_benchmark([leaky], tmp_path / "b", split=(1.0,))
    kept = Benchmark(tmp_path / "b").questions["a"]
    assert [h.text for h in kept.hints] == ["a hint 5.", "a hint 4.", "a hint 3.", "a hint 2.", "a hint 0."]
    assert kept.metadata["source_hint_indices"] == [5, 4, 3, 2, 0]
    assert meta["leakage"]["dropped_hints"] == {"a": [1]} and meta["counts"]["leak_hints_dropped"] == 1
    meta = build_benchmark([leaky, q("b", 5)], tmp_path / "b", leak_policy="drop-question", split=(1.0,),
                           overwrite=True)
    assert meta["counts"]["questions"] == 1 and meta["leakage"]["dropped_questions"] == ["a"]


def test_release_labels_follow_hints_through_leakage_and_ranking(tmp_path):
    # Source hints 0, 1, 2; hint 1 names the answer and is dropped; kept hints are source 0 and 2.
    rel = Question("r", "?", ["Cobalt"], [Hint("blue."), Hint("cobalt!"), Hint("27.")],
                   metadata={LABELS_KEY: {"0": 1, "2": 2, "20": 2, "02": 1}})  # explicit labels
    meta = build_benchmark([rel], tmp_path / "b", top_k=2, split=(1.0,))
    assert Qrels.from_file(tmp_path / "b" / "qrels.tsv") == {"r": {"r_10_0": 1, "r_01_1": 2, "r_11_01": 1, "r_11_10": 2}}
    assert meta["id_scheme"] == {"name": "qid_mask_perm", "mask_bits": ["left-to-right"]}
    assert meta["labels"] == {"1": 2, "2": 2} and meta["labelled_by"] == "quit-release"
    assert LABELS_KEY not in Benchmark(tmp_path / "b").questions["r"].metadata


def test_post_build_hook_runs_inside_the_temp_dir_and_failure_leaves_the_old_output(tmp_path):
    out = tmp_path / "b"
    seen = {}

    def relabel(tmp, meta):
        seen["dir"] = tmp
        assert (tmp / "qrels.tsv").exists() and tmp != out
        (tmp / "qrels.tsv").write_text("a 0 a_1_0 2\n")
        meta["labelled_by"] = "test-hook"

    build_benchmark([q("a", 1)], out, top_k=1, split=(1.0,), post_build=relabel)
    assert json.loads((out / "meta.json").read_text())["labelled_by"] == "test-hook"
    assert (out / "qrels.tsv").read_text() == "a 0 a_1_0 2\n" and not seen["dir"].exists()

    def boom(tmp, meta):
        raise RuntimeError("labeller crashed")

    with pytest.raises(RuntimeError):
        build_benchmark([q("z", 5)], out, post_build=boom, overwrite=True)
    assert list(Benchmark(out).questions) == ["a"]             # previous benchmark untouched
    assert [p.name for p in tmp_path.iterdir()] == ["b"]


def test_real_wikihint_build(wikihint_file, tmp_path):
    from inferqa.data import load_questions

    meta = build_benchmark(load_questions(wikihint_file), tmp_path / "b", sources=[wikihint_file])
    assert meta["counts"]["questions"] == 100 and meta["counts"]["passages"] == 32_500
    assert meta["leakage"]["common_word_answers"] == ["test_62"]
    assert meta["sources"][0]["sha256"] and sum(meta["splits"].values()) == 100
    bench = Benchmark(tmp_path / "b")
    q1 = bench.questions["test_1"]
    assert [h.convergence for h in q1.hints] == sorted((h.convergence for h in q1.hints), reverse=True)


def test_real_triviahg_build(triviahg_file, tmp_path):
    from inferqa.data import load_questions

    meta = build_benchmark(load_questions(triviahg_file), tmp_path / "b")
    assert meta["counts"]["questions"] == 1000 and meta["counts"]["passages"] == 325_000
    with open(tmp_path / "b" / "qrels.tsv") as fh:
        assert sum(1 for _ in fh) == 325_000


def test_a_benchmark_with_the_old_ids_asks_for_a_rebuild(tmp_path):
    out = tmp_path / "b"
    build_benchmark([q("a", 2)], out, top_k=2, split=(1.0,))
    assert Benchmark(out).meta["id_scheme"]["name"] == "qid_mask_perm"
    meta = json.loads((out / "meta.json").read_text())
    del meta["id_scheme"]  # as every build before QUIT's ids wrote it
    (out / "meta.json").write_text(json.dumps(meta))
    (out / "qrels.tsv").write_text("a 0 a_0_0 1\na 0 a_01_10 1\n")
    with pytest.raises(InputError, match=r"old passage ids \(a_0_0.*rebuild it with `inferqa build`"):
        Benchmark(out)
    meta["id_scheme"] = {"name": "qid_subset_perm"}
    (out / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InputError, match="rebuild it with") as exc:
        Benchmark(out)
    assert exc.value.field == "id_scheme"


def test_a_split_cut_to_nothing_is_a_warning_naming_it():
    import warnings

    from inferqa.construct.splits import _cut

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = _cut([f"q{i}" for i in range(8)], ("train", "dev", "test"), (0.7, 0.05, 0.25), seed=0)
    assert [len(out[s]) for s in ("train", "dev", "test")] == [6, 0, 2]  # cuts at round(5.6)=6, round(6.0)=6
    assert [str(w.message).split(":")[0] for w in caught] == ["split 'dev' is empty"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        _cut([f"q{i}" for i in range(8)], ("train", "test"), (1.0, 0.0), seed=0)
    assert caught == []  # a share of 0 asks for nothing
