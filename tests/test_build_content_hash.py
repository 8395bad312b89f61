"""The benchmark's content hash: in meta.json, marked on the tag of the runs made against it,
and a run scored against a benchmark whose content changed since gets one warning line."""

from __future__ import annotations

import json
import re

from conftest import run_cli
from inferqa.formats.bench_write import content_hash
from inferqa.formats.runs import Run


def _hash_by_hand(bench):
    import hashlib

    h = hashlib.sha256()
    for name in ("questions.jsonl", "qrels.tsv", "splits.json"):
        h.update(f"{name}\0{hashlib.sha256((bench / name).read_bytes()).hexdigest()}\n".encode())
    return h.hexdigest()


def test_meta_holds_the_content_hash_and_runs_record_it(monkeypatch, capsys, tmp_path):
    bench = tmp_path / "bench"
    assert run_cli(monkeypatch, capsys, "build", "--demo", "--out", bench)[0] in (0, None)
    first = json.loads((bench / "meta.json").read_text())["content_hash"]
    assert first == _hash_by_hand(bench) == content_hash(bench) and re.fullmatch(r"[0-9a-f]{64}", first)
    assert run_cli(monkeypatch, capsys, "index", bench, "--retriever", "bm25")[0] == 0
    code, _, err = run_cli(monkeypatch, capsys, "retrieve", bench, "--retriever", "bm25", "--out", tmp_path / "r.trec")
    assert code == 0, err
    tags = {line.split()[5] for line in (tmp_path / "r.trec").read_text().splitlines()}
    assert tags == {f"bm25@{first[:16]}"}
    back = Run.from_file(tmp_path / "r.trec")
    assert (back.tag, back.bench_hash) == ("bm25", first[:16])

    code, _, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "r.trec", "--bench", bench)
    assert code == 0 and "made against" not in err

    # same questions, another split: the content changed
    code, _, err = run_cli(monkeypatch, capsys, "build", "--demo", "--seed", "7", "--out", bench, "--overwrite")
    assert code in (0, None), err
    second = json.loads((bench / "meta.json").read_text())["content_hash"]
    assert second != first and second == _hash_by_hand(bench)
    code, _, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "r.trec", "--bench", bench)
    assert code == 0
    warned = [line for line in err.splitlines() if "made against" in line]
    assert len(warned) == 1 and first[:16] in warned[0] and second[:16] in warned[0]
    assert warned[0].startswith("inferqa: warning: ")

    # a reranked run records the benchmark it was reranked against
    code, _, err = run_cli(monkeypatch, capsys, "rerank", tmp_path / "r.trec", "-b", bench, "-r", "oracle",
                           "-o", tmp_path / "o.trec")
    assert code == 0, err
    assert Run.from_file(tmp_path / "o.trec").bench_hash == second[:16]


def test_a_run_written_again_without_a_benchmark_loses_its_mark(tmp_path):
    run = Run({"q": [("q_1_0", 1.0)]}, tag="mine")
    run.bench_hash = "ab" * 32
    run.to_file(tmp_path / "x.trec")
    back = Run.from_file(tmp_path / "x.trec")
    assert (back.tag, back.bench_hash) == ("mine", "ab" * 8)
    Run({"q": [("q_1_0", 1.0)]}, tag=back.tag).to_file(tmp_path / "x.trec")
    again = Run.from_file(tmp_path / "x.trec")
    assert (again.tag, again.bench_hash) == ("mine", None)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["x.trec"]
