"""llama-cpp-python backend: a GGUF file run in process.

Prefix reuse. Reader and labeller prompts share a long few-shot prefix. For each batch
the backend finds the prompts' longest common token prefix, evaluates it once and keeps
a snapshot of that state (`Llama.save_state`); every prompt of the batch then only
evaluates its own suffix: llama-cpp-python's generate() keeps the KV entries of the
longest prefix it shares with the tokens already in context, and when something else ran
in between (a logprob call, another prefix) the snapshot is restored with `load_state`.
`prefix_reuse=False` resets the context before every prompt (the naive baseline).

Determinism. A greedy answer can flip when the same prompt's KV entries are computed in
differently cut chunks (float sums in another order). So every evaluation starts on a
multiple of `n_batch`, the chunk size llama.cpp evaluates in: snapshots end on a chunk
boundary and reuse of what is in context is cut back to one. A prompt then gets the same
chunks, hence the same answer, alone, in any batch, and with `prefix_reuse=False`.
"""

from __future__ import annotations

import contextlib
import math
import os
from collections import OrderedDict
from pathlib import Path
from typing import Any, Iterator, Sequence

from ..errors import InputError
from ..registry import Option, plugin
from .base import LLM, GenerationParams, Message

MIN_SHARED_PREFIX = 32  # tokens; shorter shared prefixes are not worth a snapshot
MAX_SNAPSHOTS = 2


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


def common_prefix_len(seqs: Sequence[Sequence[int]]) -> int:
    if not seqs:
        return 0
    n = min(len(s) for s in seqs)
    first = seqs[0]
    for i in range(n):
        t = first[i]
        if any(s[i] != t for s in seqs[1:]):
            return i
    return n


MODES = ("chat", "completion")
# Declared once: the llama-cpp backend and the bundled GGUF models (inferqa.llm.bundled) share them.
LLAMA_CPP_OPTIONS = (
    Option("mode", str, "chat", "chat: the model's chat template; completion: plain text", choices=MODES),
    Option("n_ctx", int, 4096, "context window in tokens", min=1),
    Option("n_threads", int, None, "CPU threads (default: cores, at most 8)", min=1),
    Option("n_batch", int, 64, "tokens evaluated per chunk", min=1),
    Option("flash_attn", bool, True, "flash attention"),
    Option("prefix_reuse", bool, True, "evaluate a batch's shared prompt prefix once"),
    Option("seed", int, 0, "sampling seed"),
)


@plugin("llm", "llama-cpp", *LLAMA_CPP_OPTIONS, help="A GGUF file run in process by llama-cpp-python.")
class LlamaCppLLM(LLM):
    backend = "llama-cpp"

    def __init__(self, model_path: str | os.PathLike, *, mode: str = "chat", n_ctx: int = 4096,
                 n_threads: int | None = None, n_batch: int = 64, flash_attn: bool = True,
                 prefix_reuse: bool = True, seed: int = 0):
        path = Path(model_path).expanduser()
        if not path.is_file():
            raise InputError("GGUF model file not found", file=path)
        try:
            import llama_cpp
        except ImportError:
            raise InputError("the llama-cpp backend needs llama-cpp-python (pip install 'inferqa[llm]')") from None
        self._llama_cpp = llama_cpp
        self.path = path.resolve()
        # Name and size identify the weights for the cache without hashing gigabytes.
        self.model = f"{self.path.name}#{self.path.stat().st_size}"
        self.mode = mode
        self.prefix_reuse = bool(prefix_reuse)
        threads = int(n_threads) if n_threads else max(1, min(os.cpu_count() or 1, 8))
        try:
            with _quiet_stderr():
                self.llama = llama_cpp.Llama(model_path=str(self.path), n_ctx=int(n_ctx), n_threads=threads,
                                             n_threads_batch=threads, n_batch=int(n_batch), n_ubatch=int(n_batch), flash_attn=bool(flash_attn), seed=int(seed),
                                             verbose=False)
        except (ValueError, RuntimeError) as exc:
            raise InputError(f"llama.cpp cannot load this model: {exc}", file=self.path) from None
        self._chunk = int(n_batch)
        self._snapshots: OrderedDict[tuple[int, ...], Any] = OrderedDict()
        self._formatter = None
        if mode == "chat":
            template = self.llama.metadata.get("tokenizer.chat_template")
            if template:
                from llama_cpp.llama_chat_format import Jinja2ChatFormatter
                ll = self.llama
                eos, bos = ll.token_eos(), ll.token_bos()
                self._formatter = Jinja2ChatFormatter(
                    template=template,
                    eos_token=ll._model.token_get_text(eos) if eos != -1 else "",
                    bos_token=ll._model.token_get_text(bos) if bos != -1 else "")

    @property
    def identity(self) -> str:
        return f"llama-cpp:{self.model}:{self.mode}"

    # --- tokens -------------------------------------------------------------------
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
        stop = r.stop if isinstance(r.stop, list) else ([r.stop] if r.stop else [])
        return r.prompt, [s for s in stop if s]

    def _check_fits(self, tokens: Sequence[int], max_new: int) -> None:
        # llama.cpp may round n_ctx up while llama-cpp-python's token buffer keeps the size asked for.
        n_ctx = min(self.llama.n_ctx(), len(self.llama.input_ids))
        if len(tokens) + max_new > n_ctx:
            raise InputError(f"prompt of {len(tokens)} tokens plus {max_new} new tokens exceeds the context "
                             f"window n_ctx={n_ctx} (raise it with ?n_ctx=...)")

    # --- prefix snapshots -----------------------------------------------------------
    def _in_context(self) -> Sequence[int]:
        return self.llama._input_ids.tolist()

    def _prepare_prefix(self, batch: list[list[int]]) -> None:
        """Evaluate the batch's shared prefix once and keep a snapshot of it.

        Evaluation starts from the longest part already in context or in a snapshot, so a
        batch whose shared prefix extends the few-shot prefix only pays for the extension.
        """
        n = common_prefix_len(batch) if len(batch) > 1 else 0
        # Leave at least one token of each prompt to evaluate: generate() needs fresh logits.
        n = min(n, min(len(t) for t in batch) - 1) if batch else 0
        n = self._aligned(n)
        if n < MIN_SHARED_PREFIX:
            return
        key = tuple(batch[0][:n])
        if key in self._snapshots:
            self._snapshots.move_to_end(key)
            return
        ll = self.llama
        self._restore_best(list(key), usable=n)
        ctx = self._in_context()
        start = self._aligned(min(common_prefix_len([ctx, key]) if ctx else 0, n))
        ll.n_tokens = start
        if start < n:
            ll.eval(list(key[start:]))  # eval() drops the KV entries past `start` first
        else:
            ll._ctx.kv_cache_seq_rm(-1, n, -1)
            ll._requires_eval = True
        self._snapshots[key] = ll.save_state()
        while len(self._snapshots) > MAX_SNAPSHOTS:
            self._snapshots.popitem(last=False)

    def _aligned(self, n: int) -> int:
        return n - n % self._chunk

    def _keep_aligned_context(self, tokens: Sequence[int]) -> None:
        """Cut what generate() may reuse from the context back to a chunk boundary."""
        ll = self.llama
        have = common_prefix_len([self._in_context(), tokens[:-1]]) if ll.n_tokens else 0
        ll.n_tokens = self._aligned(have)

    def _restore_best(self, tokens: list[int], usable: int | None = None) -> None:
        """Load the snapshot sharing most of `tokens` (at most `usable` of them, by default
        all but the last) if it beats what is in context."""
        usable = len(tokens) - 1 if usable is None else usable
        ctx = self._in_context()
        have = common_prefix_len([ctx, tokens]) if ctx else 0
        best, best_len = None, have
        for key, state in self._snapshots.items():
            if best_len < len(key) <= usable and tuple(tokens[:len(key)]) == key:
                best, best_len = state, len(key)
        if best is not None:
            self.llama.load_state(best)

    # --- generation -------------------------------------------------------------------
    def _generate(self, batch: list[list[int]], stops: list[list[str]], params: GenerationParams) -> list[str]:
        ll = self.llama
        for tokens in batch:
            self._check_fits(tokens, params.max_tokens)
        if self.prefix_reuse:
            self._prepare_prefix(batch)
        out = []
        for tokens, stop in zip(batch, stops):
            if self.prefix_reuse:
                self._restore_best(tokens)
                self._keep_aligned_context(tokens)
            else:
                ll.reset()
            if params.seed is not None:
                ll.set_seed(params.seed)
            r = ll.create_completion(prompt=tokens, max_tokens=params.max_tokens, temperature=params.temperature,
                                     top_k=40 if params.temperature > 0 else 1, top_p=1.0, min_p=0.0,
                                     repeat_penalty=1.0, stop=list(stop) + list(params.stop) or None)
            out.append(r["choices"][0]["text"])
        return out

    def complete(self, prompts: Sequence[str], params: GenerationParams = GenerationParams()) -> list[str]:
        batch = [self._tokens(p) for p in prompts]
        return self._generate(batch, [[] for _ in batch], params)

    def chat(self, conversations: Sequence[Sequence[Message]],
             params: GenerationParams = GenerationParams()) -> list[str]:
        if self.mode != "chat":
            raise InputError(f"{self.path.name} is loaded in completion mode; chat() is not available")
        batch, stops = [], []
        for messages in conversations:
            text, stop = self.render_chat(messages)
            batch.append(self._tokens(text, add_bos=False))  # the template writes BOS itself
            stops.append(stop)
        return self._generate(batch, stops, params)

    # --- scoring ------------------------------------------------------------------------
    def logprob(self, prompt: str, continuation: str) -> float:
        """Sum of log-probabilities of the continuation's tokens (raw text, no chat template).

        Reuses the KV entries shared with what is in context, then decodes the rest in
        chunks with logits requested for every position that predicts a continuation token.
        """
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
        if self.prefix_reuse:
            self._restore_best(full)
        ctx = self._in_context()
        # Keep the shared prefix but always re-decode from the last prompt token onwards.
        keep = min(common_prefix_len([ctx, full]) if ctx else 0, len(p_tok) - 1)
        if not self.prefix_reuse:
            keep = 0
        ll.n_tokens = keep
        if keep < len(p_tok) - 1:
            ll.eval(full[keep:len(p_tok) - 1])
        tail = full[len(p_tok) - 1:len(full) - 1]  # positions whose next token is a continuation token
        n_vocab = ll.n_vocab()
        total = 0.0
        done = 0
        for start in range(0, len(tail), ll.n_batch):
            chunk = tail[start:start + ll.n_batch]
            n_past = ll.n_tokens
            ll._ctx.kv_cache_seq_rm(-1, n_past, -1)
            ll._batch.set_batch(batch=chunk, n_past=n_past, logits_all=True)
            ll._ctx.decode(ll._batch)
            logits = np.ctypeslib.as_array(ll._ctx.get_logits(), shape=(len(chunk), n_vocab)).astype(np.float64)
            ll.input_ids[n_past:n_past + len(chunk)] = chunk
            ll.n_tokens += len(chunk)
            targets = c_tok[done:done + len(chunk)]
            peak = logits.max(axis=1)
            lse = peak + np.log(np.exp(logits - peak[:, None]).sum(axis=1))
            total += float((logits[np.arange(len(chunk)), targets] - lse).sum())
            done += len(chunk)
        ll._requires_eval = True  # logits in llama-cpp-python's buffers are stale now
        if not math.isfinite(total):
            raise RuntimeError("non-finite log-probability")
        return total

    def close(self) -> None:
        self._snapshots.clear()
        llama = getattr(self, "llama", None)
        if llama is not None:
            llama.close()
            self.llama = None
