"""Dense retrieval with the bundled MiniLM: exact search, resumable encoding, HNSW, real data."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest

from inferqa.formats import iter_corpus
from inferqa.formats.benchmark import Benchmark
from inferqa.construct import build_benchmark
from inferqa.data import load_questions
from inferqa.errors import InputError
from inferqa.retrieve import get_retriever, question_queries

pytest.importorskip("sentence_transformers")
pytest.importorskip("faiss")


def dense(encoder, **options):
    r = get_retriever("dense", show_progress=False, **options)
    r._model = encoder  # load the model once for the whole module
    return r


@pytest.fixture(scope="module")
def bench(demo_bench_8q) -> Benchmark:
    return demo_bench_8q


@pytest.fixture(scope="module")
def built(bench, encoder):
    r = dense(encoder, chunk_size=50)
    r.index(bench)
    return r


def test_embeddings_and_exact_search(bench, encoder, built):
    emb = np.load(built.index_dir / "embeddings.npy")
    passages = list(iter_corpus(bench))
    assert emb.shape == (120, 384) and emb.dtype == np.float32
    direct = encoder.encode([p.text for p in passages[:5]], convert_to_numpy=True)
    assert np.allclose(emb[:5], direct, atol=1e-5)
    queries = question_queries(bench)
    run = built.search(queries, 10)
    q = encoder.encode(list(queries.values()), convert_to_numpy=True)
    sims = q @ emb.T
    for i, qid in enumerate(queries):
        want = np.lexsort((np.arange(len(passages)), -sims[i]))[:10]
        assert [pid for pid, _ in run[qid]] == [passages[j].id for j in want]
        assert np.allclose([s for _, s in run[qid]], sims[i][want], atol=1e-5)


def test_block_merge_equals_single_block(built, bench):
    queries = question_queries(bench)
    whole = built.search(queries, 30)
    built.search_block = 17  # many blocks, top-k merged across them
    try:
        built._loaded = False
        merged = built.search(queries, 30)
    finally:
        built.search_block = 262144
    for qid in whole:
        assert [p for p, _ in merged[qid]] == [p for p, _ in whole[qid]]


class Interrupted(Exception):
    pass


def test_resume_after_interruption_and_reuse(bench, encoder, built, tmp_path, monkeypatch):
    r = dense(encoder, chunk_size=50)
    calls = []
    real = r.encode
    fail = {"at_call": 2}

    def flaky(texts, prefix):
        calls.append(len(texts))
        if len(calls) == fail["at_call"]:
            raise Interrupted
        return real(texts, prefix)

    monkeypatch.setattr(r, "encode", flaky)
    with pytest.raises(Interrupted):
        r.index(bench, tmp_path / "idx")
    state = json.loads((tmp_path / "idx" / "progress.json").read_text())
    assert state["done"] == 50 and not (tmp_path / "idx" / "retriever.json").exists()
    with pytest.raises(InputError, match="no finished dense index"):
        dense(encoder).attach(bench, tmp_path / "idx").search({"q": "x"}, 3)
    calls.clear()
    fail["at_call"] = None
    r.index(bench, tmp_path / "idx")
    assert calls == [50, 20]  # only what was missing
    want = np.load(built.index_dir / "embeddings.npy")
    assert np.allclose(np.load(tmp_path / "idx" / "embeddings.npy"), want, atol=1e-5)
    calls.clear()
    r.index(bench, tmp_path / "idx")
    assert calls == []  # embeddings reused


def test_hnsw_agrees_with_flat_and_shares_embeddings(bench, encoder, built):
    h = dense(encoder, index_type="hnsw")
    assert h.default_index_dir(bench) == built.index_dir
    with pytest.raises(InputError, match="inferqa index"):
        dense(encoder, index_type="hnsw", hnsw_m=8).attach(bench).search({"q": "x"}, 3)
    h.index(bench)
    queries = question_queries(bench)
    a, b = h.search(queries, 10), built.search(queries, 10)
    overlap = np.mean([len({p for p, _ in a[q]} & {p for p, _ in b[q]}) / 10 for q in queries])
    assert overlap >= 0.9


def test_prefixes_reach_the_encoder(encoder, monkeypatch):
    r = dense(encoder, query_prefix="query: ", passage_prefix="passage: ")
    seen = []
    monkeypatch.setattr(encoder, "encode", lambda texts, **kw: seen.extend(texts) or np.zeros((len(texts), 384)))
    r.encode(["a"], r.options["query_prefix"])
    assert seen == ["query: a"]
    assert get_retriever("dense", passage_prefix="x").options_hash() != get_retriever("dense").options_hash()
    with pytest.raises(InputError, match="option .index_type. takes one of flat, hnsw, not .ivf."):
        get_retriever("dense", index_type="ivf")


def _wikihint_hit10(wikihint_file, tmp_path, encoder, top_k):
    from inferqa.evaluation import evaluate

    build_benchmark(load_questions(wikihint_file), tmp_path / "wh", top_k=top_k)
    bench = Benchmark(tmp_path / "wh")
    queries = question_queries(bench)
    out = {}
    for name, r in (("bm25", get_retriever("bm25", show_progress=False)), ("dense", dense(encoder, batch_size=128))):
        r.index(bench)
        out[name] = evaluate(r.search(queries, 100), bench.qrels, ["hit@1", "hit@10", "mrr"])
    print(f"\nWikiHint, {len(queries)} questions, top_k={top_k}: {json.dumps(out)}")
    return out


def test_wikihint_dense_vs_bm25(wikihint_file, tmp_path, encoder):
    """All 100 WikiHint questions, query = question text, QUIT labels (every passage of the
    question is label 1). top_k=3 keeps the corpus at 1,500 passages (15 per question) so
    MiniLM encodes it in seconds; the full 325-per-question run is test_wikihint_full."""
    res = _wikihint_hit10(wikihint_file, tmp_path, encoder, top_k=3)
    assert res["dense"]["hit@10"] > res["bm25"]["hit@10"]


@pytest.mark.slow
@pytest.mark.skipif(not os.environ.get("INFERQA_SLOW"), reason="32,500 passages through MiniLM: set INFERQA_SLOW=1")
def test_wikihint_full(wikihint_file, tmp_path, encoder):
    res = _wikihint_hit10(wikihint_file, tmp_path, encoder, top_k=5)
    assert res["dense"]["hit@10"] > res["bm25"]["hit@10"]


def test_separate_query_encoder(bench, encoder, built, tmp_path):
    """DPR-style: passages from `model` (the same index), queries from `query_model`."""
    import torch
    from sentence_transformers import SentenceTransformer

    from inferqa.models import minilm_path

    other = SentenceTransformer(str(minilm_path()), device="cpu")
    with torch.no_grad():
        for p in other.parameters():
            p.add_(0.05 * torch.randn_like(p, generator=torch.Generator().manual_seed(0)))
    other.save(str(tmp_path / "query-encoder"))
    r = dense(encoder, query_model=str(tmp_path / "query-encoder"))
    assert r.default_index_dir(bench) == built.index_dir  # the query encoder does not shape the index
    r.attach(bench, built.index_dir)
    query = "Which planet is called the red planet?"
    got = r.search({"q": query}, 120)["q"]
    q = SentenceTransformer(str(tmp_path / "query-encoder"), device="cpu").encode([query])[0]
    emb = np.load(built.index_dir / "embeddings.npy")
    ids = [p.id for p in iter_corpus(bench)]
    want = dict(zip(ids, (emb @ q).tolist()))
    assert max(abs(s - want[p]) for p, s in got) < 1e-4
    same = built.search({"q": query}, 120)["q"]
    assert max(abs(s - dict(same)[p]) for p, s in got) > 1e-3  # the other encoder really was used


def test_score_passages_equal_the_search_scores(bench, encoder, built):
    queries = question_queries(bench)
    for qid, ranked in built.search(queries, 120).items():
        pids = [p for p, _ in ranked][::-2]
        got = built.score_passages(queries[qid], pids)
        np.testing.assert_allclose(got, [dict(ranked)[p] for p in pids], rtol=1e-5, atol=1e-6)
    with pytest.raises(InputError, match="'nope_1_0' is not in the dense index"):
        built.score_passages("q", ["nope_1_0"])
