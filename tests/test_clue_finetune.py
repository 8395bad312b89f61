"""`inferqa finetune clue`: question ↔ own-hint examples, a training that learns, a folder the
`clue` retriever loads by path, and the refusals (too few questions, a folder of another kind)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from inferqa.errors import InputError
from inferqa.experiments.finetune import (INFO_FILE, LOG_FILE, FinetuneOptions, build_clue_examples, build_examples,
                                          build_hint_set_examples, finetune_clue, finetune_clue_sets, hint_set_scores,
                                          question_hints)
from inferqa.formats.benchmark import Benchmark
from inferqa.records import Hint, Question

from conftest import one_line_error, run_cli

pytest.importorskip("sentence_transformers")

# Hand-made: each question's hints describe its answer without naming the question's words,
# and the questions share vocabulary (a city, a year, "famous"), so the untrained encoder
# confuses some hints across questions.
HAND_MADE = {
    "Which metal is liquid at room temperature?": [
        "Thermometers used to be filled with it.", "Its symbol comes from the Latin hydrargyrum.",
        "The planet closest to the sun shares its name.", "It is poisonous and builds up in tuna."],
    "Which animal is the largest on Earth?": [
        "It eats tiny krill by filtering sea water.", "Its heart is as big as a small car.",
        "It sings low songs heard across oceans.", "Its calves drink hundreds of litres of milk a day."],
    "Which city hosts the famous Carnival with samba schools?": [
        "A statue of Christ with open arms overlooks it.", "Copacabana beach lies along its coast.",
        "It was the capital of its country until 1960.", "Sugarloaf Mountain rises from its bay."],
    "Which instrument has 88 keys?": [
        "Its strings are struck by felt hammers.", "Chopin wrote most of his works for it.",
        "It comes in grand and upright forms.", "Its pedals sustain or soften the sound."],
    "Which famous ship sank in 1912 after hitting an iceberg?": [
        "It left Southampton on its maiden voyage.", "Its wreck lies about 3,800 metres deep in the Atlantic.",
        "Too few lifeboats were carried for everyone on board.", "A 1997 film about it won eleven Oscars."],
    "Which gas do plants take in to make sugar?": [
        "Humans breathe it out.", "Fizzy drinks get their bubbles from it.",
        "Its rising level in the air warms the climate.", "Frozen, it is sold as dry ice."],
}


def hand_made_questions() -> list[Question]:
    return [Question(f"h{i}", q, [f"answer {i}"], [Hint(h) for h in hints])
            for i, (q, hints) in enumerate(HAND_MADE.items())]


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Benchmark:
    from inferqa.construct import build_benchmark

    out = tmp_path_factory.mktemp("clue-ft") / "bench"
    build_benchmark(hand_made_questions(), out, top_k=3, split=(1.0, 0.0, 0.0), seed=5)
    return Benchmark(out)


def own_hint_margins(model_ref: str, bench: Benchmark) -> np.ndarray:
    """Per question: the mean cosine with its own hints minus the best cosine with another
    question's hint (> 0: every own hint would rank above every other hint, on average)."""
    from sentence_transformers import SentenceTransformer

    st = SentenceTransformer(model_ref, device="cpu")
    qids = sorted(bench.questions)
    hints = [(q, h) for q in qids for h in question_hints(bench, q)]
    qv = st.encode([bench.questions[q].text for q in qids], normalize_embeddings=True)
    hv = st.encode([h for _, h in hints], normalize_embeddings=True)
    cos = qv @ hv.T
    owner = np.array([q for q, _ in hints])
    return np.array([cos[i, owner == q].mean() - cos[i, owner != q].max() for i, q in enumerate(qids)])


def test_examples_pair_own_hints_with_other_questions_hints(bench):
    examples = build_clue_examples(bench, FinetuneOptions(positives=2, negatives=3, negatives_from="bm25"))
    qids = bench.split_qids("train")
    assert [e.qid for e in examples] == [q for q in qids for _ in range(2)]
    for e in examples:
        own = question_hints(bench, e.qid)
        assert e.query == bench.questions[e.qid].text and e.positive in own[:2]
        assert e.negative is not None and e.negative not in own
        assert any(e.negative in question_hints(bench, q) for q in qids if q != e.qid)


def test_fewer_than_two_questions_is_refused(bench, tmp_path, monkeypatch, capsys):
    with pytest.raises(InputError, match="at least 2"):
        build_clue_examples(bench, FinetuneOptions(max_questions=1, negatives=0))
    out = tmp_path / "m"
    code, _, err = run_cli(monkeypatch, capsys, "finetune", "clue", "--bench", bench.path, "--out", out,
                           "--max-questions", "1", "--negatives", "0")
    one_line_error(code, err, "1 question(s)", "at least 2")
    assert not out.exists()


@pytest.fixture(scope="module")
def trained(bench, minilm, tmp_path_factory):
    # 6 questions × 3 hints = 18 examples → batches of 6 distinct questions, 3 per epoch, 4 epochs
    opts = FinetuneOptions(positives=3, negatives=2, negatives_from="random", batch_size=6, epochs=4, lr=1e-4,
                           warmup_ratio=0.0, seed=2)
    return finetune_clue(bench, tmp_path_factory.mktemp("clue-model") / "clue", model=minilm, options=opts)


def test_training_lowers_the_loss_and_separates_own_hints(bench, minilm, trained):
    log = [json.loads(line) for line in (trained / LOG_FILE).read_text().splitlines()]
    assert [r["step"] for r in log] == list(range(1, 13))
    first, last = np.mean([r["loss"] for r in log[:3]]), np.mean([r["loss"] for r in log[-3:]])
    assert last < 0.7 * first, (first, last)
    before, after = own_hint_margins(minilm, bench), own_hint_margins(str(trained), bench)
    assert after.mean() > before.mean() + 0.05, (before, after)
    assert (after > 0).all(), after  # every question's own hints above all others', on average


def test_training_record_says_what_it_saw(bench, minilm, trained):
    info = json.loads((trained / INFO_FILE).read_text())
    qids = sorted(bench.split_qids("train"))
    assert info["kind"] == "clue" and info["base_model"] == minilm
    assert info["questions"] == len(qids) == 6 and info["examples"] == 18
    assert info["questions_sha256"] == hashlib.sha256("\n".join(qids).encode()).hexdigest()
    assert info["benchmark"] == str(bench.path) and info["options"]["negatives_from"] == "random"


def test_the_clue_retriever_loads_the_folder_by_path(bench, trained):
    from inferqa.retrieve import get_retriever, question_queries

    r = get_retriever("clue", model=str(trained), show_progress=False)
    r.index(bench)
    run = r.search(question_queries(bench, sorted(bench.questions)), 5)
    # the trained encoder finds each training question's own passages first
    assert all(pid.startswith(f"{qid}_") for qid, ranked in run.items() for pid, _ in ranked[:1])


def _folder(tmp_path, name: str, info: dict | None, files=("config.json",)):
    folder = tmp_path / name
    folder.mkdir()
    for f in files:
        (folder / f).write_text("{}")
    if info is not None:
        (folder / INFO_FILE).write_text(json.dumps(info))
    return folder


@pytest.mark.parametrize("kind", ["reranker", "retriever", "colbert"])
def test_a_folder_of_another_kind_is_refused(tmp_path, kind):
    from inferqa.retrieve import get_retriever

    folder = _folder(tmp_path, kind, {"kind": kind}, files=("config.json", "modules.json"))
    with pytest.raises(InputError, match=f"holds a '{kind}' model, not a 'clue' one"):
        get_retriever("clue", model=str(folder))


def test_a_folder_that_is_no_bi_encoder_or_missing_is_refused(bench, tmp_path, monkeypatch, capsys):
    from inferqa.retrieve import get_retriever

    bare = _folder(tmp_path, "bare", None)  # a transformer without sentence-transformers modules
    with pytest.raises(InputError, match="no pooling module"):
        get_retriever("clue", model=str(bare))
    with pytest.raises(InputError, match="not found"):
        get_retriever("clue", model=str(tmp_path / "absent"))
    reranker = _folder(tmp_path, "reranker", {"kind": "reranker"})
    before = sorted(p.name for p in (bench.path / "indexes").iterdir()) if (bench.path / "indexes").exists() else []
    code, _, err = run_cli(monkeypatch, capsys, "index", bench.path, "--retriever", "clue", "--model", reranker)
    one_line_error(code, err, "'reranker' model", "reranker")
    after = sorted(p.name for p in (bench.path / "indexes").iterdir()) if (bench.path / "indexes").exists() else []
    assert after == before  # nothing written


def test_an_untrained_cross_encoder_folder_is_refused(minilm, tmp_path):
    """No training.json: what gives it away is sentence-transformers' own record of the model type."""
    from sentence_transformers import CrossEncoder

    from inferqa.retrieve import get_retriever

    CrossEncoder(minilm, num_labels=1, device="cpu").save(str(tmp_path / "ce"))
    with pytest.raises(InputError, match="found a cross-encoder"):
        get_retriever("clue", model=str(tmp_path / "ce"))
    get_retriever("clue", model=minilm)  # the bi-encoder it came from is taken


# -- clue-sets: the retriever fine-tuner's examples, each passage a bag of separately encoded hints ----------
SET_OPTIONS = dict(positives=3, negatives=2, negatives_from="random", batch_size=6, epochs=4, lr=1e-4,
                   warmup_ratio=0.0, seed=2)


def test_hint_set_examples_are_the_retriever_fine_tuners_passages(bench):
    opts = FinetuneOptions(**SET_OPTIONS)
    sets, passages = build_hint_set_examples(bench, opts), build_examples(bench, opts)
    assert [(e.qid, e.query) for e in sets] == [(e.qid, e.query) for e in passages] and len(sets) == 18
    for s, p in zip(sets, passages):
        assert " ".join(s.positive) == p.positive and " ".join(s.negative) == p.negative
        assert set(s.positive) <= set(question_hints(bench, s.qid))
        assert not set(s.negative) & set(question_hints(bench, s.qid))


def test_hint_set_scores_are_the_clue_retrievers_mean_embedding_scores(bench, minilm, tmp_path):
    import torch

    from inferqa.models import load_sentence_transformer
    from inferqa.retrieve import get_retriever

    r = get_retriever("clue", model=minilm, show_progress=False)
    r.index(bench)
    pids = sorted(bench.qrels["h0"])[:4] + sorted(bench.qrels["h3"])[-3:]
    query = bench.questions["h0"].text
    st = load_sentence_transformer(minilm, "cpu")
    with torch.no_grad():
        ours = hint_set_scores(st, [query], [bench.hints_of(p) for p in pids]).numpy()[0]
    np.testing.assert_allclose(ours, r.score_passages(query, pids), atol=1e-5)


@pytest.fixture(scope="module")
def trained_on_sets(bench, minilm, tmp_path_factory):
    return finetune_clue_sets(bench, tmp_path_factory.mktemp("clue-sets") / "m", model=minilm,
                              options=FinetuneOptions(**SET_OPTIONS))


def test_set_training_takes_the_retriever_fine_tuners_steps_and_learns(bench, minilm, trained_on_sets):
    from inferqa.experiments.finetune import _in_batch_steps

    opts = FinetuneOptions(**SET_OPTIONS)
    info = json.loads((trained_on_sets / INFO_FILE).read_text())
    assert info["kind"] == "clue" and info["objective"] == "hint sets" and info["examples"] == 18
    assert info["steps"] == _in_batch_steps(build_examples(bench, opts), opts) == 12
    log = [json.loads(line)["loss"] for line in (trained_on_sets / LOG_FILE).read_text().splitlines()]
    assert np.mean(log[-3:]) < 0.7 * np.mean(log[:3]), log
    before, after = own_hint_margins(minilm, bench), own_hint_margins(str(trained_on_sets), bench)
    assert after.mean() > before.mean(), (before, after)


def test_the_clue_retriever_loads_a_set_trained_folder(bench, trained_on_sets):
    from inferqa.retrieve import get_retriever, question_queries

    r = get_retriever("clue", model=str(trained_on_sets), show_progress=False)
    r.index(bench)
    run = r.search(question_queries(bench, sorted(bench.questions)), 5)
    assert all(ranked[0][0].startswith(f"{qid}_") for qid, ranked in run.items())


def test_set_training_with_one_question_is_refused_and_writes_nothing(bench, tmp_path, monkeypatch, capsys):
    out = tmp_path / "m"
    code, _, err = run_cli(monkeypatch, capsys, "finetune", "clue-sets", "--bench", bench.path, "--out", out,
                           "--max-questions", "1", "--negatives", "0")
    one_line_error(code, err, "1 question(s)", "at least 2")
    assert not out.exists()
