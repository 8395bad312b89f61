"""BM25 with compositional dedup equals plain bm25s over the expanded corpus."""

from __future__ import annotations

import math
import random
import shutil
from collections import Counter

import numpy as np
import pytest

from inferqa.formats import iter_corpus
from inferqa.formats.benchmark import Benchmark
from inferqa.errors import InputError
from inferqa.retrieve import get_retriever, question_queries
from inferqa.retrieve.bm25 import top_k_positions
from inferqa.parameters import BUILD_SPLIT as SPLIT


@pytest.fixture(scope="module")
def bench(bench_factory) -> Benchmark:
    return bench_factory(6, top_k=5, split=SPLIT.default)


@pytest.fixture(scope="module")
def shuffled_bench(bench, tmp_path_factory) -> Benchmark:
    """Same benchmark, corpus lines shuffled: groups no longer contiguous."""
    out = tmp_path_factory.mktemp("bm25s") / "bench"
    shutil.copytree(bench.path, out, ignore=shutil.ignore_patterns("indexes"))
    lines = (out / "corpus.jsonl").read_text().splitlines(keepends=True)
    random.Random(5).shuffle(lines)
    (out / "corpus.jsonl").write_text("".join(lines))
    return Benchmark(out)


def _queries(bench):
    qs = question_queries(bench)
    qs["hint-query"] = next(iter(bench.questions.values())).hints[2].text  # many exact matches
    qs["no-known-word"] = "zzzqx"  # every score 0: the tie order alone decides
    return qs


def _both(bench, k):
    runs = []
    for dedup in (True, False):
        r = get_retriever("bm25", dedup=dedup, show_progress=False)
        r.index(bench)
        runs.append(r.search(_queries(bench), k))
    return runs


@pytest.mark.parametrize("which", ["bench", "shuffled_bench"])
def test_dedup_equals_plain_bm25s(which, request):
    bench = request.getfixturevalue(which)
    n = 6 * 325
    dedup, plain = _both(bench, n)
    for qid in plain:
        assert len(dedup[qid]) == len(plain[qid]) == n
        d_scores, p_scores = dict(dedup[qid]), dict(plain[qid])
        assert d_scores.keys() == p_scores.keys()
        assert max(abs(d_scores[p] - p_scores[p]) for p in p_scores) < 1e-5
        assert [p for p, _ in dedup[qid]] == [p for p, _ in plain[qid]], qid
    assert all(ranked[0][1] > 0 for q, ranked in plain.items() if q != "no-known-word")


def test_top_k_cut_matches_full_ranking(bench):
    full, _ = _both(bench, 6 * 325)
    for k in (1, 7, 100):
        cut, plain = _both(bench, k)
        for qid in full:
            assert cut[qid] == full[qid][:k]
            assert [p for p, _ in plain[qid]] == [p for p, _ in cut[qid]]
            assert np.allclose([s for _, s in plain[qid]], [s for _, s in cut[qid]], atol=1e-5)


def test_orderings_of_a_subset_tie_and_multiplicity_is_counted(bench):
    r = get_retriever("bm25", show_progress=False)
    r.index(bench)
    run = r.search(_queries(bench), 6 * 325)
    by_subset = Counter()
    for qid, ranked in run.items():
        scores: dict[str, set[float]] = {}
        for pid, s in ranked:
            scores.setdefault(pid.rsplit("_", 1)[0], set()).add(s)
        assert all(len(v) == 1 for v in scores.values())
    for pid, _ in run["hint-query"]:
        by_subset[len(pid.rsplit("_", 1)[1])] += 1
    assert by_subset == {k: 6 * math.comb(5, k) * math.factorial(k) for k in range(1, 6)}


def test_hand_computed_score(bench):
    """One term, computed from the definition over the expanded corpus."""
    r = get_retriever("bm25", stemmer=None, stopwords=None, show_progress=False)
    r.index(bench)
    passages = [(p.id, r.tokenize([p.text])[0]) for p in iter_corpus(bench)]
    term = passages[0][1][0]
    n = len(passages)
    avg = sum(len(t) for _, t in passages) / n
    df = sum(term in t for _, t in passages)
    idf = math.log(1 + (n - df + 0.5) / (df + 0.5))
    want = {}
    for pid, toks in passages:
        tf = toks.count(term)
        want[pid] = idf * tf / (tf + 1.5 * (0.25 + 0.75 * len(toks) / avg)) if tf else 0.0
    got = dict(r.search({"q": term}, n)["q"])
    assert max(abs(got[p] - want[p]) for p in want) < 1e-5


def test_top_k_positions_tie_order():
    scores = np.array([1, 3, 3, 2, 3, 0], dtype=np.float32)
    assert top_k_positions(scores, 2).tolist() == [1, 2]
    assert top_k_positions(scores, 4).tolist() == [1, 2, 4, 3]
    key = np.array([0, 9, 9, 0, 4, 0])
    assert top_k_positions(scores, 2, key).tolist() == [4, 1]
    assert top_k_positions(scores, 10, key).tolist() == [4, 1, 2, 3, 0, 5]


def test_index_location_and_missing_index(bench, tmp_path):
    a = get_retriever("bm25", k1=1.2)
    b = get_retriever("bm25", k1=1.2)
    c = get_retriever("bm25", k1=0.9)
    assert a.default_index_dir(bench) == b.default_index_dir(bench) != c.default_index_dir(bench)
    assert a.default_index_dir(bench).parent == bench.path / "indexes"
    with pytest.raises(InputError, match="inferqa index .* --retriever bm25") as err:
        get_retriever("bm25", k1=0.1).attach(bench).search({"q": "x"}, 5)
    assert "bm25-" in str(err.value)
    out = get_retriever("bm25", show_progress=False).index(bench, tmp_path / "idx")
    assert out == tmp_path / "idx" and (out / "retriever.json").exists()
    with pytest.raises(InputError, match="unknown retriever"):
        get_retriever("no-such-retriever")
    with pytest.raises(InputError, match="option 'depth' takes"):
        get_retriever("bm25").attach(None, out).search({"q": "x"}, 0)


def test_corpus_ids_other_layouts(bench, tmp_path):
    """Ids are read by a regex fast path; other key orders, blank lines and escapes fall back to json."""
    import json

    from inferqa.formats import corpus_ids

    out = tmp_path / "bench"
    shutil.copytree(bench.path, out, ignore=shutil.ignore_patterns("indexes"))
    rows = [json.loads(line) for line in (out / "corpus.jsonl").read_text().splitlines()]
    want = [r["id"] for r in rows]
    text = "".join(json.dumps({"text": r["text"], "qid": r["qid"], "id": r["id"]}, ensure_ascii=True) + "\n"
                   for r in rows)
    cut = text.index("\n", 500) + 1
    (out / "corpus.jsonl").write_text(text[:cut] + "\n" + text[cut:].rstrip("\n"))  # a blank line, no final newline
    assert corpus_ids(Benchmark(out)).astype("U").tolist() == want
    (out / "corpus.jsonl").write_text("")
    with pytest.raises(InputError, match="no passages"):
        corpus_ids(Benchmark(out))


def test_index_built_with_other_options_is_refused(bench, tmp_path):
    get_retriever("bm25", k1=1.2, show_progress=False).index(bench, tmp_path / "i")
    with pytest.raises(InputError, match="built with options"):
        get_retriever("bm25", k1=0.5).attach(bench, tmp_path / "i").search({"q": "x"}, 3)


def test_search_arrays_matches_search(bench):
    r = get_retriever("bm25", show_progress=False)
    r.index(bench)
    queries = _queries(bench)
    run = r.search(queries, 50)
    got = {q: list(zip(p.astype("U").tolist(), s.tolist())) for q, p, s in r.search_arrays(queries, 50)}
    assert got == run


@pytest.mark.parametrize("which", ["bench", "shuffled_bench"])
@pytest.mark.parametrize("dedup", [True, False])
def test_score_passages_equal_the_search_scores(which, dedup, request):
    """Every passage's score read from the index for one query is the one search ranks it by."""
    bench = request.getfixturevalue(which)
    r = get_retriever("bm25", dedup=dedup, show_progress=False).ensure_index(bench)
    queries = _queries(bench)
    for qid, ranked in r.search(queries, 6 * 325).items():
        pids = [p for p, _ in ranked][::-3]  # any order, any subset
        got = r.score_passages(queries[qid], pids)
        assert got.dtype == np.float64 and len(got) == len(pids)
        np.testing.assert_allclose(got, [dict(ranked)[p] for p in pids], rtol=1e-6, atol=1e-7)
    assert r.score_passages("anything", []).shape == (0,)
    with pytest.raises(InputError, match="'nope_1_0' is not in the bm25 index"):
        r.score_passages("anything", [pids[0], "nope_1_0"])
