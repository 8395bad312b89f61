"""Clue-level retrieval: each distinct hint encoded once, passages scored from their hints,
checked against a brute-force scoring of every passage from independently encoded hints."""

from __future__ import annotations

import json

import numpy as np
import pytest

from inferqa.formats import iter_corpus
from inferqa.formats.benchmark import Benchmark
from inferqa.errors import InputError
from inferqa.retrieve import get_retriever, question_queries
from inferqa.retrieve.clue import split_sentences

pytest.importorskip("sentence_transformers")


def clue(encoder, **options):
    r = get_retriever("clue", show_progress=False, **options)
    r._encoders["minilm"] = encoder  # load the model once for the whole module
    return r


@pytest.fixture(scope="module")
def bench(demo_bench_8q) -> Benchmark:
    return demo_bench_8q


@pytest.fixture(scope="module")
def built(bench, encoder):
    r = clue(encoder)
    r.index(bench)
    return r


def unit(v):
    return v / np.linalg.norm(v, axis=-1, keepdims=True)


@pytest.fixture(scope="module")
def vectors(bench, encoder):
    """Every hint text of the corpus encoded here, independently of the retriever."""
    texts = sorted({h for p in iter_corpus(bench) for h in bench.hints_of(p.id)})
    return dict(zip(texts, unit(encoder.encode(texts))))


def brute_force(bench, encoder, vectors, query: str, compose: str, t: float = 0.05):
    """Every passage's score from its own hints' vectors, in corpus order."""
    q = unit(encoder.encode([query]))[0]
    out = []
    for p in iter_corpus(bench):
        vecs = np.stack([vectors[h] for h in bench.hints_of(p.id)])
        cos = vecs @ q
        if compose == "mean-embedding":
            s = float(unit(vecs.mean(axis=0)) @ q)
        elif compose == "mean-score":
            s = float(cos.mean())
        elif compose == "max":
            s = float(cos.max())
        else:
            s = float(t * np.log(np.mean(np.exp(cos / t))))
        out.append((p.id, s))
    return out


def test_each_distinct_hint_is_encoded_once(bench, built, encoder):
    manifest = json.loads((built.index_dir / "retriever.json").read_text())
    hints = {h.text for q in bench.questions.values() for h in q.hints[:3]}
    assert manifest["texts_encoded"] == manifest["units"] == len(hints) == 24
    assert manifest["passages"] == 120 and manifest["groups"] == 8 * 7  # 7 non-empty subsets of 3
    texts = json.loads((built.index_dir / "units.json").read_text())
    assert set(texts) == hints
    vecs = np.load(built.index_dir / "unit_vectors.npy")
    assert np.allclose(vecs, unit(encoder.encode(texts)), atol=1e-5)


@pytest.mark.parametrize("compose", ["mean-embedding", "mean-score", "max", "lse"])
def test_scores_equal_brute_force(bench, built, encoder, vectors, compose):
    r = clue(encoder, compose=compose).attach(bench, built.index_dir)
    query = bench.questions[next(iter(bench.questions))].text
    want = brute_force(bench, encoder, vectors, query, compose)
    got = r.search({"q": query}, 120)["q"]
    assert len(got) == 120 and {p for p, _ in got} == {p for p, _ in want}
    by_pid = dict(want)
    assert max(abs(s - by_pid[p]) for p, s in got) < 1e-4
    scores = [s for _, s in got]
    assert scores == sorted(scores, reverse=True)
    top = r.search({"q": query}, 7)["q"]
    assert top == got[:7]  # a shorter list is the head of the longer one


def test_ties_follow_corpus_position(bench, built, encoder):
    """All orderings of one subset tie; with `max`, every superset of the best hint ties too."""
    r = clue(encoder, compose="max").attach(bench, built.index_dir)
    position = {p.id: i for i, p in enumerate(iter_corpus(bench))}
    query = bench.questions[next(iter(bench.questions))].text
    ranked = r.search({"q": query}, 120)["q"]
    for (p1, s1), (p2, s2) in zip(ranked, ranked[1:]):
        assert s1 > s2 or (s1 == s2 and position[p1] < position[p2])
    assert ranked[0][1] == ranked[1][1] == ranked[2][1]  # best hint alone, then its pairs


def test_compositions_share_one_index(bench, built, encoder):
    for compose in ("mean-score", "max", "lse"):
        assert clue(encoder, compose=compose).default_index_dir(bench) == built.index_dir
    assert clue(encoder, unit_prefix="x: ").default_index_dir(bench) != built.index_dir
    with pytest.raises(InputError, match="compose"):
        get_retriever("clue", compose="median")
    with pytest.raises(InputError, match="units"):
        get_retriever("clue", units="words")
    with pytest.raises(InputError, match="model folder not found"):
        get_retriever("clue", query_model="./no/such/model")


def test_sentence_units(bench, encoder, tmp_path):
    assert split_sentences("It is red. It flies!  Why?") == ["It is red.", "It flies!", "Why?"]
    r = clue(encoder, units="sentences", compose="mean-score")
    r.index(bench, tmp_path / "idx")
    sentences = {s for p in iter_corpus(bench) for s in split_sentences(p.text)}
    manifest = json.loads((tmp_path / "idx" / "retriever.json").read_text())
    assert manifest["texts_encoded"] == len(sentences)
    q = unit(encoder.encode(["Which planet is red?"]))[0]
    vecs = dict(zip(sorted(sentences), unit(encoder.encode(sorted(sentences)))))
    want = {p.id: float(np.mean([vecs[s] @ q for s in split_sentences(p.text)])) for p in iter_corpus(bench)}
    got = r.search({"x": "Which planet is red?"}, 5)["x"]
    best = sorted(want.values(), reverse=True)[:5]
    assert np.allclose([s for _, s in got], best, atol=1e-4)


def test_resume_after_interruption(bench, encoder, tmp_path, monkeypatch):
    import inferqa.retrieve.clue as clue_mod

    monkeypatch.setattr(clue_mod, "ENCODE_CHUNK", 10)
    r = clue(encoder)
    calls = []
    real = r._encode

    def flaky(model, texts, prefix):
        calls.append(len(texts))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(model, texts, prefix)

    monkeypatch.setattr(r, "_encode", flaky)
    with pytest.raises(KeyboardInterrupt):
        r.index(bench, tmp_path / "idx")
    assert not (tmp_path / "idx" / "retriever.json").exists()
    calls.clear()
    monkeypatch.setattr(r, "_encode", lambda *a: calls.append(len(a[1])) or real(*a))
    r.index(bench, tmp_path / "idx")
    assert calls == [10, 4]  # the first chunk of 10 was kept
    queries = question_queries(bench)
    assert r.search(queries, 5) == clue(encoder).attach(bench, tmp_path / "idx").search(queries, 5)
    calls.clear()
    r.index(bench, tmp_path / "idx")  # a finished index for the same units: reused, nothing encoded
    assert calls == [] and r.search(queries, 5) == clue(encoder).attach(bench, tmp_path / "idx").search(queries, 5)


def test_unknown_question_is_a_clear_error(bench, encoder, tmp_path):
    import shutil

    copy = tmp_path / "b"
    shutil.copytree(bench.path, copy)
    lines = (copy / "questions.jsonl").read_text().splitlines()
    (copy / "questions.jsonl").write_text("\n".join(lines[1:]) + "\n")
    with pytest.raises(InputError, match="unknown question"):
        clue(encoder).index(Benchmark(copy), tmp_path / "idx")


@pytest.mark.parametrize("compose", ["mean-embedding", "mean-score", "max", "lse", "monotone"])
def test_score_passages_equal_the_search_scores(bench, built, encoder, compose):
    r = clue(encoder, compose=compose).attach(bench, built.index_dir)
    queries = question_queries(bench)
    for qid, ranked in r.search(queries, 120).items():
        pids = [p for p, _ in ranked][::-2]
        got = r.score_passages(queries[qid], pids)
        np.testing.assert_allclose(got, [dict(ranked)[p] for p in pids], rtol=1e-5, atol=1e-6)


def test_monotone_scores_equal_noisy_or_by_brute_force(bench, built, encoder, vectors):
    """monotone = −w·log Π(1 − σ((s − c)/w)) over a passage's hints, from independently encoded hints."""
    c, w = 0.25, 0.07
    r = clue(encoder, compose="monotone", monotone_center=c, monotone_scale=w).attach(bench, built.index_dir)
    query = bench.questions[next(iter(bench.questions))].text
    q = unit(encoder.encode([query]))[0]
    got = dict(r.search({"q": query}, 120)["q"])
    assert len(got) == 120
    for p in iter_corpus(bench):
        prob = [1 / (1 + np.exp(-(float(vectors[h] @ q) - c) / w)) for h in bench.hints_of(p.id)]
        assert got[p.id] == pytest.approx(-w * np.log(np.prod([1 - x for x in prob])), rel=1e-4, abs=1e-6)
