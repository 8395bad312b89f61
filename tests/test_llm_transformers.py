"""transformers backend plumbing on a tiny random-weight Llama with an offline word-level tokenizer."""

from __future__ import annotations

import math

import pytest

from inferqa.errors import InputError
from inferqa.llm import GenerationParams, load_llm

WORDS = ("red blue green planet moon star river city king queen answer hints question is the a of "
         "which what who mars venus paris rome").split()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory):
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    from tokenizers import Tokenizer, models, pre_tokenizers, processors

    folder = tmp_path_factory.mktemp("tiny-llama")
    specials = ["<unk>", "<s>", "</s>", "<pad>"]
    vocab = {t: i for i, t in enumerate(specials + WORDS)}
    tok = Tokenizer(models.WordLevel(vocab, unk_token="<unk>"))
    tok.pre_tokenizer = pre_tokenizers.Whitespace()
    tok.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 1)])
    fast = transformers.PreTrainedTokenizerFast(tokenizer_object=tok, unk_token="<unk>", bos_token="<s>",
                                                eos_token="</s>", pad_token="<pad>")
    fast.chat_template = ("{% for m in messages %}{{ m['role'] }} {{ m['content'] }} {% endfor %}"
                          "{% if add_generation_prompt %}answer {% endif %}")
    fast.save_pretrained(folder)
    torch.manual_seed(0)
    cfg = transformers.LlamaConfig(vocab_size=len(vocab), hidden_size=16, intermediate_size=32, num_hidden_layers=2,
                                   num_attention_heads=2, num_key_value_heads=2, max_position_embeddings=64,
                                   bos_token_id=1, eos_token_id=2, pad_token_id=3)
    transformers.LlamaForCausalLM(cfg).save_pretrained(folder)
    return folder


def test_logprob_is_a_distribution_and_obeys_the_chain_rule(tiny_model):
    llm = load_llm(f"transformers:{tiny_model}?mode=completion", cache=None)
    prompt = "which planet is red"
    probs = [math.exp(llm.logprob(prompt, w)) for w in WORDS]
    # special tokens take the rest of the mass; the words alone must not exceed 1
    specials = [math.exp(llm.logprob(prompt, s)) for s in ("</s>", "<pad>", "<unk>", "<s>")]
    assert sum(probs) + sum(specials) == pytest.approx(1.0, abs=1e-4)
    two = llm.logprob(prompt, "mars moon")
    assert two == pytest.approx(llm.logprob(prompt, "mars") + llm.logprob(prompt + " mars", "moon"), abs=1e-4)
    assert llm.logprobs([(prompt, "mars"), (prompt, "rome")]) == [llm.logprob(prompt, "mars"),
                                                                   llm.logprob(prompt, "rome")]


def test_greedy_completion_follows_the_argmax(tiny_model):
    llm = load_llm(f"transformers:{tiny_model}", mode="completion", cache=None)
    prompt = "the king of rome is"
    out = llm.complete([prompt, prompt], GenerationParams(max_tokens=1))
    assert out[0] == out[1]  # deterministic
    candidates = WORDS + ["</s>", "<pad>", "<unk>", "<s>"]
    best = max(candidates, key=lambda w: llm.logprob(prompt, w))
    assert out[0].strip() == ("" if best in ("</s>", "<pad>", "<s>") else best)
    longer = llm.complete([prompt], GenerationParams(max_tokens=4))[0]
    assert len(longer.split()) <= 4 and longer.startswith(out[0].strip())


def test_chat_uses_the_template_and_stop_strings(tiny_model, tmp_path):
    llm = load_llm(f"transformers:{tiny_model}", cache=tmp_path / "c.sqlite")
    conv = [{"role": "user", "content": "which city"}]
    a = llm.chat([conv], GenerationParams(max_tokens=3))[0]
    # the chat prompt is exactly the template's text: the completion of that text agrees
    text = "user which city answer"
    b = llm.inner.complete([text], GenerationParams(max_tokens=3))[0]
    assert a == b
    assert llm.chat([conv], GenerationParams(max_tokens=3)) == [a] and llm.stats.hits == 1
    if a.split():
        first = a.split()[0]
        assert llm.inner.complete([text], GenerationParams(max_tokens=3, stop=(first,)))[0] == ""


def test_completion_mode_refuses_chat_and_missing_folder(tiny_model, tmp_path):
    llm = load_llm(f"transformers:{tiny_model}?mode=completion", cache=None)
    assert llm.count_tokens("which planet is red") == 4
    with pytest.raises(InputError, match="chat template"):
        llm.chat([[{"role": "user", "content": "x"}]])
    with pytest.raises(InputError, match="model folder not found"):
        load_llm(f"transformers:{tmp_path / 'nope'}", cache=None)


def test_chat_turns_thinking_off_where_the_template_reads_enable_thinking(tiny_model):
    llm = load_llm(f"transformers:{tiny_model}", cache=None)
    # A Qwen3-style switch: with thinking on (or the flag absent) the prompt would gain "mars moon".
    llm.tokenizer.chat_template = ("{% for m in messages %}{{ m['role'] }} {{ m['content'] }} {% endfor %}"
                                   "{% if add_generation_prompt %}answer {% endif %}"
                                   "{% if enable_thinking is not defined or enable_thinking %}mars moon {% endif %}")
    conv = [{"role": "user", "content": "which city"}]
    a = llm.chat([conv], GenerationParams(max_tokens=3))[0]
    assert a == llm.complete(["user which city answer"], GenerationParams(max_tokens=3))[0]
