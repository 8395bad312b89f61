"""Cross-encoder and T5-family plumbing on tiny models built here from configs (random
weights, offline): shapes, batching/padding, determinism, and that scores are the model's
own logits, checked against direct calls to the model. Quality is not tested here."""

from __future__ import annotations

import sys

import pytest

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
tokenizers = pytest.importorskip("tokenizers")

from inferqa.formats import Run
from inferqa.reranking import get_reranker  # noqa: E402
from inferqa.reranking.permutation import sliding_windows  # noqa: E402

from test_rerank import make_bench, make_run  # noqa: E402,F401  (make_bench: a fixture)

WORDS = ("query document relevant true false search passage ranking which thing is question about of hint "
         "alpha bravo charlie delta 0 1 2 3 4 5 6 7 8 9 [ ] > : ?").split()
QUERY = "Which thing is question 1 about?"
TEXTS = ["hint alpha of question 1", "hint bravo", "hint charlie of question 1 hint delta of question 1",
         "delta", "alpha bravo charlie"]


def _word_tokenizer(specials: list[str]):
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    vocab = {w: i for i, w in enumerate(dict.fromkeys(specials + WORDS))}
    tk = Tokenizer(models.WordLevel(vocab, unk_token="<unk>" if "<unk>" in vocab else "[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    return tk, vocab, processors


@pytest.fixture(scope="module")
def tiny_t5(tmp_path_factory):
    from transformers import PreTrainedTokenizerFast, T5Config, T5ForConditionalGeneration

    path = tmp_path_factory.mktemp("tiny-t5")
    tk, vocab, processors = _word_tokenizer(["<pad>", "</s>", "<unk>", "<extra_id_10>"])
    tk.post_processor = processors.TemplateProcessing(single="$A </s>", special_tokens=[("</s>", vocab["</s>"])])
    tok = PreTrainedTokenizerFast(tokenizer_object=tk, pad_token="<pad>", eos_token="</s>", unk_token="<unk>")
    tok.save_pretrained(path)
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=len(vocab), d_model=16, d_kv=8, d_ff=32, num_layers=2, num_decoder_layers=1,
                   num_heads=2, pad_token_id=0, eos_token_id=1, decoder_start_token_id=0,
                   tie_word_embeddings=False)
    T5ForConditionalGeneration(cfg).save_pretrained(path)
    return path


@pytest.fixture(scope="module")
def tiny_cross_encoder(tmp_path_factory):
    from transformers import AutoModelForSequenceClassification, BertConfig, BertTokenizerFast

    path = tmp_path_factory.mktemp("tiny-ce")
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    # transformers 5 ignores vocab_file= here (every token [UNK]); vocab= builds the real vocabulary.
    tokenizer = BertTokenizerFast(vocab={w: i for i, w in enumerate(dict.fromkeys(specials + WORDS))},
                                  do_lower_case=True)
    assert tokenizer.unk_token_id not in tokenizer(" ".join(WORDS[:5]).lower())["input_ids"]
    tokenizer.save_pretrained(path)
    torch.manual_seed(0)
    cfg = BertConfig(vocab_size=len(specials) + len(WORDS), hidden_size=16, num_hidden_layers=1,
                     num_attention_heads=2, intermediate_size=32, max_position_embeddings=128, num_labels=1)
    AutoModelForSequenceClassification.from_config(cfg).save_pretrained(path)
    return path


def _first_step_logits(path, inputs: list[str]) -> torch.Tensor:
    """Independent path: one input at a time (no padding), through `generate`'s raw logits."""
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    tok = AutoTokenizer.from_pretrained(path)
    model = T5ForConditionalGeneration.from_pretrained(path).eval()
    rows = []
    for text in inputs:
        out = model.generate(**tok(text, return_tensors="pt"), max_new_tokens=1, do_sample=False,
                             output_logits=True, return_dict_in_generate=True)
        rows.append(out.logits[0][0])
    return torch.stack(rows)


def test_monot5_scores_are_true_false_log_softmax(tiny_t5):
    rr = get_reranker("monot5", model=str(tiny_t5), batch_size=2)
    scores = rr.score(QUERY, TEXTS)
    vocab = rr._tok.get_vocab()
    logits = _first_step_logits(tiny_t5, [f"Query: {QUERY} Document: {t} Relevant:" for t in TEXTS])
    expected = logits[:, [vocab["false"], vocab["true"]]].log_softmax(-1)[:, 1]
    assert scores == pytest.approx(expected.tolist(), abs=1e-5)
    assert len(set(round(s, 6) for s in scores)) > 1  # depends on the passage
    assert rr.score(QUERY, TEXTS) == scores  # deterministic
    assert get_reranker("monot5", model=str(tiny_t5), batch_size=5).score(QUERY, TEXTS) == pytest.approx(scores, abs=1e-5)
    # zero the two output rows: both logits 0, so every score is log(1/2)
    with torch.no_grad():
        rr._model.lm_head.weight[[vocab["true"], vocab["false"]]] = 0.0
    assert rr.score(QUERY, TEXTS) == pytest.approx([-0.693147] * len(TEXTS), abs=1e-5)


def test_rankt5_scores_are_the_designated_token_logit(tiny_t5):
    rr = get_reranker("rankt5", model=str(tiny_t5), batch_size=3)
    scores = rr.score(QUERY, TEXTS)
    token = rr._tok.get_vocab()["<extra_id_10>"]
    logits = _first_step_logits(tiny_t5, [f"Query: {QUERY} Document: {t}" for t in TEXTS])
    assert scores == pytest.approx(logits[:, token].tolist(), abs=1e-5)
    with pytest.raises(Exception, match="not one token"):
        get_reranker("rankt5", model=str(tiny_t5), token="no such words").score(QUERY, TEXTS)


def test_lit5_fid_fusion_matches_separate_unpadded_encoding(tiny_t5):
    from transformers import AutoTokenizer, T5ForConditionalGeneration

    rr = get_reranker("lit5", model=str(tiny_t5), window=4, step=2, max_new_tokens=12)
    inputs = rr.window_inputs(QUERY, TEXTS[:3])
    assert inputs[1] == f"Search Query: {QUERY} Passage: [2] {TEXTS[1]} Relevance Ranking: "
    fused, mask = rr.fuse(QUERY, TEXTS[:3])
    tok = AutoTokenizer.from_pretrained(tiny_t5)
    model = T5ForConditionalGeneration.from_pretrained(tiny_t5).eval()
    lengths = [len(tok(x).input_ids) for x in inputs]
    assert fused.last_hidden_state.shape == (1, 3 * max(lengths), 16) and mask.shape == (1, 3 * max(lengths))
    assert int(mask.sum()) == sum(lengths)
    start = torch.tensor([[model.config.decoder_start_token_id]])
    with torch.no_grad():
        # reference: each passage encoded alone without padding, states concatenated
        states = torch.cat([model.encoder(**tok(x, return_tensors="pt")).last_hidden_state for x in inputs], dim=1)
        ref = model(encoder_outputs=(states,), decoder_input_ids=start).logits
        got = model(encoder_outputs=fused, attention_mask=mask, decoder_input_ids=start).logits
    assert torch.allclose(got, ref, atol=1e-5)
    # with one passage, FiD is plain T5: the same greedy answer as `generate` on that input
    single = rr.generate_ranking(QUERY, TEXTS[:1])
    plain = model.generate(**tok(rr.window_inputs(QUERY, TEXTS[:1]), return_tensors="pt"), max_new_tokens=12,
                           do_sample=False)
    assert single == tok.decode(plain[0], skip_special_tokens=True)


def test_lit5_slides_windows_and_keeps_passages(tiny_t5, make_bench):
    bench = make_bench(n_hints=3)
    run = make_run(bench, per_question=9)
    rr = get_reranker("lit5", model=str(tiny_t5), window=4, step=2, max_new_tokens=10)
    seen = []
    real = rr.generate_ranking
    rr.generate_ranking = lambda q, texts: seen.append(len(texts)) or real(q, texts)
    out = rr.rerank(run, bench, depth=8, qids=["q_0", "q_1"])
    assert len(seen) == 2 * len(sliding_windows(8, 4, 2)) and set(seen) == {4}
    for qid in out:
        assert sorted(p for p, _ in out[qid]) == sorted(p for p, _ in run[qid])
        assert [p for p, _ in out[qid][8:]] == [p for p, _ in run[qid][8:]]
    assert rr.rerank(run, bench, depth=8, qids=["q_0", "q_1"]) == out  # deterministic


def test_cross_encoder_scores_are_model_logits(tiny_cross_encoder):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    rr = get_reranker("cross-encoder", model=str(tiny_cross_encoder), batch_size=2)
    scores = rr.score(QUERY, TEXTS)
    tok = AutoTokenizer.from_pretrained(tiny_cross_encoder)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_cross_encoder).eval()
    with torch.no_grad():
        ref = [model(**tok(QUERY, t, return_tensors="pt")).logits[0, 0].item() for t in TEXTS]
    assert scores == pytest.approx(ref, abs=1e-5)
    assert len(set(round(s, 6) for s in scores)) > 1
    assert get_reranker("cross-encoder", model=str(tiny_cross_encoder), batch_size=5).score(QUERY, TEXTS) \
        == pytest.approx(scores, abs=1e-5)


def test_cross_encoder_two_label_head_uses_log_odds(tmp_path, tiny_cross_encoder):
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    two = tmp_path / "two"
    torch.manual_seed(1)
    model = AutoModelForSequenceClassification.from_pretrained(tiny_cross_encoder, num_labels=2,
                                                               ignore_mismatched_sizes=True).eval()
    model.save_pretrained(two)
    AutoTokenizer.from_pretrained(tiny_cross_encoder).save_pretrained(two)
    scores = get_reranker("cross-encoder", model=str(two)).score(QUERY, TEXTS[:3])
    tok = AutoTokenizer.from_pretrained(two)
    with torch.no_grad():
        logits = [model(**tok(QUERY, t, return_tensors="pt")).logits[0] for t in TEXTS[:3]]
    assert scores == pytest.approx([float(x[1] - x[0]) for x in logits], abs=1e-5)


def test_every_reranker_keeps_the_passage_set(tiny_t5, tiny_cross_encoder, make_bench):
    from test_rerank import ScriptedLLM

    bench = make_bench(n_hints=3)
    run = make_run(bench, per_question=12)
    models = {"cross-encoder": str(tiny_cross_encoder), "monot5": str(tiny_t5), "rankt5": str(tiny_t5),
              "lit5": str(tiny_t5), "llm-pointwise": ScriptedLLM("alpha"), "upr": ScriptedLLM("alpha"),
              "llm-listwise": ScriptedLLM("alpha", messy=True)}
    extra = {"lit5": {"window": 5, "step": 3, "max_new_tokens": 8}, "llm-listwise": {"window": 5, "step": 3}}
    for name, model in models.items():
        key = "model" if isinstance(model, str) else "llm"  # LLM rerankers take `llm`, the others `model`
        out = get_reranker(name, **{key: model}, **extra.get(name, {})).rerank(run, bench, depth=7)
        for qid in run:
            assert sorted(p for p, _ in out[qid]) == sorted(p for p, _ in run[qid]), name
            assert [p for p, _ in out[qid][7:]] == [p for p, _ in run[qid][7:]], name
            scores = [s for _, s in out[qid]]
            assert scores == sorted(scores, reverse=True), name


def test_cli_rerank_writes_run_and_reports_errors(tiny_cross_encoder, make_bench, tmp_path, monkeypatch, capsys):
    from typer.testing import CliRunner

    from inferqa.cli import app, main

    bench = make_bench()
    run = make_run(bench, per_question=9)
    run.to_file(tmp_path / "in.trec")
    res = CliRunner().invoke(app, ["rerank", str(tmp_path / "in.trec"), "--bench", str(bench.path),
                                   "--reranker", "cross-encoder", "--model", str(tiny_cross_encoder),
                                   "--depth", "6", "--out", str(tmp_path / "out.trec"), "--batch-size", "4"])
    assert res.exit_code == 0, res.output
    out = Run.from_file(tmp_path / "out.trec")
    rr = get_reranker("cross-encoder", model=str(tiny_cross_encoder))
    for qid in run:
        assert sorted(p for p, _ in out[qid]) == sorted(p for p, _ in run[qid])
        head = [p for p, _ in run[qid][:6]]
        scores = rr.score(bench.questions[qid].text, [bench.passage_text(p) for p in head])
        assert [p for p, _ in out[qid][:6]] == [head[i] for i in sorted(range(6), key=lambda i: -scores[i])]
    assert not list(tmp_path.glob(".out.trec*"))  # checkpoint removed, nothing half-written

    capsys.readouterr()
    monkeypatch.setattr(sys, "argv", ["inferqa", "rerank", str(tmp_path / "in.trec"), "--bench",
                                      str(bench.path), "--reranker", "bogus", "--out", str(tmp_path / "x")])
    with pytest.raises(SystemExit) as exc:
        main()
    err = capsys.readouterr().err
    assert exc.value.code == 2 and err.count("\n") == 1 and "unknown reranker 'bogus'" in err
