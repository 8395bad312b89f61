"""Late interaction: MaxSim kernels against plain numpy, clue-level against full-passage
scoring, the PyLate-layout model folder, and the `colbert` retriever on a tiny BERT built
here from a config (random weights: plumbing and exactness, not quality)."""

from __future__ import annotations

import json
import re
import string

import numpy as np
import pytest

from inferqa.formats import iter_corpus
from inferqa.errors import InputError
from inferqa.retrieve import maxsim
from inferqa.retrieve.maxsim import (maxsim_scores, open_token_store, pad_queries, set_maxsim_scores, token_maxima,
                                     top_k, write_token_store)

pytest.importorskip("sentence_transformers")


def numpy_maxsim(query: np.ndarray, doc: np.ndarray) -> float:
    return float(sum(max(float(q @ d) for d in doc) for q in query))


def ragged(rng, n: int, dim: int = 6, most: int = 5) -> list[np.ndarray]:
    out = []
    for _ in range(n):
        v = rng.normal(size=(int(rng.integers(1, most + 1)), dim))
        out.append((v / np.linalg.norm(v, axis=1, keepdims=True)).astype(np.float16).astype(np.float32))
    return out


def store(tmp_path, arrays: list[np.ndarray], name: str = "s", chunk_size: int = 3):
    out = tmp_path / name
    out.mkdir()
    by_text = {str(i): a for i, a in enumerate(arrays)}
    write_token_store(out, [str(i) for i in range(len(arrays))], len(arrays),
                      lambda chunk: [by_text[t] for t in chunk], chunk_size=chunk_size, show_progress=False)
    return open_token_store(out)


@pytest.fixture
def small_blocks(monkeypatch):
    monkeypatch.setattr(maxsim, "WORK_BYTES", 4 * 7 * 3 * 2)  # a few token rows per block


def test_maxsim_matches_numpy_over_blocks(tmp_path, small_blocks):
    rng = np.random.default_rng(0)
    docs, queries = ragged(rng, 11), ragged(rng, 3, most=4)
    tokens, offsets = store(tmp_path, docs)
    assert tokens.dtype == np.float16 and offsets.tolist()[-1] == sum(len(d) for d in docs)
    got = maxsim_scores(tokens, offsets, pad_queries(queries))
    want = np.array([[numpy_maxsim(q, d) for q in queries] for d in docs])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(token_maxima(tokens, offsets, pad_queries(queries)).sum(axis=2), want, atol=1e-5)


def test_zero_padding_of_queries_adds_nothing():
    q = pad_queries([np.ones((1, 2), np.float32), np.ones((3, 2), np.float32)])
    assert q.shape == (2, 3, 2) and q[0, 1:].sum() == 0 and q[1].sum() == 6


def test_union_of_units_scores_like_the_concatenated_tokens(tmp_path, small_blocks):
    """Clue-level scoring equals full MaxSim whenever a passage's tokens are its units' tokens."""
    rng = np.random.default_rng(1)
    units = ragged(rng, 5)
    sets = [(0,), (1, 3), (0, 2, 4), (2, 4), (3,)]
    orderings = [(0,), (3, 1), (4, 0, 2), (2, 4), (3,), (1, 3), (0, 4, 2)]  # several per set, any order
    set_of = [sets.index(tuple(sorted(o))) for o in orderings]
    ptr = np.cumsum([0] + [len(s) for s in sets])
    flat = np.array([u for s in sets for u in s])
    queries = pad_queries(ragged(rng, 2, most=3))

    u_tokens, u_offsets = store(tmp_path, units, "units")
    clue = set_maxsim_scores(token_maxima(u_tokens, u_offsets, queries), ptr, flat)[set_of]
    p_tokens, p_offsets = store(tmp_path, [np.concatenate([units[u] for u in o]) for o in orderings], "passages")
    full = maxsim_scores(p_tokens, p_offsets, queries)
    np.testing.assert_allclose(clue, full, rtol=1e-6, atol=1e-6)
    assert clue[1].tolist() == clue[5].tolist()  # orderings of one subset share a score


def test_top_k_breaks_ties_by_position_and_keeps_every_tie_at_the_cut():
    scores = np.array([[0.5, 1.0], [0.9, 1.0], [0.5, 0.2], [0.9, 1.0], [0.5, 1.0], [0.1, 1.0]], dtype=np.float32)
    idx, got = top_k(scores, 3)
    assert idx.tolist() == [[1, 3, 0], [0, 1, 3]]
    np.testing.assert_allclose(got, [[0.9, 0.9, 0.5], [1.0, 1.0, 1.0]])
    assert top_k(scores, 10)[0].tolist() == [[1, 3, 0, 2, 4, 5], [0, 1, 3, 4, 5, 2]]


def test_store_resumes_after_an_interrupted_chunk(tmp_path):
    rng = np.random.default_rng(2)
    arrays = ragged(rng, 7)
    calls = []

    def encode(chunk):
        calls.append(list(chunk))
        if len(calls) == 2:
            raise KeyboardInterrupt
        return [arrays[int(t)] for t in chunk]

    out = tmp_path / "s"
    out.mkdir()
    texts = [str(i) for i in range(7)]
    with pytest.raises(KeyboardInterrupt):
        write_token_store(out, texts, 7, encode, chunk_size=3, show_progress=False)
    assert not (out / "offsets.npy").exists()
    write_token_store(out, texts, 7, lambda c: [arrays[int(t)] for t in c], chunk_size=3, show_progress=False)
    tokens, offsets = open_token_store(out)
    assert np.array_equal(np.asarray(tokens, np.float32), np.concatenate(arrays))
    assert np.diff(offsets).tolist() == [len(a) for a in arrays]


# -- the model folder and the retriever, on a tiny BERT --------------------------------------------

@pytest.fixture(scope="module")
def bench(bench_factory):
    return bench_factory(4, seed=3)


@pytest.fixture(scope="module")
def tiny_encoder(tmp_path_factory, bench):
    """A 2-layer BERT whose vocabulary is the benchmark's words (so no text is all [UNK])."""
    import torch
    from transformers import BertConfig, BertModel, BertTokenizerFast

    path = tmp_path_factory.mktemp("tiny-bert")
    words = sorted({w for q in bench.questions.values()
                    for t in [q.text] + [h.text for h in q.hints] for w in re.findall(r"[a-z0-9]+", t.lower())})
    vocab = list(dict.fromkeys(["[PAD]", "[unused0]", "[unused1]", "[UNK]", "[CLS]", "[SEP]", "[MASK]",
                                *string.punctuation, *words]))
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}, do_lower_case=True)
    assert tokenizer.tokenize("who, a") == ["who", ",", "a"]
    tokenizer.save_pretrained(path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(vocab), hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=64, max_position_embeddings=256)
    BertModel(cfg).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_colbert(tmp_path_factory, tiny_encoder):
    from inferqa.retrieve.colbert_model import init_colbert

    return init_colbert(tiny_encoder, tmp_path_factory.mktemp("tiny-colbert") / "model", dim=8, query_length=12,
                        document_length=96)


def test_model_folder_is_pylate_layout_and_round_trips(tiny_colbert, tmp_path):
    from inferqa.retrieve.colbert_model import encode_tokens, load_colbert, write_colbert

    modules = json.loads((tiny_colbert / "modules.json").read_text())
    assert [m["type"] for m in modules] == ["sentence_transformers.models.Transformer", "pylate.models.Dense.Dense"]
    config = json.loads((tiny_colbert / "config_sentence_transformers.json").read_text())
    assert (config["query_prefix"], config["document_prefix"], config["query_length"]) == ("[unused0]", "[unused1]", 12)
    assert json.loads((tiny_colbert / "1_Dense" / "config.json").read_text())["out_features"] == 8

    model = load_colbert(tiny_colbert)
    texts = ["who wrote the play, and when?", "a river in europe"]
    q, d = encode_tokens(model, texts, query=True), encode_tokens(model, texts, query=False)
    assert [a.shape for a in q] == [(12, 8), (12, 8)]  # padded with [MASK] to query_length
    tok = model.tokenizer
    # [CLS] [unused1] words [SEP]; punctuation is dropped from documents only
    assert [len(a) for a in d] == [len(tok.tokenize(t)) + 3 - sum(c in string.punctuation for c in t) for t in texts]
    np.testing.assert_allclose(np.linalg.norm(np.concatenate(q + d), axis=1), 1.0, atol=1e-5)

    again = load_colbert(write_colbert(model, tmp_path / "copy"))
    for a, b in zip(q + d, encode_tokens(again, texts, query=True) + encode_tokens(again, texts, query=False)):
        np.testing.assert_array_equal(a, b)


def test_full_mode_scores_are_maxsim_of_each_passage(bench, tiny_colbert, tmp_path):
    from inferqa.retrieve import get_retriever, question_queries
    from inferqa.retrieve.colbert_model import encode_tokens, load_colbert

    r = get_retriever("colbert", model=str(tiny_colbert), show_progress=False, query_block=3)
    r.index(bench, tmp_path / "full")
    queries = question_queries(bench)
    run = r.search(queries, 1000)

    model = load_colbert(tiny_colbert)
    passages = list(iter_corpus(bench))
    docs = [a.astype(np.float16).astype(np.float32) for a in encode_tokens(model, [p.text for p in passages], query=False)]
    for qid, qvec in zip(queries, encode_tokens(model, list(queries.values()), query=True)):
        want = sorted(((numpy_maxsim(qvec, d), -i) for i, d in enumerate(docs)), reverse=True)
        got = run[qid]
        assert len(got) == len(passages)
        assert [s for _, s in got] == pytest.approx([s for s, _ in want], abs=1e-4)
        assert got == sorted(got, key=lambda x: -x[1])
    manifest = json.loads((tmp_path / "full" / "retriever.json").read_text())
    assert manifest["texts"] == len(passages) and manifest["encoded"] == "passages"


def test_clue_mode_encodes_hints_once_and_equals_full_on_single_hint_passages(bench, tiny_colbert, tmp_path):
    from inferqa.records import parse_passage_id
    from inferqa.retrieve import get_retriever, question_queries

    queries = question_queries(bench)
    full = get_retriever("colbert", model=str(tiny_colbert), show_progress=False)
    full.index(bench, tmp_path / "full")
    clue = get_retriever("colbert", model=str(tiny_colbert), mode="clue", show_progress=False)
    clue.index(bench, tmp_path / "clue")
    manifest = json.loads((tmp_path / "clue" / "retriever.json").read_text())
    n_hints = len({t for p in iter_corpus(bench) for t in bench.hints_of(p.id)})  # hints in passages only
    assert manifest["texts"] == n_hints and manifest["hint_sets"] == 4 * 7  # 3 hints: 7 subsets per question

    clue.load()
    full.load()
    q = pad_queries(clue._encode(list(queries.values()), query=True))
    c, f = clue.passage_scores(q), full.passage_scores(q)
    orders = [parse_passage_id(p.decode())[1] for p in full._pids]
    single = [i for i, o in enumerate(orders) if len(o) == 1]
    # same text, same tokens (up to batch padding numerics and float16 storage)
    np.testing.assert_allclose(c[single], f[single], rtol=1e-5, atol=1e-4)
    # orderings of one subset share one score in clue mode
    by_subset = {}
    for i, pid in enumerate(full._pids):
        qid, order = parse_passage_id(pid.decode())
        by_subset.setdefault((qid, frozenset(order)), []).append(c[i])
    assert all(np.array_equal(v[0], w) for v in by_subset.values() for w in v)
    # ties (all orderings of a subset) come out in corpus order
    position = {p.decode(): i for i, p in enumerate(full._pids)}
    for ranked in clue.search(queries, 50).values():
        for (a, sa), (b, sb) in zip(ranked, ranked[1:]):
            assert sa > sb or (sa == sb and position[a] < position[b])


def test_bad_options_and_missing_model_are_one_line_errors(bench, tmp_path):
    from inferqa.retrieve import get_retriever

    with pytest.raises(InputError, match="mode"):
        get_retriever("colbert", mode="plaid")
    r = get_retriever("colbert", model=str(tmp_path / "nowhere"), show_progress=False)
    with pytest.raises(InputError, match="not a ColBERT model folder"):
        r.index(bench, tmp_path / "idx")


def test_finetune_colbert_trains_and_saves_a_loadable_model(bench, tiny_encoder, tmp_path):
    from safetensors.numpy import load_file

    from inferqa.experiments.finetune import INFO_FILE, LOG_FILE, FinetuneOptions, finetune_colbert
    from inferqa.retrieve.colbert_model import init_colbert

    opts = FinetuneOptions(positives=2, negatives=1, negatives_from="random", batch_size=2, lr=1e-3, max_length=64)
    out = finetune_colbert(bench, tmp_path / "ft", model=str(tiny_encoder), options=opts, dim=8)
    info = json.loads((out / INFO_FILE).read_text())
    assert info["kind"] == "colbert" and info["steps"] == len((out / LOG_FILE).read_text().splitlines()) >= 1
    assert not (out / "init").exists()
    start = init_colbert(tiny_encoder, tmp_path / "start", dim=8, document_length=64, seed=opts.seed)
    before, after = (load_file(str(p / "1_Dense" / "model.safetensors"))["linear.weight"] for p in (start, out))
    assert before.shape == after.shape == (8, 32) and not np.allclose(before, after)
    from inferqa.retrieve import get_retriever, question_queries
    r = get_retriever("colbert", model=str(out), mode="clue", show_progress=False)
    r.index(bench, tmp_path / "idx")
    assert len(r.search(question_queries(bench), 5)) == len(bench.questions)


def test_default_model_is_the_trained_folder_in_the_user_cache(bench, tiny_colbert, tmp_path, monkeypatch):
    """The default `colbert-triviahg` is a folder under $INFERQA_CACHE, wherever one runs from:
    missing, it is one line naming the folder and how to train it; there, it is used."""
    import shutil

    from inferqa.models import COLBERT, colbert_path
    from inferqa.retrieve import get_retriever, question_queries

    monkeypatch.setenv("INFERQA_CACHE", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)
    assert colbert_path() == tmp_path / "cache" / "models" / COLBERT
    r = get_retriever("colbert", show_progress=False)
    assert r.options["model"] == COLBERT
    with pytest.raises(InputError, match="not trained yet") as exc:
        r.index(bench, tmp_path / "idx")
    assert str(colbert_path()) in str(exc.value) and "finetune_triviahg.py --kind colbert" in str(exc.value)
    shutil.copytree(tiny_colbert, colbert_path())
    r.index(bench, tmp_path / "idx")
    mine = get_retriever("colbert", model=str(tiny_colbert), show_progress=False)
    mine.index(bench, tmp_path / "idx-by-path")
    queries = question_queries(bench)
    assert r.search(queries, 10) == mine.search(queries, 10)


@pytest.mark.parametrize("trainer", ["finetune_retriever", "finetune_colbert", "finetune_reranker"])
def test_every_trainer_checks_its_model_before_mining_negatives(bench, trainer, tmp_path, monkeypatch):
    """One setup for the three trainers: a missing model folder is refused before the BM25
    negatives' index is built (colbert resolved its model only after mining them)."""
    from inferqa.experiments import finetune
    from inferqa.retrieve.base import Retriever

    def no_index(self, *a, **k):
        raise AssertionError("negatives mined before the model was checked")

    monkeypatch.setattr(Retriever, "index", no_index)
    with pytest.raises(InputError, match="model folder not found"):
        getattr(finetune, trainer)(bench, tmp_path / "out", model=str(tmp_path / "no" / "model"),
                                   options=finetune.FinetuneOptions(negatives_from="bm25", batch_size=2))
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("mode", ["full", "clue"])
def test_score_passages_equal_the_search_scores(bench, tiny_colbert, tmp_path, mode):
    from inferqa.retrieve import get_retriever, question_queries

    r = get_retriever("colbert", model=str(tiny_colbert), mode=mode, show_progress=False)
    r.index(bench, tmp_path / mode)
    queries = question_queries(bench)
    for qid, ranked in r.search(queries, 1000).items():
        assert len(ranked) == 4 * 15
        pids = [p for p, _ in ranked][::-2] + [ranked[0][0]]  # any order, a passage twice
        got = r.score_passages(queries[qid], pids)
        np.testing.assert_allclose(got, [dict(ranked)[p] for p in pids], rtol=1e-5, atol=1e-5)
