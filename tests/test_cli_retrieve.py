"""`inferqa index / retrieve / oracle / evaluate` end to end, and their one-line errors."""

from __future__ import annotations

import json

import pytest

from conftest import one_line_error, run_cli
from inferqa.evaluation import evaluate
from inferqa.formats import Qrels
from inferqa.formats import Run


@pytest.fixture(scope="module")
def bench_dir(bench_factory):
    return bench_factory(4).path


def test_index_retrieve_evaluate(bench_dir, tmp_path, monkeypatch, capsys):
    code, _, err = run_cli(monkeypatch, capsys, "retrieve", bench_dir, "--retriever", "bm25", "--out", tmp_path / "r")
    one_line_error(code, err, "inferqa index", "--retriever bm25", str(bench_dir / "indexes"))
    assert not (tmp_path / "r").exists()

    assert run_cli(monkeypatch, capsys, "index", bench_dir, "--retriever", "bm25")[0] == 0
    assert run_cli(monkeypatch, capsys, "index", bench_dir, "--retriever", "bm25", "--no-dedup")[0] == 0
    for name, extra in (("dedup.trec", []), ("plain.trec", ["--no-dedup"])):
        code, out, err = run_cli(monkeypatch, capsys, "retrieve", bench_dir, "--split", "all", "--depth", "20",
                                 "--out", tmp_path / name, *extra)
        assert code == 0, err
    lines = (tmp_path / "dedup.trec").read_text().splitlines()
    assert len(lines) == 4 * 20 and len(lines[0].split()) == 6 and lines[0].split()[3] == "1"
    dedup, plain = Run.from_file(tmp_path / "dedup.trec"), Run.from_file(tmp_path / "plain.trec")
    assert {q: [p for p, _ in r] for q, r in dedup.items()} == {q: [p for p, _ in r] for q, r in plain.items()}

    code, out, _ = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "dedup.trec", "--qrels",
                           bench_dir / "qrels.tsv", "--json", "-m", "hit@1,mrr,ndcg@10")
    assert code == 0
    got = json.loads(out)
    want = evaluate(dedup, Qrels.from_file(bench_dir / "qrels.tsv"), ["hit@1", "mrr", "ndcg@10"])
    assert got["metrics"] == pytest.approx(want) and got["questions"] == 4

    code, out, _ = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "dedup.trec", "--bench", bench_dir)
    assert code == 0 and "hit@100" in out and "ndcg_exp@10" in out
    code, out, _ = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "dedup.trec", "--bench", bench_dir,
                           "--per-query", "--json", "-m", "mrr")
    assert set(json.loads(out)["per_query"]) == set(dedup)


def test_oracles_cli(bench_dir, tmp_path, monkeypatch, capsys):
    code, _, err = run_cli(monkeypatch, capsys, "oracle", bench_dir, "--kind", "optimal", "--split", "test",
                           "--out", tmp_path / "opt.trec")
    assert code == 0, err
    code, out, _ = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "opt.trec", "--bench", bench_dir, "--split", "test",
                           "--json")
    assert json.loads(out)["metrics"]["ndcg_exp@10"] == pytest.approx(1.0)
    assert json.loads(out)["questions"] == 2
    code, _, err = run_cli(monkeypatch, capsys, "oracle", bench_dir, "--kind", "reranker", "--out", tmp_path / "x")
    one_line_error(code, err, "--run")
    code, _, err = run_cli(monkeypatch, capsys, "oracle", bench_dir, "--kind", "nope", "--out", tmp_path / "x")
    one_line_error(code, err, "unknown oracle kind")
    code, _, _ = run_cli(monkeypatch, capsys, "oracle", bench_dir, "--kind", "retriever", "--seed", "3",
                         "--out", tmp_path / "or.trec")
    assert code == 0 and len(Run.from_file(tmp_path / "or.trec")) == 2
    code, _, _ = run_cli(monkeypatch, capsys, "oracle", bench_dir, "--kind", "reranker", "--run",
                         tmp_path / "or.trec", "--out", tmp_path / "rr.trec")
    assert code == 0


def _write(path, text):
    path.write_text(text)
    return path


def test_bad_input_is_one_line(bench_dir, tmp_path, monkeypatch, capsys):
    qrels = bench_dir / "qrels.tsv"
    good_pid = next(iter(next(iter(Qrels.from_file(qrels).values()))))
    qid, mask, _ = good_pid.rsplit("_", 2)
    other = next(f"{qid}_{'0' * i}1{'0' * (len(mask) - i - 1)}_{i}" for i in range(len(mask))
                 if good_pid != f"{qid}_{'0' * i}1{'0' * (len(mask) - i - 1)}_{i}")
    cases = {
        "unknown passage id": f"{qid} Q0 {qid}_0000000001_9 1 2.0 t\n",
        "not a passage id": f"{qid} Q0 banana 1 2.0 t\n",
        "duplicate passage": f"{qid} Q0 {good_pid} 1 2.0 t\n{qid} Q0 {good_pid} 2 1.0 t\n",
        "unsorted run": f"{qid} Q0 {good_pid} 1 1.0 t\n{qid} Q0 {other} 2 2.0 t\n",
        "run file is empty": "\n",
    }
    for needle, text in cases.items():
        run = _write(tmp_path / "bad.trec", text)
        code, _, err = run_cli(monkeypatch, capsys, "evaluate", run, "--bench", bench_dir)
        one_line_error(code, err, needle)
    good = _write(tmp_path / "good.trec", f"{qid} Q0 {good_pid} 1 1.0 t\n")
    code, _, err = run_cli(monkeypatch, capsys, "evaluate", good, "--qrels", _write(tmp_path / "q.tsv", ""))
    one_line_error(code, err, "qrels file is empty")
    code, _, err = run_cli(monkeypatch, capsys, "evaluate", good, "--qrels", qrels, "-m", "hit")
    one_line_error(code, err, "needs a cutoff")
    code, _, err = run_cli(monkeypatch, capsys, "evaluate", good)
    one_line_error(code, err, "--qrels")
    code, _, err = run_cli(monkeypatch, capsys, "index", bench_dir, "--retriever", "nope")
    one_line_error(code, err, "unknown retriever")
    code, _, err = run_cli(monkeypatch, capsys, "index", bench_dir, "--opt", "novalue")
    one_line_error(code, err, "KEY=VALUE")
    code, _, err = run_cli(monkeypatch, capsys, "index", bench_dir, "--opt", "colour=3")
    one_line_error(code, err, "retriever 'bm25' has no option 'colour'; its options: k1")
    code, _, err = run_cli(monkeypatch, capsys, "index", tmp_path / "missing")
    one_line_error(code, err, "benchmark directory not found")


def test_help_texts(monkeypatch, capsys):
    for cmd in ("index", "retrieve", "oracle", "evaluate"):
        code, out, _ = run_cli(monkeypatch, capsys, cmd, "--help")
        assert code == 0 and "Usage" in out and "--help" in out
