"""An answers file written by `inferqa read` records the benchmark's content hash in each row
(a field the readers ignore), and `evaluate-answers` against a benchmark whose content changed
since warns in one line naming both hashes, as scoring a run does."""

from __future__ import annotations

import json

import pytest
from conftest import run_cli, says
from inferqa.construct import build_benchmark
from inferqa.data import demo_path, load_questions
from inferqa.formats import Answers


def _hash(bench):
    return json.loads((bench / "meta.json").read_text())["content_hash"]


def test_read_records_the_benchmark_and_evaluate_answers_warns_when_it_changed(tmp_path, monkeypatch, capsys):
    import inferqa.reading.run

    monkeypatch.setattr(inferqa.reading.run, "llm_opener", lambda *args, **kw: lambda spec: says("Einstein"))
    questions, bench, answers = load_questions(demo_path())[:3], tmp_path / "b", tmp_path / "answers.jsonl"
    build_benchmark(questions, bench, top_k=3, split=(0.0, 0.0, 1.0))
    first = _hash(bench)
    code, _, err = run_cli(monkeypatch, capsys, "read", "optimal", "--bench", bench, "--k", "1", "-o", answers)
    assert code in (0, None), err
    rows = [json.loads(line) for line in answers.read_text().splitlines()]
    assert len(rows) == 3 and {r["bench_hash"] for r in rows} == {first[:16]}
    back = Answers.from_file(answers, None)
    assert [r["prediction"] for r in back] == ["Einstein"] * 3 and {r["bench_hash"] for r in back} == {first[:16]}

    code, out, err = run_cli(monkeypatch, capsys, "evaluate-answers", answers, "--bench", bench, "--json")
    assert code in (0, None) and "made against" not in err
    expected_em = pytest.approx(1 / 3, abs=1e-9)  # only the second question's golds hold "Einstein"
    assert [("Einstein" in q.answers) for q in questions] == [False, True, False]
    assert json.loads(out)[0]["em"] == expected_em

    build_benchmark(questions, bench, top_k=3, split=(0.0, 1.0, 0.0), overwrite=True)  # the split changed
    second = _hash(bench)
    assert second != first
    code, out, err = run_cli(monkeypatch, capsys, "evaluate-answers", answers, "--bench", bench, "--json")
    assert code in (0, None), err
    warned = [line for line in err.splitlines() if "made against" in line]
    assert len(warned) == 1 and first[:16] in warned[0] and second[:16] in warned[0] and str(answers) in warned[0]
    assert warned[0].startswith("inferqa: warning: ")
    assert json.loads(out)[0]["em"] == expected_em  # scored all the same


def test_answers_without_a_record_are_scored_without_a_warning(tmp_path, monkeypatch, capsys, demo_bench_8q):
    qid = demo_bench_8q.split_qids("test")[0]
    path = tmp_path / "a.jsonl"
    path.write_text(json.dumps({"qid": qid, "strategy": "s", "k": 1, "prediction": "x"}) + "\n")
    code, _, err = run_cli(monkeypatch, capsys, "evaluate-answers", path, "--bench", demo_bench_8q.path)
    assert code in (0, None) and "made against" not in err
