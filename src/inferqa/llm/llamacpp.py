"""llama-cpp-python backend: a GGUF file run in process (docs/read.md: prefix reuse, slots).

Every prompt is evaluated as a fixed sequence of blocks cut by its own content
(inferqa.llm.heads), each one chunk from its own position. With `prefix_reuse` (default)
the next prompt rewinds the context (`kv_cache_seq_rm`) to the longest block prefix the two
share, or loads a kept head snapshot, and evaluates only the blocks after it;
`reuse_scope=head` reuses the head block only, `prefix_reuse=False` none (the baseline).
Cut by content, a prompt always gets the same tokens and chunks, hence (float sums in the
same order) the same greedy answer: alone, in any batch and order, with any reuse.

Flash attention is off by default: llama.cpp's CPU kernel tiles only chunks of 64+ query
tokens, so the short blocks after the head ran about 30 % slower with it. It and `n_batch`
(where it cuts a block) change the floats, so both are in the identity.

Greedy answers are decoded `parallel` at a time (inferqa.llm.llamacpp_slots); sampled ones
one at a time in the Llama's own context, which `logprob` uses too. With `parallel=1` both
share one KV cache, and each side forgets its kept blocks when the other has used it.
"""

from __future__ import annotations

import atexit
import bisect
import contextlib
import ctypes
import functools
import itertools
import math
import os
import sys
from pathlib import Path
from typing import Iterator, Sequence

from ..errors import InputError
from ..registry import Option, plugin
from .base import LLM, GenerationParams, Message
from .heads import block_ends, chat_head, chat_head_end, common_prefix_len, completion_head_end
from .llamacpp_slots import BlockPrefix, SlotDecoder

MIN_HEAD = 32  # tokens; a prompt whose head is shorter is evaluated as one block


@contextlib.contextmanager
def _quiet_stderr() -> Iterator[None]:
    """llama.cpp prints model-loading chatter on fd 2 even with verbose=False."""
    try:
        fd = os.dup(2)
    except OSError:
        yield
        return
    with open(os.devnull, "w") as null:
        os.dup2(null.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(fd, 2)
            os.close(fd)


@functools.cache
def _close_devnull_files_at_exit() -> None:
    """llama_cpp._utils opens os.devnull twice on import and never closes it. Freed only at the
    very end of shutdown, once the warning filters are gone, each printed "ResourceWarning:
    unclosed file" on stderr after every run that loaded a model."""
    utils = sys.modules.get("llama_cpp._utils")
    files = [getattr(utils, name, None) for name in ("outnull_file", "errnull_file")]
    atexit.register(lambda: [f.close() for f in files if hasattr(f, "close")])


FLASH_ATTN = Option("flash_attn", bool, False, "flash attention (llama.cpp's CPU kernel tiles only chunks of 64+ "
                    "tokens: shorter blocks run faster without it; part of the identity)")
# The same window in process and on the local servers (llm/servers.py): a prompt that fits one fits the other.
N_CTX = Option("n_ctx", int, 4096, "context window in tokens", min=1)
# Declared once: the llama-cpp backend and the bundled GGUF models (inferqa.llm.bundled) share them.
LLAMA_CPP_OPTIONS = (
    Option("mode", str, "chat", "chat: the model's chat template; completion: plain text",
           choices=("chat", "completion")),
    N_CTX,
    Option("n_threads", int, None, "CPU threads (default: cores, at most 8)", min=1),
    Option("n_batch", int, 512, "tokens evaluated per chunk", min=1),
    FLASH_ATTN,
    Option("prefix_reuse", bool, True, "keep the KV state of evaluated blocks and reuse the longest shared prefix"),
    Option("reuse_scope", str, "trie", "with prefix_reuse: trie reuses the longest shared block prefix; "
           "head only the first block (the few-shot head)", choices=("trie", "head")),
    Option("parallel", int, 1, "greedy answers decoded together, one KV sequence each (answers unchanged; "
           "above 1 the KV cache takes parallel + 1 times n_ctx)", min=1),
    Option("seed", int, 0, "sampling seed"),
)


@plugin("llm", "llama-cpp", *LLAMA_CPP_OPTIONS, help="A GGUF file run in process by llama-cpp-python.")
class LlamaCppLLM(LLM):
    backend = "llama-cpp"

    def __init__(self, model_path: str | os.PathLike, *, mode: str, n_ctx: int, n_threads: int | None,
                 n_batch: int, flash_attn: bool, prefix_reuse: bool, reuse_scope: str, parallel: int, seed: int):
        """Settings resolved by the registry (`load_llm`): LLAMA_CPP_OPTIONS holds the defaults."""
        path = Path(model_path).expanduser()
        if not path.is_file():
            raise InputError("GGUF model file not found", file=path)
        try:
            import llama_cpp
        except ImportError:
            raise InputError("the llama-cpp backend needs llama-cpp-python (pip install 'inferqa[llm]')") from None
        _close_devnull_files_at_exit()
        self.path = path.resolve()
        # Name and size identify the weights for the cache without hashing gigabytes.
        self.model = f"{self.path.name}#{self.path.stat().st_size}"
        self.mode = mode
        # settings that change the numbers, hence greedy answers; the thread count does not
        self._numerics = f"flash_attn={'on' if flash_attn else 'off'}:n_batch={int(n_batch)}"
        self.prefix_reuse = bool(prefix_reuse)
        self.reuse_scope = reuse_scope
        self._parallel = int(parallel)
        self.n_ctx = int(n_ctx)
        self._slots: SlotDecoder | None = None  # made on the first greedy batch
        self._kv_user = "llama"  # with parallel=1: which side's blocks the shared KV cache holds
        self.tokens_evaluated = 0  # prompt tokens evaluated (blocks and tails; generated ones not)
        threads = int(n_threads) if n_threads else max(1, min(os.cpu_count() or 1, 8))
        try:
            with _quiet_stderr():
                self.llama = llama_cpp.Llama(model_path=str(self.path), n_ctx=int(n_ctx), n_threads=threads,
                                             n_threads_batch=threads, n_batch=int(n_batch), n_ubatch=int(n_batch),
                                             flash_attn=bool(flash_attn), seed=int(seed), verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise InputError(f"llama.cpp cannot load this model: {exc}", file=self.path) from None
        # the blocks in the Llama's own context (sampled answers, logprob)
        self._prefix = BlockPrefix(lambda tokens, pos: self.llama.eval(list(tokens)), self._rewind,
                                   self.llama.save_state, self.llama.load_state, self.prefix_reuse, reuse_scope)
        self._formatter = self._head_formatter = None
        template = self.llama.metadata.get("tokenizer.chat_template") if mode == "chat" else None
        if template:
            from llama_cpp.llama_chat_format import Jinja2ChatFormatter
            ll = self.llama
            eos, bos = ll.token_eos(), ll.token_bos()
            texts = dict(eos_token=ll._model.token_get_text(eos) if eos != -1 else "",
                         bos_token=ll._model.token_get_text(bos) if bos != -1 else "")
            self._formatter = Jinja2ChatFormatter(template=template, **texts)
            self._head_formatter = Jinja2ChatFormatter(template=template, add_generation_prompt=False, **texts)

    @property
    def identity(self) -> str:
        return f"llama-cpp:{self.model}:{self.mode}:{self._numerics}"

    @property
    def parallel(self) -> int:
        return self._parallel

    def _tokens(self, text: str, add_bos: bool = True) -> list[int]:
        return self.llama.tokenize(text.encode("utf-8"), add_bos=add_bos, special=True)

    def count_tokens(self, text: str) -> int:
        return len(self._tokens(text, add_bos=False))

    def render_chat(self, messages: Sequence[Message]) -> tuple[str, list[str]]:
        """The prompt text the model's own chat template gives, and its stop strings."""
        if self._formatter is None:
            raise InputError(f"{self.path.name} has no chat template (or mode=completion); "
                             "use completion mode", file=self.path)
        # enable_thinking: Qwen3-style templates skip the thinking block; other templates ignore it.
        r = self._formatter(messages=[dict(m) for m in messages], enable_thinking=False)
        stop = r.stop if isinstance(r.stop, list) else [r.stop]
        return r.prompt, [s for s in stop if s]

    def render_head(self, messages: Sequence[Message]) -> str:
        """The template's text of the conversation's head (inferqa.llm.heads); "" if none."""
        head = chat_head(messages)
        if not head or self._head_formatter is None:
            return ""
        return self._head_formatter(messages=head, enable_thinking=False).prompt

    def _check_fits(self, tokens: Sequence[int], max_new: int) -> None:
        # llama.cpp may round n_ctx up while llama-cpp-python's token buffer keeps the size asked for.
        n_ctx = min(self.llama.n_ctx(), len(self.llama.input_ids))
        if len(tokens) + max_new > n_ctx:
            raise InputError(f"prompt of {len(tokens)} tokens plus {max_new} new tokens exceeds the context "
                             f"window n_ctx={n_ctx} (raise it with ?n_ctx=...)")

    def _token_ends(self, tokens: Sequence[int], text: str) -> list[int] | None:
        """Byte offset in `text` where each token ends (a leading BOS the text does not spell
        ends at 0); None when the token pieces do not spell the text out."""
        import llama_cpp

        ll = self.llama
        buf = ctypes.create_string_buffer(256)
        start = 1 if tokens and tokens[0] == ll.token_bos() and not text.startswith(
            ll._model.token_get_text(tokens[0])) else 0
        data = text.encode("utf-8")
        ends, offset = [0] * start, 0
        for i in range(start, len(tokens)):
            size = llama_cpp.llama_token_to_piece(ll._model.vocab, tokens[i], buf, len(buf), 0, True)
            if size < 0 or data[offset:offset + size] != buf.raw[:size]:
                return None
            offset += size
            ends.append(offset)
        return ends if offset == len(data) else None

    def _head_len(self, tokens: Sequence[int], text: str, head_end: int) -> int:
        """Number of tokens of the head (those ending at or before byte `head_end`); 0 without one."""
        cuts = self._cuts(tokens, text, head_end)
        return cuts[0] if cuts else 0

    def _cuts(self, tokens: Sequence[int], text: str, head_end: int) -> list[int]:
        """Token positions where the prompt's blocks end, the tail's left out (inferqa.llm.heads),
        each at the last token boundary at or before its byte offset (the prompt is tokenized
        whole, so cutting never changes its tokens); [] (one block) without a head of MIN_HEAD
        tokens ending at or before byte `head_end`, or if the pieces do not spell the text out."""
        ends = self._token_ends(tokens, text) if head_end > 0 else None
        if ends is None:
            return []
        n_head = min(bisect.bisect_right(ends, head_end), len(tokens) - 1)  # generation needs a token after it
        if n_head < MIN_HEAD:
            return []
        cuts = [n_head]
        # decoded as latin-1 (one character per byte), so block_ends gives byte offsets
        for e in block_ends(text.encode("utf-8").decode("latin-1"), head_end)[1:]:
            n = bisect.bisect_right(ends, e)
            if cuts[-1] < n < len(tokens):
                cuts.append(n)
        return cuts

    def _rewind(self, pos: int) -> None:
        ll = self.llama
        ll.n_tokens = pos
        ll._ctx.kv_cache_seq_rm(-1, pos, -1)
        ll._requires_eval = True

    def _take_kv(self, user: str) -> None:
        """Before the greedy decoder ("slots") or the Llama's own calls ("llama") use a shared
        KV cache: if the other side used it last, what this side kept there is gone."""
        if self._slots is None or not self._slots.shares_context or user == self._kv_user:
            return
        if user == "slots":
            self._slots.prefix.blocks = []
        else:
            self._prefix.blocks = []
            self.llama.n_tokens = 0  # llama-cpp-python's record of what it evaluated
        self._kv_user = user

    def _generate(self, batch: list[tuple[list[int], list[int]]], stops: list[list[str]],
                  params: GenerationParams) -> list[str]:
        """Each prompt as (tokens, block cuts): its blocks, then its tail and the answer; greedy
        answers through the slot decoder, sampled ones one at a time in the Llama's own context."""
        prompts = []
        for tokens, cuts in batch:
            self._check_fits(tokens, params.max_tokens)
            bounds = [0, *cuts]
            prompts.append((tokens, [tuple(tokens[a:b]) for a, b in zip(bounds, bounds[1:])]))
        stops = [list(s) + list(params.stop) for s in stops]
        if params.temperature == 0:
            if self._slots is None:
                with _quiet_stderr():
                    self._slots = SlotDecoder(self.llama, self._parallel, self.n_ctx, self.prefix_reuse,
                                              self.reuse_scope)
            self._take_kv("slots")
            answers, evaluated = self._slots.generate(prompts, stops, params.max_tokens)
            self.tokens_evaluated += evaluated
            return answers
        self._take_kv("llama")
        ll = self.llama
        out = []
        for (tokens, blocks), stop in zip(prompts, stops):
            self.tokens_evaluated += self._prefix.enter(blocks)
            self.tokens_evaluated += len(tokens) - ll.n_tokens  # the tail, evaluated by generate
            if params.seed is not None:
                ll.set_seed(params.seed)
            r = ll.create_completion(prompt=tokens, max_tokens=params.max_tokens, temperature=params.temperature,
                                     top_k=40, top_p=1.0, min_p=0.0, repeat_penalty=1.0, stop=stop or None)
            out.append(r["choices"][0]["text"])
        return out

    def _encode(self, text: str, head_chars: int, add_bos: bool) -> tuple[list[int], list[int]]:
        """Tokens of `text` and its block cuts, its head being its first `head_chars` characters."""
        tokens = self._tokens(text, add_bos=add_bos)
        return tokens, self._cuts(tokens, text, len(text[:head_chars].encode("utf-8")))

    def complete(self, prompts: Sequence[str], params: GenerationParams = GenerationParams()) -> list[str]:
        batch = [self._encode(p, completion_head_end(p), add_bos=True) for p in prompts]
        return self._generate(batch, [[] for _ in batch], params)

    def chat(self, conversations: Sequence[Sequence[Message]],
             params: GenerationParams = GenerationParams()) -> list[str]:
        if self.mode != "chat":
            raise InputError(f"{self.path.name} is loaded in completion mode; chat() is not available")
        rendered = [self.render_chat(messages) for messages in conversations]
        # add_bos=False: the template writes BOS itself
        batch = [self._encode(text, chat_head_end(text, self.render_head(messages)), add_bos=False)
                 for (text, _), messages in zip(rendered, conversations)]
        return self._generate(batch, [stop for _, stop in rendered], params)

    def _reuse_context(self, tokens: list[int], limit: int) -> None:
        """Rewind the context to the longest prefix of `tokens`, at most `limit` long, that it or
        a kept snapshot holds; the blocks still whole in it stay reusable."""
        ll, kept = self.llama, self._prefix
        keep = 0
        if self.prefix_reuse:
            keep = min(common_prefix_len([ll.input_ids[:ll.n_tokens].tolist(), tokens]), limit)
            best = max((k for k in kept.snapshots if keep < len(k) <= limit and tuple(tokens[:len(k)]) == k),
                       key=len, default=None)
            if best is not None:
                ll.load_state(kept.snapshots[best])
                kept.blocks, keep = [best], len(best)
        ends = list(itertools.accumulate(map(len, kept.blocks)))
        del kept.blocks[bisect.bisect_right(ends, keep):]
        ll.n_tokens = keep

    def logprob(self, prompt: str, continuation: str) -> float:
        """Sum of log-probabilities of the continuation's tokens (raw text, no chat template):
        reuses the KV entries shared with the context, then decodes the rest in chunks with
        logits for every position that predicts a continuation token."""
        import numpy as np

        ll = self.llama
        p_tok = self._tokens(prompt)
        c_tok = self._tokens(continuation, add_bos=False)
        if not c_tok:
            return 0.0
        if not p_tok:
            raise InputError("logprob needs a non-empty prompt for a model without a BOS token")
        full = p_tok + c_tok
        self._check_fits(full, 0)
        self._take_kv("llama")
        last = len(p_tok) - 1  # always re-decoded: its logits predict the first continuation token
        self._reuse_context(full, last)
        if ll.n_tokens < last:
            ll.eval(full[ll.n_tokens:last])
        tail = full[last:-1]  # positions whose next token is a continuation token
        total = 0.0
        for start in range(0, len(tail), ll.n_batch):
            chunk = tail[start:start + ll.n_batch]
            n_past = ll.n_tokens
            ll._ctx.kv_cache_seq_rm(-1, n_past, -1)
            ll._batch.set_batch(batch=chunk, n_past=n_past, logits_all=True)
            ll._ctx.decode(ll._batch)
            logits = np.ctypeslib.as_array(ll._ctx.get_logits(), shape=(len(chunk), ll.n_vocab())).astype(np.float64)
            ll.input_ids[n_past:n_past + len(chunk)] = chunk
            ll.n_tokens += len(chunk)
            peak = logits.max(axis=1)
            lse = peak + np.log(np.exp(logits - peak[:, None]).sum(axis=1))
            total += float((logits[np.arange(len(chunk)), c_tok[start:start + len(chunk)]] - lse).sum())
        ll._requires_eval = True  # logits in llama-cpp-python's buffers are stale now
        if not math.isfinite(total):
            raise RuntimeError("non-finite log-probability")
        return total

    def close(self) -> None:
        if self._slots is not None:
            self._slots.close()
            self._slots = None
        self._prefix.clear()
        if self.llama is not None:
            self.llama.close()
            self.llama = None
