"""Compressed inputs (.zsd, .zst, .gz) read transparently, streaming, by every reader; special
files refused before they are opened; `-` read from stdin."""

from __future__ import annotations

import gzip
import io
import json
import os
import sys

import pytest

from inferqa.data import load_questions
from inferqa.errors import InputError
from inferqa.formats import Run
from inferqa.io import iter_jsonl, iter_lines, open_input, read_json

from conftest import run_cli

zstandard = pytest.importorskip("zstandard")


def zstd(data: bytes, frames: int = 1) -> bytes:
    """`data` as zstd, in `frames` frames written by the streaming compressor (no content size)."""
    out = io.BytesIO()
    step = -(-len(data) // frames)
    for i in range(frames):
        with zstandard.ZstdCompressor().stream_writer(out, closefd=False) as w:
            w.write(data[i * step:(i + 1) * step])
    return out.getvalue()


def test_zstd_and_gzip_read_like_the_plain_file(tmp_path):
    text = "".join(json.dumps({"id": f"p{i}", "text": "é " * (i % 7)}) + "\n" for i in range(5000)).encode()
    (tmp_path / "a.jsonl").write_bytes(text)
    (tmp_path / "a.jsonl.zst").write_bytes(zstd(text, frames=3))  # frames read one after another
    (tmp_path / "a.zsd").write_bytes(zstd(text))
    (tmp_path / "a.jsonl.gz").write_bytes(gzip.compress(text))
    (tmp_path / "b.jsonl").write_bytes(zstd(text))  # no telling name: the zstd header decides
    plain = list(iter_jsonl(tmp_path / "a.jsonl"))
    assert len(plain) == 5000 and plain[4999] == (5000, {"id": "p4999", "text": "é " * (4999 % 7)})
    for name in ("a.jsonl.zst", "a.zsd", "a.jsonl.gz", "b.jsonl"):
        assert list(iter_jsonl(tmp_path / name)) == plain, name
        with open_input(tmp_path / name) as fh:
            assert fh.read() == text


@pytest.mark.parametrize("name,data,needle", [
    ("cut.zsd", lambda t: zstd(t)[:-5], "corrupt zstd stream: the file ends inside a frame"),
    ("bad.zst", lambda t: zstd(t)[:8] + b"\xff" * 30 + zstd(t)[38:], "corrupt zstd stream"),
    ("tail.zst", lambda t: zstd(t) + b"junk", "corrupt zstd stream"),
    ("cut.gz", lambda t: gzip.compress(t)[:-12], "corrupt gzip stream"),
    ("plain.gz", lambda t: t, "not a gzip stream"),
])
def test_a_corrupt_stream_is_one_error_naming_the_file(tmp_path, name, data, needle):
    text = b"".join(b"q Q0 p%d %d %d.0 t\n" % (i, i + 1, 9000 - i) for i in range(3000))
    path = tmp_path / name
    path.write_bytes(data(text))
    with pytest.raises(InputError) as exc:
        list(iter_lines(path))
    assert needle in str(exc.value) and exc.value.file == str(path)


def _wikihint_sample(wikihint_file, n=3) -> bytes:
    return json.dumps(json.loads(wikihint_file.read_text(encoding="utf-8"))[:n]).encode()


def test_build_from_a_zsd_wikihint_source(wikihint_file, tmp_path, monkeypatch, capsys):
    (tmp_path / "test.json").write_bytes(_wikihint_sample(wikihint_file))
    (tmp_path / "test.zsd").write_bytes(zstd(_wikihint_sample(wikihint_file)))
    want = load_questions(tmp_path / "test.json")
    assert [q.to_dict() for q in load_questions(tmp_path / "test.zsd")] == [q.to_dict() for q in want]
    assert len(want) == 3 and want[0].id == "test_1"
    code, _, err = run_cli(monkeypatch, capsys, "build", tmp_path / "test.zsd", "--top-k", "2", "--out", tmp_path / "B")
    assert code in (0, None), err
    from inferqa.formats.benchmark import Benchmark

    assert sorted(Benchmark(tmp_path / "B").questions) == sorted(q.id for q in want)


def test_a_compressed_run_evaluates_as_the_plain_one(bench_factory, tmp_path, monkeypatch, capsys):
    b = bench_factory(4, root=tmp_path)
    bench = b.path
    run = Run({qid: [(pid, 1.0 / (i + 1)) for i, pid in enumerate(list(b.qrels[qid])[3:9])] for qid in b.questions})
    run.to_file(tmp_path / "run.trec")
    (tmp_path / "run.zsd").write_bytes(zstd((tmp_path / "run.trec").read_bytes()))
    (tmp_path / "run.trec.gz").write_bytes(gzip.compress((tmp_path / "run.trec").read_bytes()))
    assert Run.from_file(tmp_path / "run.zsd") == Run.from_file(tmp_path / "run.trec.gz") == Run.from_file(tmp_path / "run.trec")
    results = []
    for name in ("run.trec", "run.zsd", "run.trec.gz"):
        code, out, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / name, "--bench", bench, "--json")
        assert code in (0, None), err
        results.append(json.loads(out)["metrics"])
    assert results[0] == results[1] == results[2] and results[0]["hit@1"] > 0
    # a Rankify JSON run, compressed, matched to its split by position
    qids = b.split_qids("test")
    rankify = [{"question": b.questions[q].text, "ctxs": [{"id": p, "score": s} for p, s in run[q]]} for q in qids]
    (tmp_path / "run.json.zst").write_bytes(zstd(json.dumps(rankify).encode()))
    assert Run.from_file(tmp_path / "run.json.zst", bench=b, split="test") == {q: run[q] for q in qids} and len(qids) == 2


def test_special_files_are_refused_before_they_are_opened(tmp_path):
    os.mkfifo(tmp_path / "fifo")  # opening it for reading would block until a writer comes
    for path, kind in ((tmp_path / "fifo", "a FIFO"), ("/dev/zero", "a character device"),
                       (tmp_path, "a directory")):
        with pytest.raises(InputError, match=kind.split()[-1]):
            with open_input(path):
                pass
        with pytest.raises(InputError):
            read_json(path)


def test_dash_reads_stdin(tmp_path, monkeypatch):
    text = b"q Q0 p1 1 2.0 t\nq Q0 p2 2 1.0 t\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(zstd(text)))))
    assert Run.from_file("-") == {"q": [("p1", 2.0), ("p2", 1.0)]}


def test_read_json_says_truncated(tmp_path):
    (tmp_path / "a.json").write_text('[{"id": "a"}, {"id": "b", "te')
    with pytest.raises(InputError, match="truncated"):
        read_json(tmp_path / "a.json")
    (tmp_path / "b.json").write_text('[{"id": "a"}] x')
    with pytest.raises(InputError, match="malformed JSON"):
        read_json(tmp_path / "b.json")
