"""`inferqa build` and `inferqa stats` through the real entry point: exit codes, one-line errors."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from inferqa.formats.benchmark import Benchmark
from conftest import run_cli


def jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def good_row(qid="a", n=5):
    return {"id": qid, "question": "Which?", "answers": ["zzz"], "hints": [f"hint {i} of {qid}." for i in range(n)]}


def test_build_then_stats(monkeypatch, capsys, tmp_path):
    src = jsonl(tmp_path / "mine.jsonl", [good_row("a"), good_row("b"), good_row("c", 3)])
    code, out, err = run_cli(monkeypatch, capsys, "build", src, "--out", tmp_path / "b", "--split", "1,1", "--seed", 3)
    assert code in (0, None), err
    assert "2 questions, 650 passages" in out and "1 with fewer than 5 hints skipped" in out
    bench = Benchmark(tmp_path / "b")
    assert {k: len(v) for k, v in bench.splits.items()} == {"train": 1, "test": 1}
    assert bench.meta["options"]["seed"] == 3 and bench.meta["sources"][0]["path"] == str(src)

    code, out, err = run_cli(monkeypatch, capsys, "stats", tmp_path / "b")
    assert code in (0, None), err
    rows = {line.split()[1]: line.split()[3:6] for line in out.splitlines() if line.startswith("│")}
    assert rows["all"] == ["2", "│", "650"] and rows["train"] == ["1", "│", "325"]


def test_build_demo(monkeypatch, capsys, tmp_path):
    code, out, err = run_cli(monkeypatch, capsys, "build", "--demo", "--top-k", 5, "--out", tmp_path / "demo")
    assert code in (0, None), err
    meta = Benchmark(tmp_path / "demo").meta
    assert meta["counts"]["questions"] >= 40 and meta["counts"]["leak_hints_dropped"] == 0
    assert meta["counts"]["passages"] == 325 * meta["counts"]["questions"]


def test_leak_policy_and_top_k_options(monkeypatch, capsys, tmp_path):
    rows = [good_row("a", 6), {**good_row("b", 6), "answers": ["hint 0 of b"]}]
    src = jsonl(tmp_path / "m.jsonl", rows)
    code, out, _ = run_cli(monkeypatch, capsys, "build", src, "--out", tmp_path / "b", "--leak-policy",
                           "drop-question", "--top-k", "2")
    assert code in (0, None) and "1 questions, 4 passages" in out and "1 questions dropped for leaks" in out


BAD_CASES = {
    "malformed JSON": ("bad.json", '[{"id": "a", "question": ', "", "malformed JSON"),
    "missing field": ("m.jsonl", json.dumps({"id": "a", "answers": ["x"], "hints": []}), "record line 1: field "
                      "'question'", "missing field"),
    "empty answer": ("e.jsonl", json.dumps({**good_row(), "answers": ["  "]}), "record line 1: field 'answers'",
                     "empty answer"),
    "duplicate ids": ("d.jsonl", json.dumps(good_row()) + "\n" + json.dumps(good_row()), "record a: field 'id'",
                      "duplicate question id"),
    "unknown format": ("u.json", json.dumps({"rows": []}), "", "unknown format"),
}


@pytest.mark.parametrize("case", list(BAD_CASES))
def test_bad_input_is_one_line_exit_2_nothing_written(monkeypatch, capsys, tmp_path, case):
    name, content, where, what = BAD_CASES[case]
    src = tmp_path / name
    src.write_text(content, encoding="utf-8")
    code, out, err = run_cli(monkeypatch, capsys, "build", src, "--out", tmp_path / "b")
    assert code == 2
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err
    assert err.startswith(f"inferqa: error: {src}") and where in err and what in err
    assert sorted(p.name for p in tmp_path.iterdir()) == [name]


def test_unknown_format_option_and_bad_split(monkeypatch, capsys, tmp_path):
    src = jsonl(tmp_path / "m.jsonl", [good_row()])
    code, _, err = run_cli(monkeypatch, capsys, "build", src, "--format", "xml", "--out", tmp_path / "b")
    assert code == 2 and "field 'format': unknown format 'xml'" in err
    code, _, err = run_cli(monkeypatch, capsys, "build", src, "--split", "0.5,0.6", "--out", tmp_path / "b")
    assert code == 2 and "fractions must sum to 1" in err
    assert not (tmp_path / "b").exists()


def test_out_dir_that_is_not_a_benchmark_is_never_replaced(monkeypatch, capsys, tmp_path):
    src = jsonl(tmp_path / "m.jsonl", [good_row()])
    precious = tmp_path / "precious"
    precious.mkdir()
    (precious / "thesis.tex").write_text("x")
    code, _, err = run_cli(monkeypatch, capsys, "build", src, "--out", precious)
    assert code == 2 and "not a benchmark directory" in err and (precious / "thesis.tex").exists()


def test_stats_on_a_missing_directory(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(monkeypatch, capsys, "stats", tmp_path / "nope")
    assert code == 2 and "benchmark directory not found" in err


def test_module_entry_point_help_and_error():
    help_ = subprocess.run([sys.executable, "-m", "inferqa", "build", "--help"], capture_output=True, text=True)
    assert help_.returncode == 0 and "--leak-policy" in help_.stdout
    err = subprocess.run([sys.executable, "-m", "inferqa", "stats", "/nonexistent/bench"], capture_output=True,
                         text=True)
    assert err.returncode == 2 and err.stderr.strip() == \
        "inferqa: error: /nonexistent/bench: benchmark directory not found"


def test_quit_release_with_source_splits(monkeypatch, capsys, tmp_path):
    def record(qid, label_model_answer):
        hints = [{"hint": f"{qid} clue {i}."} for i in range(2)]
        subsets = {"10": {"0": {"gemma-3-1b": label_model_answer}}, "01": {"1": {"qwen-3-4b": "nope"}},
                   "11": {"01": {"llama-31-8b": "nope"}, "10": {"llama-31-8b": label_model_answer}}}
        return {"id": qid, "question": "?", "answers": ["Gold"], "hints": hints, "subsets": subsets}

    dev = tmp_path / "dev.json"
    test = tmp_path / "test.json"
    dev.write_text(json.dumps([record("d1", "gold")]))
    test.write_text(json.dumps([record("t1", "silver"), record("t2", "GOLD!")]))
    code, _, err = run_cli(monkeypatch, capsys, "build", dev, test, "--out", tmp_path / "b", "--top-k", "2",
                           "--split", "source", "--leak-policy", "none")
    assert code in (0, None), err
    bench = Benchmark(tmp_path / "b")
    assert bench.splits == {"dev": ["d1"], "test": ["t1", "t2"]}
    # The release's ids; labels by the authors' exact rule: "gold" is not "Gold".
    assert bench.qrels["d1"] == {"d1_10_0": 1, "d1_01_1": 1, "d1_11_01": 1, "d1_11_10": 1}
    assert bench.meta["options"]["label_match"] == "exact"
    code, _, err = run_cli(monkeypatch, capsys, "build", dev, test, "--out", tmp_path / "b", "--top-k", "2",
                           "--split", "source", "--leak-policy", "none", "--label-match", "normalized", "--overwrite")
    assert code in (0, None), err
    bench = Benchmark(tmp_path / "b")
    assert bench.qrels["d1"] == {"d1_10_0": 2, "d1_01_1": 1, "d1_11_01": 1, "d1_11_10": 2}
    assert set(bench.qrels["t1"].values()) == {1} and bench.qrels["t2"]["t2_11_10"] == 2
    assert bench.meta["labelling"] == {"source": "quit-release", "labelers": ["gemma-3-1b", "qwen-3-4b",
                                       "llama-31-8b"], "match": "normalized", "stored_answers": 12}
    assert bench.meta["labels"] == {"1": 8, "2": 4}   # d1 and t2 two each


def test_build_demo_is_the_benchmark_inferqa_demo_runs_on(monkeypatch, capsys, tmp_path):
    from inferqa.construct import build_benchmark
    from inferqa.data import demo_path, load_questions
    from inferqa.data.shipped_demo import demo_build_options
    from inferqa.experiments.config import load_config, shipped_config

    code, out, err = run_cli(monkeypatch, capsys, "build", "--demo", "--out", tmp_path / "cli")
    assert code in (0, None), err
    assert "48 questions, 720 passages" in out and "SmolLM2's, shipped with the demo" in out
    build_benchmark(load_questions(demo_path()), tmp_path / "py", **demo_build_options())  # what `inferqa demo` builds
    for name in ("questions.jsonl", "corpus.jsonl", "qrels.tsv", "splits.json", "labels.jsonl"):
        assert (tmp_path / "cli" / name).read_bytes() == (tmp_path / "py" / name).read_bytes(), name
    bench = Benchmark(tmp_path / "cli")
    assert {k: len(v) for k, v in bench.splits.items()} == {"train": 6, "dev": 4, "test": 38}
    assert set(bench.meta["labels"]) == {"1", "2"} and bench.meta["labelled_by"] == "llm"
    # the demo's help names what its config runs
    code, out, _ = run_cli(monkeypatch, capsys, "demo", "--help")
    config = load_config(shipped_config("demo"))
    text = " ".join(out.split())
    assert "dense" not in text and "build --demo" in text
    for stage in (*config.retrievers, *config.rerankers):
        assert stage.kind in text, stage.kind


def test_the_python_functions_are_the_commands(monkeypatch, capsys, tmp_path):
    """`inferqa.label.stage.build` and `inferqa.construct.stage.stats` take the command's road:
    the same benchmark and counts, the same one-line error for a bad value."""
    from inferqa.construct.stage import stats
    from inferqa.construct.stats import benchmark_stats
    from inferqa.errors import InputError
    from inferqa.label.stage import build

    src = jsonl(tmp_path / "mine.jsonl", [good_row("a"), good_row("b"), good_row("c", 3)])
    result = build([src], out=tmp_path / "py", split="1,1", seed=3)
    assert result.summary() == ("2 questions, 650 passages (0 leaking hints dropped, 0 questions dropped for leaks, "
                                "1 with fewer than 5 hints skipped); train 1, test 1")
    assert stats(tmp_path / "py") == benchmark_stats(tmp_path / "py")
    assert stats(tmp_path / "py")["splits"]["train"]["passages"] == 325
    with pytest.raises(InputError) as raised:
        build([src], out=tmp_path / "bad", top_k=11)
    assert str(raised.value) == "build: option 'top_k' takes an integer in [1, 10], not 11"
    code, _, err = run_cli(monkeypatch, capsys, "build", src, "--out", tmp_path / "bad", "--top-k", 11)
    assert code == 2 and err.strip().endswith(str(raised.value))
    assert not (tmp_path / "bad").exists()
