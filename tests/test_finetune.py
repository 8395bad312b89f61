"""Fine-tuning on a handful of demo questions: batches, examples, saved models that load and differ."""

from __future__ import annotations

import json
import random

import pytest

from inferqa.formats.benchmark import Benchmark
from inferqa.errors import InputError
from inferqa.experiments.finetune import (INFO_FILE, LOG_FILE, Example, FinetuneOptions, build_examples,
                                          distinct_question_batches, finetune_reranker, finetune_retriever)
from inferqa.records import parse_passage_id

pytest.importorskip("sentence_transformers")


@pytest.fixture(scope="module")
def bench(bench_factory) -> Benchmark:
    # top 3 hints: 15 passages per question keeps the dense index of the trained model cheap
    return bench_factory(8, split=(0.5, 0.25, 0.25), seed=3)


def test_batches_never_repeat_a_question():
    examples = [Example(f"q{i % 5}", "q", f"p{i}") for i in range(23)]  # 5 questions, 4-5 examples each
    batches = distinct_question_batches(examples, 4, random.Random(0))
    assert sorted(e.positive for b in batches for e in b) == sorted(e.positive for e in examples)
    for b in batches:
        assert len({e.qid for e in b}) == len(b)
        assert len(b) >= 2  # no lone example without in-batch negatives


def test_examples_pair_positives_with_other_questions_negatives(bench):
    opts = FinetuneOptions(positives=3, negatives=2, negatives_from="bm25")
    examples = build_examples(bench, opts)
    train = bench.split_qids("train")
    assert [e.qid for e in examples] == [q for q in train for _ in range(3)]
    for e in examples:
        assert e.query == bench.questions[e.qid].text
        assert e.negative is not None and e.negative != e.positive
    # the negative texts come from other questions: none equals a passage text of its own question
    own = {e.qid: {bench.passage_text(p) for p in bench.qrels[e.qid]} for e in examples}
    assert all(e.positive in own[e.qid] and e.negative not in own[e.qid] for e in examples)


def test_no_positive_is_an_input_error(bench):
    with pytest.raises(InputError, match="label >= 3"):
        build_examples(bench, FinetuneOptions(min_label=3, negatives=0))


def _cos(a, b):
    import numpy as np
    return float((a * b).sum() / (np.linalg.norm(a) * np.linalg.norm(b)))


def test_finetuned_retriever_loads_and_differs(bench, minilm, tmp_path):
    from sentence_transformers import SentenceTransformer

    # 4 train questions x 2 positives = 8 examples = 2 batches of 4 per epoch; 2 epochs cut at 3 steps
    opts = FinetuneOptions(positives=2, negatives=1, negatives_from="random", batch_size=4, epochs=2,
                           max_steps=3, lr=5e-4, seed=1)
    out = finetune_retriever(bench, tmp_path / "ft-bi", model=minilm, options=opts)
    log = [json.loads(line) for line in (out / LOG_FILE).read_text().splitlines()]
    assert [r["step"] for r in log] == [1, 2, 3] and all(r["loss"] > 0 for r in log)
    info = json.loads((out / INFO_FILE).read_text())
    assert info["steps"] == 3 and info["examples"] == 2 * len(bench.split_qids("train"))
    texts = ["Which planet is known as the red planet?", "It has two small moons."]
    base, tuned = SentenceTransformer(minilm, device="cpu"), SentenceTransformer(str(out), device="cpu")
    eb, et = base.encode(texts), tuned.encode(texts)
    assert eb.shape == et.shape
    assert _cos(eb[0], et[0]) < 0.9999  # the weights moved
    # the saved model is what the dense retriever takes as --model PATH
    from inferqa.retrieve import get_retriever
    r = get_retriever("dense", model=str(out), show_progress=False)
    r.index(bench, tmp_path / "idx")
    run = r.search({q: bench.questions[q].text for q in bench.split_qids("test")}, 5)
    assert all(len(v) == 5 for v in run.values())
    parse_passage_id(next(iter(run.values()))[0][0])
    with pytest.raises(InputError, match="holds a 'retriever' model, not a 'clue' one"):
        get_retriever("clue", model=str(out))  # a dense retriever's folder is no clue encoder


def test_finetuned_reranker_loads_and_scores(bench, minilm, tmp_path):
    from sentence_transformers import CrossEncoder

    opts = FinetuneOptions(positives=2, negatives=2, negatives_from="random", batch_size=4, max_steps=2,
                           lr=5e-4, seed=1)
    out = finetune_reranker(bench, tmp_path / "ft-ce", model=minilm, options=opts)
    assert (out / LOG_FILE).exists() and len((out / LOG_FILE).read_text().splitlines()) == 2
    assert json.loads((out / INFO_FILE).read_text())["with_negative"] == 2 * len(bench.split_qids("train"))
    ce = CrossEncoder(str(out), device="cpu")
    q = bench.questions[bench.split_qids("train")[0]]
    pairs = [(q.text, q.hints[0].text), (q.text, "An unrelated sentence about cooking pasta.")]
    scores = ce.predict(pairs)
    assert len(scores) == 2 and scores[0] != scores[1]
    # it plugs into the cross-encoder reranker by path and ranks the pair the same way
    from inferqa.reranking import get_reranker
    rr = get_reranker("cross-encoder", model=str(out)).score(q.text, [t for _, t in pairs])
    assert (rr[0] > rr[1]) == (scores[0] > scores[1]) and rr[0] != rr[1]
    from inferqa.retrieve import get_retriever
    with pytest.raises(InputError, match="holds a 'reranker' model, not a 'clue' one"):
        get_retriever("clue", model=str(out))  # a real cross-encoder folder, refused before any work


def test_a_reranker_starts_from_a_finetuned_retrievers_weights(bench, minilm, tmp_path):
    """`finetune reranker --model RETRIEVER_FOLDER`: the cross-encoder's encoder is the retriever's
    (a new head on top), not MiniLM's; one step at a negligible rate leaves it so."""
    import torch
    from sentence_transformers import CrossEncoder, SentenceTransformer

    retriever = finetune_retriever(bench, tmp_path / "ft-dense", model=minilm, options=FinetuneOptions(
        positives=1, negatives=1, negatives_from="random", batch_size=4, max_steps=2, lr=5e-4, seed=1))
    out = finetune_reranker(bench, tmp_path / "ft-ce", model=str(retriever), options=FinetuneOptions(
        positives=1, negatives=2, negatives_from="random", batch_size=3, max_steps=1, lr=1e-12, seed=1))
    assert json.loads((out / INFO_FILE).read_text())["base_model"] == str(retriever)

    def weight(state: dict, suffix: str) -> torch.Tensor:
        return next(v for k, v in state.items() if k.endswith(suffix))

    name = "encoder.layer.0.attention.self.query.weight"
    ce = weight(CrossEncoder(str(out), device="cpu").model.state_dict(), name)
    dense = weight(SentenceTransformer(str(retriever), device="cpu")[0].auto_model.state_dict(), name)
    base = weight(SentenceTransformer(minilm, device="cpu")[0].auto_model.state_dict(), name)
    assert not torch.allclose(dense, base, atol=1e-6)  # the retriever's training moved it
    assert torch.allclose(ce, dense, atol=1e-6)


@pytest.mark.parametrize("trainer", [finetune_retriever, finetune_reranker])
def test_a_trainer_that_fails_mid_training_leaves_nothing(bench, minilm, tmp_path, monkeypatch, trainer):
    """The trainers' one tail: training runs inside the folder that becomes --out only once complete."""
    from inferqa.experiments import finetune

    def stopped(*args, **kwargs):
        raise RuntimeError("stopped mid-training")

    monkeypatch.setattr(finetune, "_train", stopped)
    opts = FinetuneOptions(positives=1, negatives=1, negatives_from="random", batch_size=2, max_steps=1)
    with pytest.raises(RuntimeError, match="stopped mid-training"):
        trainer(bench, tmp_path / "out", model=minilm, options=opts)
    assert list(tmp_path.iterdir()) == []


def test_finetune_cli_trains_the_asked_kind_and_rejects_others(bench, minilm, tmp_path, capsys):
    from inferqa.cli import main

    argv = ["inferqa", "finetune", "reranker", "--bench", str(bench.path), "--out", str(tmp_path / "ce"),
            "--model", str(minilm), "--positives", "1", "--negatives", "1", "--negatives-from", "random",
            "--batch-size", "4", "--max-steps", "1"]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.argv", argv)
        with pytest.raises(SystemExit) as done:
            main()
    assert done.value.code in (0, None)
    assert json.loads((tmp_path / "ce" / INFO_FILE).read_text())["with_negative"] == len(bench.split_qids("train"))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr("sys.argv", ["inferqa", "finetune", "tokenizer", "--bench", str(bench.path), "--out", str(tmp_path / "x")])
        with pytest.raises(SystemExit) as bad:
            main()
    assert bad.value.code == 2 and "clue, clue-sets, colbert, reranker, retriever, upr" in capsys.readouterr().err
    assert not (tmp_path / "x").exists()
    for kind, meant in (("dense", "retriever"), ("clues", "clue"), ("colbrt", "colbert")):
        with pytest.MonkeyPatch.context() as mp:  # the retriever's name, or a typo: the fine-tuner meant
            mp.setattr("sys.argv", ["inferqa", "finetune", kind, "--bench", str(bench.path), "--out", str(tmp_path / "x")])
            with pytest.raises(SystemExit) as bad:
                main()
        err = capsys.readouterr().err
        assert bad.value.code == 2 and f"unknown fine-tuner '{kind}' (did you mean '{meant}'?)" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "x").exists()


def _files(folder):
    return {str(p.relative_to(folder)): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_finetune_over_an_existing_folder_needs_overwrite_and_keeps_foreign_files(bench, minilm, tmp_path, capsys):
    from inferqa.cli import main

    out = tmp_path / "ce"
    argv = ["inferqa", "finetune", "reranker", "--bench", str(bench.path), "--out", str(out), "--model", str(minilm),
            "--positives", "1", "--negatives", "1", "--negatives-from", "random", "--batch-size", "4",
            "--max-steps", "1"]

    def finetune(*extra):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("sys.argv", argv + list(extra))
            with pytest.raises(SystemExit) as done:
                main()
        return done.value.code or 0

    assert finetune() == 0
    (out / "my_notes.txt").write_text("mine")
    before = _files(out)
    capsys.readouterr()
    assert finetune("--seed", "5") == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "already exists; give --overwrite" in err and str(out) in err
    assert _files(out) == before  # refused before any work: nothing changed
    assert finetune("--seed", "5", "--overwrite") == 0
    after = _files(out)
    assert after["my_notes.txt"] == b"mine"  # not written by finetune: kept
    assert json.loads(after[INFO_FILE])["options"]["seed"] == 5 and json.loads(before[INFO_FILE])["options"]["seed"] == 13
    assert set(after) == set(before)  # the same files, the new training's
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temp left beside it


def test_the_python_trainers_refuse_an_existing_folder_before_any_work(bench, minilm, tmp_path, monkeypatch):
    def reached(*args, **kwargs):
        raise AssertionError("the model was looked at before the output was checked")

    monkeypatch.setattr("inferqa.models.check_model_kind", reached)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "keep.txt").write_text("x")
    for trainer in (finetune_retriever, finetune_reranker):
        with pytest.raises(InputError, match="already exists; give --overwrite"):
            trainer(bench, tmp_path / "out", model=minilm, options=FinetuneOptions(max_steps=1))
    assert _files(tmp_path / "out") == {"keep.txt": b"x"}


def test_representatives_are_the_first_passage_of_each_other_question_in_order():
    from inferqa.experiments.finetune import representatives

    ranked = [("a_1_0", 9), ("a_10_1", 8), ("b_11_01", 7), ("b_1_0", 6), ("c_1_0", 5), ("d_1_0", 4)]
    assert representatives(ranked, "a", 2) == ["b_11_01", "c_1_0"]
    assert representatives(ranked, "b", 5) == ["a_1_0", "c_1_0", "d_1_0"]
    assert representatives([p for p, _ in ranked], "c", 1) == ["a_1_0"]


def test_reranker_examples_pair_own_passages_in_the_rankings_order_with_other_questions_representatives(
        bench_factory, tmp_path):
    """The window the reranker will see: own passages the first stage puts forward, against one
    passage per other question, in the first stage's order (a TREC run file as the source)."""
    from inferqa.experiments.finetune import build_rerank_examples, hint_count

    bench = bench_factory(4, split=(1.0, 0.0, 0.0))
    qids = list(bench.questions)
    q = qids[0]
    own = sorted(bench.qrels[q])
    others = {o: sorted(bench.qrels[o]) for o in qids[1:]}
    # q's ranking: another question's two passages, q's last passage, a third question, q's first
    ranked = [others[qids[1]][0], others[qids[1]][1], own[-1], others[qids[2]][3], own[0], others[qids[3]][0]]
    lines = [f"{q} Q0 {p} {i + 1} {10 - i} t" for i, p in enumerate(ranked)]
    for o in qids[1:]:  # every other question ranks its own first passage, then q's
        lines += [f"{o} Q0 {others[o][0]} 1 2 t", f"{o} Q0 {own[0]} 2 1 t"]
    (tmp_path / "first.trec").write_text("\n".join(lines) + "\n")
    opts = FinetuneOptions(positives=2, negatives=2, negatives_from=str(tmp_path / "first.trec"), min_label=1)
    got = [e for e in build_rerank_examples(bench, opts) if e.qid == q]
    assert [e.positive for e in got] == [own[-1], own[0]]  # in the ranking's order, not the label's
    for e in got:  # one passage of each of the first two other questions, as many hints as the positive
        assert [n.split("_")[0] for n in e.negatives] == [qids[1].split("_")[0], qids[2].split("_")[0]]
        assert [n.rsplit("_", 2)[0] for n in e.negatives] == [qids[1], qids[2]]
        assert all(hint_count(n) == hint_count(e.positive) for n in e.negatives)
    with pytest.raises(InputError, match="a reranker needs --negatives > 0"):
        build_rerank_examples(bench, FinetuneOptions(negatives=0))
