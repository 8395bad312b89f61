"""The local execution backend and the scale adapters (no Ray needed), and the synthetic
QUIT-size benchmark generator on a few questions."""

from __future__ import annotations

import importlib.util
import zlib
from pathlib import Path

import numpy as np
import pytest

from inferqa.formats.benchmark import Benchmark
from inferqa.errors import InputError
from inferqa.llm.base import LLM, GenerationParams
from inferqa.formats import Run
from inferqa.records import parse_passage_id
from inferqa.reranking import rerank_run
from inferqa.retrieve.encoding import encode_texts
from inferqa.scale import load_scaled_llm, map_batches
from inferqa.scale.backends import imap_batches, unwrap_input_error
from inferqa.parameters import TOP_K

REPO = Path(__file__).resolve().parents[1]


class HashLLM(LLM):
    """Deterministic stand-in: answers and log-probabilities are hashes of the request."""

    backend, model, mode = "fake", "hash", "chat"

    def complete(self, prompts, params=GenerationParams()):
        return [f"A{zlib.crc32(p.encode()) % 97}" for p in prompts]

    def chat(self, conversations, params=GenerationParams()):
        return [f"A{zlib.crc32(c[-1]['content'].encode()) % 97}" for c in conversations]

    def logprob(self, prompt, continuation):
        return -(zlib.crc32((prompt + continuation).encode()) % 1000) / 100.0


@pytest.fixture(scope="module")
def small_bench(bench_factory) -> Benchmark:
    return bench_factory(4, name="demo4", top_k=TOP_K.default)


def first_run(bench: Benchmark, per_question: int = 6) -> Run:
    run = Run(tag="first")
    for qid in bench.questions:
        pids = list(bench.qrels[qid])[:per_question]
        run[qid] = [(pid, float(per_question - i)) for i, pid in enumerate(pids)]
    return run


def test_local_map_batches_keeps_order_and_batches():
    calls, sizes = [], []

    def make_worker():
        calls.append(1)

        def worker(batch):
            sizes.append(len(batch))
            return [x * x for x in batch]

        return worker

    out = map_batches((i for i in range(23)), make_worker, batch_size=5, progress=False)
    assert out == [i * i for i in range(23)]
    assert calls == [1]  # the model is loaded once
    assert sizes == [5, 5, 5, 5, 3]


def test_imap_batches_streams_lazily():
    seen = []

    def items():
        for i in range(10):
            seen.append(i)
            yield i

    it = imap_batches(items(), lambda: (lambda b: b), batch_size=4, progress=False)
    assert next(it) == 0
    assert seen == [0, 1, 2, 3]  # only the first batch was pulled from the source


def test_bad_options_and_worker_output():
    with pytest.raises(InputError, match="unknown backend 'spark'"):
        map_batches([1], lambda: (lambda b: b), backend="spark", progress=False)
    with pytest.raises(InputError, match="at least 1"):
        map_batches([1], lambda: (lambda b: b), batch_size=0, progress=False)
    with pytest.raises(RuntimeError, match="returned 1 outputs for a batch of 2"):
        map_batches([1, 2], lambda: (lambda b: b[:1]), batch_size=2, progress=False)


def test_unwrap_input_error_finds_the_cause():
    inner = InputError("bad field", file="x.json", field="text")
    try:
        try:
            raise inner
        except InputError as exc:
            raise RuntimeError("wrapped by an engine") from exc
    except RuntimeError as outer:
        assert unwrap_input_error(outer) is inner
    plain = ValueError("no input error here")
    assert unwrap_input_error(plain) is plain


def test_encode_texts_matches_sentence_transformers(small_bench, tmp_path):
    from sentence_transformers import SentenceTransformer

    from inferqa.models import minilm_path

    texts = [small_bench.passage_text(pid) for pid in list(small_bench.qrels[next(iter(small_bench.questions))])[:12]]
    direct = SentenceTransformer(str(minilm_path())).encode(texts, normalize_embeddings=True)
    # rows streamed into a memory-mapped .npy, batches of 5 (the list path runs in test_ray)
    mm = np.lib.format.open_memmap(tmp_path / "emb.npy", mode="w+", dtype=np.float32, shape=(12, 384))
    encode_texts(iter(texts), "minilm", out=mm, batch_size=5, progress=False)
    mm.flush()
    got = np.load(tmp_path / "emb.npy")
    np.testing.assert_allclose(got, direct, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-5)


def test_rerank_run_local_equals_reranker(small_bench):
    from inferqa.reranking import get_reranker

    run = first_run(small_bench)
    expected = get_reranker("llm-pointwise", llm=HashLLM()).rerank(run, small_bench, depth=4)
    got = rerank_run(run, small_bench.path, "llm-pointwise", depth=4, options={"llm": HashLLM()},
                     batch_size=2, progress=False)
    assert got == expected
    assert got.tag == "first+llm-pointwise"
    # the head really was reordered by the fake model, the tail kept below it
    q0 = next(iter(run))
    assert [p for p, _ in got[q0][4:]] == [p for p, _ in run[q0][4:]]
    assert sorted(p for p, _ in got[q0][:4]) == sorted(p for p, _ in run[q0][:4])


def test_load_scaled_llm_local(tmp_path):
    llm = load_scaled_llm("smollm2", backend="local", cache=tmp_path / "c.sqlite") if _has_llama() else None
    if llm is not None:
        assert llm.identity.startswith("llama-cpp:")
    with pytest.raises(InputError, match="need --backend ray"):
        load_scaled_llm("openai:m", backend="local", base_urls=["http://a/v1", "http://b/v1"])
    with pytest.raises(InputError, match="unknown backend"):
        load_scaled_llm("smollm2", backend="dask")


def _has_llama() -> bool:
    return importlib.util.find_spec("llama_cpp") is not None


def _load_make_synthetic():
    spec = importlib.util.spec_from_file_location("make_synthetic", REPO / "benchmarks" / "make_synthetic.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_split_counts_match_quit():
    ms = _load_make_synthetic()
    assert ms.split_counts(7401) == (4811, 862, 1728)
    train, dev, test = ms.split_counts(740)
    assert (train + dev + test, test, dev) == (740, 173, 86)


def test_synthetic_benchmark_small(wikihint_file, triviahg_file, tmp_path):
    ms = _load_make_synthetic()
    out = ms.ensure_synthetic(tmp_path / "syn", questions=30, seed=5, progress=False)
    bench = Benchmark(out)
    assert len(bench.questions) == 30
    assert {k: len(v) for k, v in bench.splits.items()} == dict(zip(("train", "dev", "test"), ms.split_counts(30)))
    labels = [lab for docs in bench.qrels.values() for lab in docs.values()]
    assert len(labels) == 30 * 325 and set(labels) == {1, 2}
    share2 = labels.count(2) / len(labels)
    assert 0.07 < share2 < 0.16  # expected 11.4% (LABEL2_RATE)
    # label 2 is likelier for longer passages, as the generator intends
    by_size = {1: [], 5: []}
    for docs in bench.qrels.values():
        for pid, lab in docs.items():
            n = len(parse_passage_id(pid)[1])
            if n in by_size:
                by_size[n].append(lab == 2)
    assert np.mean(by_size[5]) > np.mean(by_size[1])
    real = {q.id: q for q in ms.real_questions()}  # leaking hints already dropped
    for q in bench.questions.values():
        assert len(q.hints) == 5 and len({h.text for h in q.hints}) == 5
        base = real[q.metadata["synthetic_from"]]
        assert q.text == base.text and q.answers == base.answers
    # first copies keep their own hints; reruns with the same seed are identical; reuse skips the build
    first = bench.questions["syn00000"]
    assert [h.text for h in first.hints] == [h.text for h in real[first.metadata["synthetic_from"]].hints][:5]
    stamp = (out / "qrels.tsv").stat().st_mtime_ns
    assert ms.ensure_synthetic(out, questions=30, seed=5, progress=False) == out
    assert (out / "qrels.tsv").stat().st_mtime_ns == stamp
    again = ms.make_synthetic(tmp_path / "syn2", questions=30, seed=5, progress=False)
    assert (tmp_path / "syn2" / "qrels.tsv").read_bytes() == (out / "qrels.tsv").read_bytes()
    assert again["labelled_by"] == "synthetic"


def test_npy_rows_read_and_write_by_file_io(tmp_path):
    from inferqa.arrays import npy_layout, read_npy_rows, write_npy_rows

    a = np.arange(10 * 3, dtype=np.float32).reshape(10, 3)
    np.save(tmp_path / "a.npy", a)
    lay = npy_layout(tmp_path / "a.npy")
    assert lay.shape == (10, 3) and lay.row_bytes == 12 and lay.offset == (tmp_path / "a.npy").stat().st_size - a.nbytes
    np.testing.assert_array_equal(read_npy_rows(tmp_path / "a.npy", 2, 7), a[2:7])
    np.testing.assert_array_equal(read_npy_rows(tmp_path / "a.npy", 8, 20, lay), a[8:])  # clipped at the end
    mm = np.lib.format.open_memmap(tmp_path / "b.npy", mode="w+", dtype=np.float32, shape=(10, 3))
    del mm
    write_npy_rows(tmp_path / "b.npy", 6, a[6:])
    write_npy_rows(tmp_path / "b.npy", 0, a[:6].astype(np.float64))  # cast to the file's dtype
    np.testing.assert_array_equal(np.load(tmp_path / "b.npy"), a)
    with pytest.raises(ValueError, match="do not fit"):
        write_npy_rows(tmp_path / "b.npy", 8, a[:3])


def test_rerank_run_checkpoint_resumes(small_bench, tmp_path):
    import json

    run = first_run(small_bench)
    opts = {"llm": HashLLM()}
    ckpt = tmp_path / "rerank.ckpt.jsonl"
    full = rerank_run(run, small_bench.path, "llm-pointwise", depth=4, options=opts, checkpoint=ckpt, progress=False)
    lines = ckpt.read_text().splitlines()
    assert len(lines) == 1 + len(run)
    # keep the first question (with a ranking the model would not give) and a torn line
    q0, q1 = list(run)[:2]
    planted = list(reversed(full[q0]))
    row0 = json.loads(lines[1])
    assert row0["qid"] == q0
    ckpt.write_text(lines[0] + "\n" + json.dumps({"qid": q0, "ranked": planted}) + "\n" + lines[2][:15])
    resumed = rerank_run(run, small_bench.path, "llm-pointwise", depth=4, options=opts, checkpoint=ckpt,
                         progress=False)
    assert resumed[q0] == [tuple(x) for x in planted]  # taken from the checkpoint, not recomputed
    assert {q: resumed[q] for q in list(run)[1:]} == {q: full[q] for q in list(run)[1:]}
    # another depth is another job: the checkpoint is ignored
    other = rerank_run(run, small_bench.path, "llm-pointwise", depth=3, options=opts, checkpoint=ckpt, progress=False)
    assert other[q0] != resumed[q0]
    with pytest.raises(InputError, match="not in the run"):
        rerank_run(run, small_bench.path, "llm-pointwise", qids=["nope"], options=opts, progress=False)


def test_cli_rejects_unknown_backend(small_bench, tmp_path):
    import subprocess
    import sys

    run = first_run(small_bench)
    run.to_file(tmp_path / "run.trec")
    for args in (["rerank", str(tmp_path / "run.trec"), "--bench", str(small_bench.path), "--reranker", "upr",
                  "--out", str(tmp_path / "o.trec"), "--backend", "spark"],
                 ["index", str(small_bench.path), "--retriever", "bm25", "--backend", "ray"]):
        res = subprocess.run([sys.executable, "-m", "inferqa", *args], capture_output=True, text=True)
        assert res.returncode == 2, res.stderr
        assert len(res.stderr.strip().splitlines()) == 1 and "backend" in res.stderr
