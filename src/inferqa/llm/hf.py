"""Hugging Face transformers backend: a model id (online) or a local folder (docs/read.md).

Greedy calls run `batch_size` prompts (default 8) through one `generate`, grouped by head
(inferqa.llm.heads). A batch's KV cache for the block prefix its prompts share starts from
the kept one (`prefix_reuse`, an LRU) sharing the most blocks with it; the rests are padded
on the left, between shared prefix and rest, with the attention mask skipping the padding,
so each answer is the one unbatched greedy decoding gives. `batch_size=1&prefix_reuse=false`
is the naive path: one `generate` per whole prompt. Sampled calls always run one prompt at
a time, so a seed means the same. `tokens_evaluated` counts prompt tokens the forwards evaluate.
`logprobs` scores `batch_size` (prompt, continuation) pairs a forward (`continuation_logprobs`).
"""

from __future__ import annotations

import copy
import inspect
from collections import OrderedDict
from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError
from ..models import check_device, check_model_ref, quiet_loading
from ..registry import Option, plugin
from .base import LLM, GenerationParams, Message
from .heads import block_ends, chat_head, chat_head_end, common_prefix_len, completion_head_end

MAX_PREFIXES = 4  # block-prefix KV caches kept between batches and calls (LRU)


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """Cut `text` at the earliest stop string, as servers do."""
    found = [i for i in (text.find(s) for s in stop if s) if i != -1]
    return text[:min(found, default=len(text))]


def encode_pair(tokenizer, prompt: str, continuation: str) -> tuple[list[int], list[int]]:
    """(prompt ids with the tokenizer's special tokens (BOS), continuation ids without): one pair as
    `continuation_logprobs` scores it."""
    return tokenizer(prompt)["input_ids"], tokenizer(continuation, add_special_tokens=False)["input_ids"]


def continuation_logprobs(lm, seqs: Sequence[tuple[list[int], list[int]]]):
    """For each (prompt ids, continuation ids): the sum of log P(continuation | prompt) under causal
    LM `lm`, all in one forward, padded on the right (so no real token sees padding, and the padding's
    id does not matter). A tensor, with gradients where the caller allows them: the transformers
    backend's `logprobs` and `finetune upr` compute the upr reranker's score here."""
    import torch

    width = max(len(p) + len(c) for p, c in seqs)
    ids = torch.zeros((len(seqs), width), dtype=torch.long)
    mask = torch.zeros((len(seqs), width), dtype=torch.long)
    target = torch.full((len(seqs), width), -100)
    for i, (p, c) in enumerate(seqs):
        ids[i, :len(p) + len(c)] = torch.tensor(p + c)
        mask[i, :len(p) + len(c)] = 1
        target[i, len(p):len(p) + len(c)] = torch.tensor(c, dtype=torch.long)
    logits = lm(input_ids=ids.to(lm.device), attention_mask=mask.to(lm.device)).logits[:, :-1].float()
    target = target[:, 1:].to(lm.device)
    logp = torch.log_softmax(logits, dim=-1).gather(2, target.clamp(min=0)[..., None])[..., 0]
    return (logp * (target != -100)).sum(dim=1)


@plugin("llm", "transformers",
        Option("mode", str, "chat", "chat: the tokenizer's chat template; completion: plain text",
               choices=("chat", "completion")),
        Option("device", str, "cpu", "torch device", validate=check_device),
        Option("dtype", str, "auto", "torch dtype name, or auto (the checkpoint's)"),
        Option("n_threads", int, None, "torch CPU threads (default: torch's)", min=1),
        Option("batch_size", int, 8, "prompts per greedy generate call, and logprob pairs per forward", min=1),
        Option("prefix_reuse", bool, True, "compute each prompt head's KV cache once and reuse it"),
        Option("reuse_scope", str, "trie", "with prefix_reuse: trie also shares a batch's common context lines; "
               "head only the first block", choices=("trie", "head")),
        help="A Hugging Face causal LM (hub id or local folder) run in process.")
class TransformersLLM(LLM):
    backend = "transformers"

    def __init__(self, model: str, *, mode: str, device: str, dtype: str, n_threads: int | None,
                 batch_size: int, prefix_reuse: bool, reuse_scope: str):
        """Settings resolved by the registry (`load_llm`): the plugin's Option table holds the defaults."""
        looks_local = Path(model).expanduser().exists()
        if not (model.startswith((".", "/", "~")) or looks_local):
            from ..models import hub_model

            hub_model(model)  # before the slow imports: an unreachable hub fails at once
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise InputError("the transformers backend needs 'transformers' and torch "
                             "(pip install 'inferqa[transformers]')") from None
        check_model_ref(model, "model folder", "llm")  # the one model-path check, as every loader's
        self._torch = torch
        if n_threads:
            torch.set_num_threads(int(n_threads))
        self.model = str(Path(model).expanduser().resolve()) if looks_local else model
        self.mode = mode
        self.device = device
        self.batch_size = int(batch_size)
        self.prefix_reuse = bool(prefix_reuse)
        self.reuse_scope = reuse_scope
        # blocks (head first) -> the KV cache of exactly those blocks, each computed as one forward
        self._prefixes: OrderedDict[tuple[tuple[int, ...], ...], Any] = OrderedDict()
        self.tokens_evaluated = 0  # prompt tokens evaluated by forwards (padding and generated ones not)
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model)
            with quiet_loading():
                try:
                    lm = AutoModelForCausalLM.from_pretrained(self.model, dtype=dtype)
                except TypeError:  # transformers < 4.56 names it torch_dtype
                    lm = AutoModelForCausalLM.from_pretrained(self.model, torch_dtype=dtype)
            self.lm = lm.to(device).eval()
        except OSError as exc:
            raise InputError(f"cannot load transformers model {model!r}: {str(exc).splitlines()[0]}") from None
        # transformers 5 renamed generate's and forward's `past_key_values` to `cache`
        self._cache_arg = "cache" if "cache" in inspect.signature(self.lm.forward).parameters else "past_key_values"

    @property
    def parallel(self) -> int:
        return self.batch_size

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _gen_kwargs(self, params: GenerationParams) -> dict[str, Any]:
        sample = params.temperature > 0
        pad = self.tokenizer.pad_token_id
        pad = self.tokenizer.eos_token_id if pad is None else pad
        kwargs: dict[str, Any] = {"max_new_tokens": params.max_tokens, "do_sample": sample, "pad_token_id": pad}
        if sample:
            kwargs["temperature"] = params.temperature
        else:  # silence model-config sampling defaults under greedy decoding
            kwargs.update(temperature=None, top_p=None, top_k=None)
        return kwargs

    def _generate(self, ids: list[int], params: GenerationParams) -> str:
        """One whole prompt through `generate`: the naive path, and every sampled call."""
        if params.temperature > 0 and params.seed is not None:
            self._torch.manual_seed(params.seed)
        return self._generate_batch((), [ids], params)[0]

    def _encode(self, text: str, head_end: int, special: bool = False) -> tuple[list[int], int]:
        """Token ids of `text` and how many of them are its head: those ending at or before
        character `head_end` (added special tokens, offset 0, count in)."""
        ids, cuts = self._blocks(text, head_end, special)
        return ids, cuts[0] if cuts else 0

    def _blocks(self, text: str, head_end: int, special: bool = False) -> tuple[list[int], list[int]]:
        """Token ids of `text` and where its blocks end (inferqa.llm.heads), the tail's left out:
        each cut after the tokens ending at or before its character offset; [] without a head."""
        enc = self.tokenizer(text, add_special_tokens=special, return_offsets_mapping=self.tokenizer.is_fast)
        ids = list(enc["input_ids"])
        if not head_end or not ids or not self.tokenizer.is_fast:
            return ids, []
        ends = [end for _, end in enc["offset_mapping"]]
        cuts: list[int] = []
        n = 0
        for offset in block_ends(text, head_end):
            while n < len(ends) and ends[n] <= offset:
                n += 1
            cut = min(n, len(ids) - 1)  # generation needs a token after the last cut
            if cut > (cuts[-1] if cuts else 0):
                cuts.append(cut)
            elif not cuts:
                return ids, []  # an empty head
        return ids, cuts

    def _prefix_cache(self, blocks: tuple[tuple[int, ...], ...]) -> Any:
        """The KV cache of `blocks` (a head and lines after it), kept: the kept cache sharing
        the most leading blocks with them, copied and cropped to those, then extended by the
        other blocks one forward each. The caller copies it before generating from it."""
        torch = self._torch
        if blocks in self._prefixes:
            self._prefixes.move_to_end(blocks)
            return self._prefixes[blocks]
        best, n = None, 0
        for key, kept in self._prefixes.items():
            m = common_prefix_len([key, blocks])
            # a sliding-window layer cannot be cropped back exactly (Cache.is_croppable, transformers 5)
            if m > n and (m == len(key) or getattr(kept, "is_croppable", True)):
                best, n = key, m
        cache = None
        if best is not None:
            self._prefixes.move_to_end(best)
            cache = copy.deepcopy(self._prefixes[best])
            drop = sum(len(b) for b in best[n:])
            if drop:
                cache.crop(-drop)  # a negative count removes that many tokens on every version
        with torch.no_grad():
            for block in blocks[n:]:
                out = self.lm(torch.tensor([block], device=self.device), use_cache=True,
                              **{self._cache_arg: cache})
                cache = getattr(out, self._cache_arg)
                self.tokens_evaluated += len(block)
        self._prefixes[blocks] = cache  # only with prefix_reuse on: blocks are only cut then (_run)
        while len(self._prefixes) > MAX_PREFIXES:
            self._prefixes.popitem(last=False)
        return cache

    def _shared(self, prompts: list[tuple[list[int], list[int]]]) -> int:
        """Tokens of the longest block prefix every prompt of a batch shares (from the head on)."""
        ids, cuts = prompts[0]
        best = cuts[0]
        if self.reuse_scope == "trie":
            for c in cuts[1:]:
                if not all(c in other_cuts and other[:c] == ids[:c] for other, other_cuts in prompts[1:]):
                    break
                best = c
        return best

    def _generate_batch(self, blocks: tuple[tuple[int, ...], ...], rests: list[list[int]],
                        params: GenerationParams) -> list[str]:
        """Prompts sharing the leading `blocks` (none: nothing shared): a copy of their KV cache
        (_prefix_cache), then the rests padded on the left of the rest."""
        torch = self._torch
        kwargs = self._gen_kwargs(params)
        prefix = [t for block in blocks for t in block]
        width = max(len(r) for r in rests)
        ids = [prefix + [kwargs["pad_token_id"]] * (width - len(r)) + r for r in rests]
        mask = [[1] * len(prefix) + [0] * (width - len(r)) + [1] * len(r) for r in rests]
        x = torch.tensor(ids, device=self.device)
        if blocks:
            cache = copy.deepcopy(self._prefix_cache(blocks))
            if len(rests) > 1:
                cache.batch_repeat_interleave(len(rests))
            kwargs[self._cache_arg] = cache
        self.tokens_evaluated += sum(len(r) for r in rests)
        with torch.no_grad():
            out = self.lm.generate(x, attention_mask=torch.tensor(mask, device=self.device), **kwargs)
        return [cut_at_stop(self.tokenizer.decode(row[x.shape[1]:].tolist(), skip_special_tokens=True), params.stop)
                for row in out]

    def _run(self, prompts: list[tuple[list[int], list[int]]], params: GenerationParams) -> list[str]:
        if params.temperature > 0 or (self.batch_size == 1 and not self.prefix_reuse):
            return [self._generate(ids, params) for ids, _ in prompts]
        groups: dict[tuple[int, ...], list[int]] = {}
        for i, (ids, cuts) in enumerate(prompts):
            groups.setdefault(tuple(ids[:cuts[0]]) if self.prefix_reuse and cuts else (), []).append(i)
        out: list[str] = [""] * len(prompts)
        for head, members in groups.items():
            for start in range(0, len(members), self.batch_size):
                chunk = members[start:start + self.batch_size]
                end = self._shared([prompts[i] for i in chunk]) if head else 0
                ids, cuts = prompts[chunk[0]]
                bounds = [0] + [c for c in cuts if c <= end]
                blocks = tuple(tuple(ids[a:b]) for a, b in zip(bounds, bounds[1:]))
                texts = self._generate_batch(blocks, [prompts[i][0][end:] for i in chunk], params)
                for i, text in zip(chunk, texts):
                    out[i] = text
        return out

    def complete(self, prompts: Sequence[str], params: GenerationParams = GenerationParams()) -> list[str]:
        # without prefix reuse the head is never cut (_run), so it is not looked for
        encoded = [self._blocks(p, completion_head_end(p) if self.prefix_reuse else 0, special=True) for p in prompts]
        return self._run(encoded, params)

    def chat(self, conversations: Sequence[Sequence[Message]],
             params: GenerationParams = GenerationParams()) -> list[str]:
        if self.mode == "completion" or not getattr(self.tokenizer, "chat_template", None):
            raise InputError(f"transformers model {self.model!r} has no chat template; use ?mode=completion")
        encoded = []
        for messages in conversations:
            # enable_thinking: Qwen3-style templates skip the thinking block; other templates ignore it.
            text = self.tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False,
                                                      enable_thinking=False)
            head = chat_head(messages) if self.prefix_reuse else None
            head_text = self.tokenizer.apply_chat_template(head, tokenize=False, enable_thinking=False) if head else ""
            encoded.append(self._blocks(text, chat_head_end(text, head_text)))
        return self._run(encoded, params)

    def logprob(self, prompt: str, continuation: str) -> float:
        return self.logprobs([(prompt, continuation)])[0]

    def logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """`batch_size` pairs a forward (`continuation_logprobs`); an empty continuation scores 0."""
        seqs = [encode_pair(self.tokenizer, prompt, continuation) for prompt, continuation in pairs]
        if any(c and not p for p, c in seqs):  # a model with no BOS: the first token would be conditioned on nothing
            raise InputError("logprob needs a non-empty prompt for a tokenizer without a BOS token")
        scores = [0.0] * len(seqs)
        todo = [i for i, (_, c) in enumerate(seqs) if c]
        for start in range(0, len(todo), self.batch_size):
            chunk = todo[start:start + self.batch_size]
            with self._torch.no_grad():
                got = continuation_logprobs(self.lm, [seqs[i] for i in chunk]).tolist()
            for i, value in zip(chunk, got):
                scores[i] = value
        return scores

    def close(self) -> None:
        self._prefixes.clear()
        self.lm = None
