"""One benchmark from several hint files with per-source roles (`--split ROLES.yaml`,
`inferqa.construct.splits.SourceRoles`): which questions are queries, which train, which only
distractors, and which are left out."""

from __future__ import annotations

import json
import random

import pytest

from inferqa.construct import build_benchmark
from inferqa.construct.splits import make_splits, read_roles
from inferqa.errors import InputError
from inferqa.formats import iter_corpus
from inferqa.formats.benchmark import Benchmark
from inferqa.records import Hint, Question
from conftest import run_cli


def source(path, ids):
    rows = [{"id": i, "question": f"Which {i}?", "answers": ["zzz"], "hints": [f"{i} clue {k}." for k in range(2)]}
            for i in ids]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture
def two_sources(tmp_path):
    return source(tmp_path / "wiki.jsonl", ["w1", "w2"]), source(tmp_path / "trivia.jsonl", ["t1", "t2", "t3", "t4"])


ROLES = {"sources": [{"path": "wiki.jsonl", "split": "test"},
                     {"path": "trivia.jsonl", "split": {"train": 2, "dev": 1, "test": 1}}],
         "leave_out": ["train"], "seed": 3}


def test_roles_file_sends_each_source_to_its_splits(tmp_path, two_sources):
    (tmp_path / "roles.json").write_text(json.dumps(ROLES), encoding="utf-8")
    meta = build_benchmark(list(two_sources), tmp_path / "b", top_k=2, split=str(tmp_path / "roles.json"))
    order = ["t1", "t2", "t3", "t4"]
    random.Random(3).shuffle(order)  # the roles file's seed; cut in the mapping's order: train 2, dev 1, test 1
    bench = Benchmark(tmp_path / "b")
    assert bench.splits == {"test": ["w1", "w2", order[3]], "dev": [order[2]]}
    assert sorted(bench.questions) == sorted(["w1", "w2", order[2], order[3]])  # the train pair is left out
    assert meta["counts"]["questions_left_out"] == 2 and meta["counts"]["passages"] == 4 * 4  # 2 hints: 4 orders
    assert {p.id.split("_")[0] for p in iter_corpus(bench)} == set(bench.questions)


def test_fraction_roles_cut_a_source_as_make_splits_cuts_it_alone(tmp_path):
    ids = [f"t{i}" for i in range(10)]
    src = source(tmp_path / "trivia.jsonl", ids)
    roles = {"sources": [{"path": str(src), "split": {"train": 0.7, "dev": 0.1, "test": 0.2}}]}
    build_benchmark([src], tmp_path / "b", top_k=2, split=roles, seed=13)
    alone = make_splits([Question(i, "?", ["zzz"], [Hint("x.")]) for i in ids], (0.7, 0.1, 0.2), seed=13)
    assert Benchmark(tmp_path / "b").splits == alone


def test_cli_roles_yaml(monkeypatch, capsys, tmp_path, two_sources):
    (tmp_path / "roles.yaml").write_text(
        "sources:\n  - {path: wiki.jsonl, split: test}\n  - {path: trivia.jsonl, split: distractors}\n",
        encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, "build", *two_sources, "--out", tmp_path / "b", "--top-k", 2,
                             "--split", tmp_path / "roles.yaml")
    assert code in (0, None), err
    assert Benchmark(tmp_path / "b").splits == {"test": ["w1", "w2"], "distractors": ["t1", "t2", "t3", "t4"]}


@pytest.mark.parametrize("roles, says", [
    ({"sources": [{"path": "wiki.jsonl", "split": "test"}]}, "has no role"),
    ({"sources": [{"path": "wiki.jsonl", "split": "test"}, {"path": "trivia.jsonl", "split": "x"},
                  {"path": "other.jsonl", "split": "x"}]}, "not among the sources"),
    ({"sources": [{"path": "wiki.jsonl", "split": "test"},
                  {"path": "trivia.jsonl", "split": {"train": 0.7, "test": 0.2}}]}, "fractions must sum to 1"),
    ({"source": []}, "unknown key 'source'"),
    ({"sources": [{"path": "wiki.jsonl", "splt": "test"}]}, "exactly 'path' and 'split'"),
])
def test_bad_roles_fail_in_one_line_exit_2_nothing_written(monkeypatch, capsys, tmp_path, two_sources, roles, says):
    (tmp_path / "roles.json").write_text(json.dumps(roles), encoding="utf-8")
    code, _, err = run_cli(monkeypatch, capsys, "build", *two_sources, "--out", tmp_path / "b",
                           "--split", tmp_path / "roles.json")
    assert code == 2 and says in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "b").exists()


def test_roles_need_source_files():
    with pytest.raises(InputError, match="need the questions as source files"):
        build_benchmark([Question("a", "?", ["z"], [Hint("x.")])], "unused", top_k=1,
                        split=read_roles({"sources": [{"path": "a.jsonl", "split": "test"}]}))
