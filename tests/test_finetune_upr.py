"""`finetune upr`: a causal LM trained for the upr reranker, on a tiny random-weight Llama whose
word-level vocabulary covers the benchmark's words."""

from __future__ import annotations

import json
import math
import re

import pytest

from inferqa.errors import InputError
from inferqa.experiments.finetune import INFO_FILE, FinetuneOptions, build_rerank_examples
from inferqa.formats.benchmark import Benchmark
from inferqa.reranking.llm import UPR_PROMPT

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")


def _words(text: str) -> list[str]:
    return re.findall(r"\w+|[^\w\s]+", text)  # as the Whitespace pre-tokenizer splits


@pytest.fixture(scope="module")
def bench(bench_factory) -> Benchmark:
    return bench_factory(8, split=(0.5, 0.25, 0.25), seed=3)


@pytest.fixture(scope="module")
def tiny_lm(bench, tmp_path_factory, tiny_llama):
    texts = [q.text for q in bench.questions.values()] + [bench.passage_text(p) for d in bench.qrels.values() for p in d]
    words = sorted({w for t in texts + [UPR_PROMPT] for w in _words(t)})
    return tiny_llama(tmp_path_factory.mktemp("tiny-lm"), words, hidden=32, positions=512)


def _likelihood(folder, max_length=512):
    from inferqa.experiments.finetune_upr import QueryLikelihood

    lm = transformers.AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    return QueryLikelihood(lm, transformers.AutoTokenizer.from_pretrained(str(folder)), max_length)


def _by_hand(folder, prompt: str, continuation: str) -> float:
    """log P(continuation | prompt) from one unpadded forward, token by token."""
    tok = transformers.AutoTokenizer.from_pretrained(str(folder))
    lm = transformers.AutoModelForCausalLM.from_pretrained(str(folder)).eval()
    p, c = tok(prompt)["input_ids"], tok(continuation, add_special_tokens=False)["input_ids"]
    with torch.no_grad():
        logits = lm(torch.tensor([p + c])).logits[0]
    return sum(float(torch.log_softmax(logits[len(p) - 1 + i], -1)[t]) for i, t in enumerate(c))


def test_the_trainers_score_is_the_upr_rerankers_score_batched(bench, tiny_lm):
    """Padded and batched, the trainer's log P(question | passage) and the upr reranker's (through the
    transformers backend) are each the by-hand sum over one unpadded forward."""
    from inferqa.reranking import get_reranker

    upr = get_reranker("upr", llm=f"transformers:{tiny_lm}?mode=completion&batch_size=3", llm_options={"cache": None})
    qid = bench.split_qids("train")[0]
    query = bench.questions[qid].text
    passages = [bench.passage_text(p) for p in sorted(bench.qrels[qid])[:3]]
    passages.append(bench.passage_text(sorted(bench.qrels[bench.split_qids("train")[1]])[0]))
    expected = [_by_hand(tiny_lm, UPR_PROMPT.format(passage=p), " " + query) for p in passages]
    assert len(set(map(len, passages))) > 1  # different lengths: padding matters
    with torch.no_grad():
        got = _likelihood(tiny_lm)([(query, p) for p in passages]).tolist()
    assert got == pytest.approx(expected, abs=1e-4)
    assert upr.score(query, passages) == pytest.approx(expected, abs=1e-4)
    # a passage cut to 2 tokens is scored as the passage of its first 2 words
    with torch.no_grad():
        cut = _likelihood(tiny_lm, max_length=2)([(query, passages[0])]).item()
    first_two = " ".join(_words(passages[0])[:2])
    assert cut == pytest.approx(_by_hand(tiny_lm, UPR_PROMPT.format(passage=first_two), " " + query), abs=1e-4)


def _group_loss(folder, examples, bench) -> float:
    likelihood, total = _likelihood(folder), 0.0
    with torch.no_grad():
        for e in examples:
            s = likelihood([(e.query, bench.passage_text(p)) for p in (e.positive, *e.negatives)])
            total += float(torch.logsumexp(s, 0) - s[0])  # the cross-entropy with the own passage first
    return total / len(examples)


def test_training_lowers_the_loss_of_its_groups_and_the_folder_is_a_upr_model(bench, tiny_lm, tmp_path):
    from inferqa.experiments.finetune_upr import finetune_upr
    from inferqa.reranking import get_reranker

    opts = FinetuneOptions(positives=1, negatives=1, negatives_from="random", batch_size=4, epochs=20, lr=3e-3,
                           max_length=512, seed=5)
    examples = build_rerank_examples(bench, opts)
    before = _group_loss(tiny_lm, examples, bench)
    out = finetune_upr(bench, tmp_path / "upr", model=str(tiny_lm), options=opts)
    after = _group_loss(out, examples, bench)
    assert after < 0.5 * before  # a sign error would raise it
    info = json.loads((out / INFO_FILE).read_text())
    assert info["kind"] == "upr" and info["steps"] == 20 * math.ceil(len(examples) / 2) and info["with_negative"] == len(examples)
    upr = get_reranker("upr", llm=f"transformers:{out}", llm_options={"cache": None})
    e = examples[0]
    own, other = upr.score(e.query, [bench.passage_text(e.positive), bench.passage_text(e.negatives[0])])
    assert own > other


def test_the_cli_trains_upr_and_refuses_a_starting_model_of_another_kind(bench, tiny_lm, minilm, tmp_path, capsys):
    from inferqa.cli import main

    def run(*argv):
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr("sys.argv", ["inferqa", "finetune", *argv, "--bench", str(bench.path)])
            with pytest.raises(SystemExit) as done:
                main()
        return done.value.code or 0, capsys.readouterr().err

    code, _ = run("upr", "--out", str(tmp_path / "u"), "--model", str(tiny_lm), "--negatives", "1",
                  "--negatives-from", "random", "--batch-size", "2", "--max-steps", "2", "--device", "cpu")
    assert code == 0 and json.loads((tmp_path / "u" / INFO_FILE).read_text())["steps"] == 2
    code, err = run("upr", "--out", str(tmp_path / "x"), "--model", str(tiny_lm), "--device", "gpu0")
    assert code == 2 and err.strip().splitlines() == [
        "inferqa: error: finetune: option 'device': not a torch device: 'gpu0' (cpu, cuda, cuda:1, mps, ...)"]
    assert not (tmp_path / "x").exists()
    code, err = run("upr", "--out", str(tmp_path / "x"), "--model", str(minilm))
    assert code == 2 and "not a 'causal-lm' model: found a sentence-transformers bi-encoder" in err
    code, err = run("reranker", "--out", str(tmp_path / "x"), "--model", str(tmp_path / "u"))
    assert code == 2 and "not a 'encoder' model: found a 'upr' model" in err
    assert not (tmp_path / "x").exists()


def test_a_fine_tuned_upr_model_is_no_starting_point_for_an_encoder(tmp_path, tiny_lm):
    from inferqa.models import check_model_kind, model_found

    assert model_found(tiny_lm) == ("causal-lm", None)
    with pytest.raises(InputError, match="found a causal language model"):
        check_model_kind(str(tiny_lm), "encoder")


def test_smollm2_converts_once_to_a_folder_that_scores_as_the_gguf_does(tmp_path):
    pytest.importorskip("gguf")
    pytest.importorskip("accelerate")
    from inferqa.llm import load_llm
    from inferqa.models import smollm2_path, smollm2_transformers_path

    try:
        smollm2_path()
    except InputError as exc:
        pytest.skip(str(exc))
    folder = smollm2_transformers_path(tmp_path)
    assert smollm2_transformers_path(tmp_path) == folder and folder.parent.name == "models"
    prompt = UPR_PROMPT.format(passage="The Eiffel Tower stands in the capital of France, on the Seine.")
    ours = load_llm(f"transformers:{folder}?mode=completion", cache=None)
    gguf = load_llm("smollm2", cache=None)
    right, wrong = " What city is the Eiffel Tower in?", " What is the largest ocean on Earth?"
    a, b = ours.logprobs([(prompt, right), (prompt, wrong)])
    # the same Q4_1 weights, computed in float32 here and by llama.cpp's kernels there
    assert a == pytest.approx(gguf.logprob(prompt, right), abs=0.2)  # measured: within 0.04
    assert b == pytest.approx(gguf.logprob(prompt, wrong), abs=0.2)
    assert a > b
