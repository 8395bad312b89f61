"""transformers backend plumbing on a tiny random-weight Llama with an offline word-level tokenizer."""

from __future__ import annotations

import itertools
import math

import pytest

from inferqa.errors import InputError
from inferqa.llm import GenerationParams, load_llm

WORDS = ("red blue green planet moon star river city king queen answer hints question is the a of "
         "which what who mars venus paris rome").split()


@pytest.fixture(scope="module")
def tiny_model(tmp_path_factory, tiny_llama):
    return tiny_llama(tmp_path_factory.mktemp("tiny-llama"), WORDS,
                      chat_template=("{% for m in messages %}{{ m['role'] }} {{ m['content'] }} {% endfor %}"
                                     "{% if add_generation_prompt %}answer {% endif %}"))


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


def _head_calls(llm):
    """Shapes of every token batch the model embeds (a forward hook on the embeddings)."""
    shapes = []
    llm.lm.get_input_embeddings().register_forward_hook(lambda mod, args, out: shapes.append(tuple(args[0].shape)))
    return shapes


def test_batched_greedy_with_head_reuse_equals_unbatched(tiny_model):
    heads = ["which planet is red of the moon and the star is blue\n\n", "the king of rome is a queen of paris\n\n"]
    tails = ["who is the answer", "what", "which city is the river of rome", "the mars", "venus is the"]
    prompts = [heads[i % 2] + t for i, t in enumerate(tails)] + ["red blue green"]  # the last has no head
    params = GenerationParams(max_tokens=5)
    naive = load_llm(f"transformers:{tiny_model}?mode=completion&batch_size=1&prefix_reuse=false", cache=None)
    expected = naive.complete(prompts, params)
    assert [naive.complete([p], params)[0] for p in prompts] == expected and not naive._prefixes
    fast = load_llm(f"transformers:{tiny_model}?mode=completion&batch_size=2", cache=None)
    shapes = _head_calls(fast)
    assert fast.complete(prompts, params) == expected
    n_heads = [fast._encode(p, len(h), special=True)[1] for p, h in zip(prompts, heads)]
    assert sorted(sum(map(len, k)) for k in fast._prefixes) == sorted(n_heads)
    assert [shapes.count((1, n)) for n in n_heads] == [1, 1]  # each head evaluated once
    assert (3, 8) not in shapes and any(s[0] == 2 for s in shapes)  # batches of at most 2 rests
    shapes.clear()
    assert fast.complete(prompts[::-1], params) == expected[::-1]  # any order, heads from the cache
    assert [shapes.count((1, n)) for n in n_heads] == [0, 0]
    assert [fast.complete([p], params)[0] for p in prompts] == expected  # alone


def test_batched_chat_with_a_shared_system_head_equals_unbatched(tiny_model):
    system = {"role": "system", "content": "the answer is a planet of the star"}
    convs = [[system, {"role": "user", "content": q}] for q in ("which is red", "which is blue mars", "who")]
    convs.append([{"role": "user", "content": "which city"}])
    params = GenerationParams(max_tokens=4)
    naive = load_llm(f"transformers:{tiny_model}", cache=None, batch_size=1, prefix_reuse=False)
    fast = load_llm(f"transformers:{tiny_model}", cache=None, batch_size=8)
    assert fast.chat(convs, params) == naive.chat(convs, params) == [naive.chat([c], params)[0] for c in convs]
    assert len(fast._prefixes) == 1
    with pytest.raises(InputError, match="batch_size"):
        load_llm(f"transformers:{tiny_model}?batch_size=0", cache=None)


def test_batched_prompts_share_their_common_lines_after_the_head(tiny_model):
    head = "which planet is red of the moon and the star is blue\n\n"
    rests = ["red blue green planet\nmoon star\nthe answer", "red blue green planet\nmoon star\nwho is",
             "red blue green planet\ncity\nthe king", "rome\nqueen"]
    prompts = [head + r for r in rests]
    params = GenerationParams(max_tokens=4)
    naive = load_llm(f"transformers:{tiny_model}?mode=completion&batch_size=1&prefix_reuse=false", cache=None)
    expected = [naive.complete([p], params)[0] for p in prompts]
    trie = load_llm(f"transformers:{tiny_model}?mode=completion&batch_size=3", cache=None)
    shapes = _head_calls(trie)
    assert trie.complete(prompts, params) == expected
    n_head = trie._encode(prompts[0], len(head), special=True)[1]
    ids, cuts = trie._blocks(prompts[0], len(head), special=True)
    assert cuts == [n_head, n_head + 4, n_head + 6]  # head | red blue green planet | moon star | the answer
    # the first batch of three shares its first line after the head: one forward of its 4 tokens
    assert shapes.count((1, n_head)) == 1 and shapes.count((1, 4)) == 1
    head_only = load_llm(f"transformers:{tiny_model}?mode=completion&batch_size=3&reuse_scope=head", cache=None)
    shapes = _head_calls(head_only)
    assert head_only.complete(prompts, params) == expected and (1, 4) not in shapes


HEAD = "which planet is red of the moon and the star is blue\n\n"  # <s> and 12 words: 13 tokens
HINTS = ("red blue", "moon star river", "city")  # 2, 3 and 1 tokens
QUESTION = "who is the answer"  # 4 tokens, the tail


def _trie_prompts(head=HEAD, question=QUESTION, sizes=(1, 2, 3)):
    """A prompt per ordering of `sizes` of the hints, one line each, depth-first (prefixes first)."""
    orders = sorted(o for n in sizes for o in itertools.permutations(range(3), n))
    return orders, [head + "".join(HINTS[i] + "\n" for i in o) + question for o in orders]


def _reader(tiny_model, options):
    return load_llm(f"transformers:{tiny_model}?mode=completion&{options}", cache=None)


def test_trie_reuse_across_batches_gives_the_naive_answers(tiny_model):
    _, prompts = _trie_prompts()
    params = GenerationParams(max_tokens=4)
    expected = _reader(tiny_model, "batch_size=1&prefix_reuse=false").complete(prompts, params)
    for options in ("batch_size=1", "batch_size=2", "batch_size=3", "batch_size=2&reuse_scope=head",
                    "batch_size=3&reuse_scope=head"):
        llm = _reader(tiny_model, options)
        assert llm.complete(prompts, params) == expected, options
        assert [llm.complete([p], params)[0] for p in prompts] == expected, options  # kept prefixes, one by one


def test_tokens_evaluated_follow_the_block_cuts(tiny_model):
    H, a, b, c, T = 13, 2, 3, 1, 4  # tokens of the head, hints 0, 1, 2 and the tail
    params = GenerationParams(max_tokens=2)
    probe = _reader(tiny_model, "batch_size=1")
    orders, prompts = _trie_prompts(sizes=(3,))
    ids, cuts = probe._blocks(prompts[0], len(HEAD), special=True)
    assert cuts == [H, H + a, H + a + b, H + a + b + c] and len(ids) == H + a + b + c + T

    def evaluated(options, prompts):
        llm = _reader(tiny_model, options)
        llm.complete(prompts, params)
        return llm.tokens_evaluated

    # The 6 orderings of 3 hints one at a time, each evaluating its blocks after the longest kept
    # block prefix, then its tail: 012 all; 021 after "H 0" (cropped from "H 0 1 2") the blocks 2, 1;
    # 102 after H the blocks 1, 0, 2; 120 after "H 1" the blocks 2, 0; 201 like 102; 210 after "H 2".
    trie = H + (a + b + c + T) + (c + b + T) + (b + a + c + T) + (c + a + T) + (c + a + b + T) + (b + a + T)
    assert trie == H + 5 * (a + b + c) + 6 * T == 67
    assert evaluated("batch_size=1", prompts) == trie
    assert evaluated("batch_size=1&reuse_scope=head", prompts) == H + 6 * (a + b + c + T) == 73
    assert evaluated("batch_size=1&prefix_reuse=false", prompts) == 6 * (H + a + b + c + T) == 138

    # Every ordering of 1 to 3 hints (15 prompts), two a batch; each batch's shared blocks, then its rests:
    #   0, 01       shares "H 0": both evaluated, then T and "1 T"
    #   012, 02     shares "H 0", kept: "1 2 T" and "2 T"
    #   021, 1      shares H, cropped from "H 0": "0 2 1 T" and "1 T"
    #   10, 102     shares "H 1 0": after H the blocks 1, 0; then T and "2 T"
    #   12, 120     shares "H 1 2": "H 1" cropped from "H 1 0", the block 2; then T and "0 T"
    #   2, 20       shares "H 2": the block 2; then T and "0 T"
    #   201, 21     shares "H 2", kept: "0 1 T" and "1 T"
    #   210 alone   shares all its blocks "H 2 1 0": after "H 2" the blocks 1, 0; then T
    orders, prompts = _trie_prompts()
    assert [o for o in orders if len(o) < 3][:4] == [(0,), (0, 1), (0, 2), (1,)]
    trie = (H + a + T + b + T) + (b + c + T + c + T) + (a + c + b + T + b + T) + (b + a + T + c + T) \
        + (c + T + a + T) + (c + T + a + T) + (a + b + T + b + T) + (b + a + T)
    assert trie == H + 7 * a + 8 * b + 6 * c + 15 * T == 117
    assert evaluated("batch_size=2", prompts) == trie
    assert evaluated("batch_size=2&reuse_scope=head", prompts) == H + 11 * (a + b + c) + 15 * T == 139
    assert evaluated("batch_size=1&prefix_reuse=false", prompts) == 15 * H + 11 * (a + b + c) + 15 * T == 321


def test_interleaved_heads_and_questions_keep_the_naive_answers(tiny_model):
    other_head = "the king of rome is a queen of paris\n\n"
    tries = [_trie_prompts(sizes=(1, 3))[1], _trie_prompts(head=other_head, sizes=(1, 3))[1],
             _trie_prompts(question="which city is rome", sizes=(1, 3))[1]]
    prompts = [p for group in zip(*tries) for p in group]  # three tries, their prompts alternating
    params = GenerationParams(max_tokens=3)
    expected = _reader(tiny_model, "batch_size=1&prefix_reuse=false").complete(prompts, params)
    for options in ("batch_size=1", "batch_size=2", "batch_size=3&reuse_scope=head"):
        llm = _reader(tiny_model, options)
        assert llm.complete(prompts, params) == expected, options
        assert [llm.complete([p], params)[0] for p in prompts] == expected, options
        assert len(llm._prefixes) <= 4
