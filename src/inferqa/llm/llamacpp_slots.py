"""Greedy answers of several prompts decoded together on llama.cpp, one KV sequence each
(docs/read.md, *Answers decoded together*; the default is 1, as on the project's CPU it did not pay).

The context holds `parallel + 1` sequences, each in its own KV stream (`kv_unified=False`).
Sequence 0 holds the block prefix (`BlockPrefix`); a prompt takes a free slot, whose
sequence gets a copy of sequence 0, then evaluates its tail and decodes beside the other
slots. With one slot, sequence 0 is the slot, in the Llama's own context (`shares_context`),
so the KV cache is held once. Each stream lays its cells out in position order, as a
context of one sequence does, so every logit is bit for bit the one such a context gives
(tests/test_llm_llamacpp.py). A unified cache does not keep that without flash attention:
its softmax runs over every sequence's cells.
"""

from __future__ import annotations

import ctypes
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .heads import common_prefix_len

MAX_SNAPSHOTS = 4  # head states kept (LRU); deeper blocks are reached by rewinding the context


class BlockPrefix:
    """The blocks whose KV entries fill one sequence from position 0 (each evaluated as one
    chunk), a small LRU of head snapshots, and the one way a prompt's blocks are entered.
    `evaluate(tokens, pos)` computes a block's KV entries; `rewind(pos)` drops every entry
    from `pos` on; `save()`/`load(state)` copy the sequence's state."""

    def __init__(self, evaluate: Callable[[Sequence[int], int], None], rewind: Callable[[int], None],
                 save: Callable[[], Any], load: Callable[[Any], None], reuse: bool, scope: str):
        self.evaluate, self.rewind, self.save, self.load = evaluate, rewind, save, load
        self.reuse, self.scope = reuse, scope
        self.blocks: list[tuple[int, ...]] = []
        self.snapshots: OrderedDict[tuple[int, ...], Any] = OrderedDict()  # head block -> state

    def enter(self, blocks: list[tuple[int, ...]]) -> int:
        """Leave exactly `blocks` in the sequence, evaluating only what no kept state holds;
        returns the number of tokens evaluated."""
        keep = 0
        if self.reuse:
            most = len(blocks) if self.scope == "trie" else min(1, len(blocks))
            keep = common_prefix_len([self.blocks, blocks[:most]])
            state = self.snapshots.get(blocks[0]) if blocks and keep == 0 else None
            if state is not None:
                self.snapshots.move_to_end(blocks[0])
                self.load(state)
                self.blocks, keep = [blocks[0]], 1
        start = pos = sum(len(b) for b in blocks[:keep])
        del self.blocks[keep:]
        self.rewind(pos)
        for i in range(keep, len(blocks)):
            self.evaluate(blocks[i], pos)
            pos += len(blocks[i])
            self.blocks.append(blocks[i])
            if i == 0 and self.reuse:
                self.snapshots[blocks[0]] = self.save()
                while len(self.snapshots) > MAX_SNAPSHOTS:
                    self.snapshots.popitem(last=False)
        return pos - start

    def clear(self) -> None:
        self.blocks, self.snapshots = [], OrderedDict()


@dataclass
class Completion:
    """A greedy answer growing token by token, ended as `Llama.create_completion` ends it:
    at an end-of-generation token (not kept), at the first stop string found (in the order
    the stops are listed; the text is cut before it), or at `max_tokens`; a token that
    leaves a UTF-8 character unfinished defers both checks until the character is whole."""

    detokenize: Callable[[list[int]], bytes]
    stops: list[bytes]
    max_tokens: int
    tokens: list[int] = field(default_factory=list)
    text: bytes | None = None  # set when finished
    _unfinished: int = 0

    def push(self, token: int, end_of_generation: bool) -> bool:
        """Adds a token; True when the answer is finished (then `text` is set)."""
        if end_of_generation:
            self.text = self.detokenize(self.tokens)
            return True
        self.tokens.append(token)
        text = self.detokenize(self.tokens)
        for i, byte in enumerate(text[-3:]):
            left = 3 - i  # bytes from this one to the end, counted as if the text had 3 or more
            for width, lead in ((2, 0xC0), (3, 0xE0), (4, 0xF0)):
                if width > left and byte & lead == lead:
                    self._unfinished = width - left
        if self._unfinished > 0:
            self._unfinished -= 1
            return False
        found = next((s for s in self.stops if s in text), None)
        if found is not None:
            self.text = text[:text.index(found)]
        elif len(self.tokens) >= self.max_tokens:
            self.text = text
        return self.text is not None

    def answer(self) -> str:
        return (self.text or b"").decode("utf-8", errors="ignore")


class SlotDecoder:
    """`slots + 1` KV streams in a llama.cpp context of their own over a loaded `Llama`'s
    weights, or with one slot a single sequence of the Llama's own context whose tail and
    answer follow its blocks (no copy), rewound by the next prompt's `enter`. A caller that
    shares the context uses it in between, so it voids `prefix.blocks` when it does."""

    def __init__(self, llama: Any, slots: int, n_ctx: int, reuse: bool, scope: str):
        import llama_cpp as L

        self._L, self._llama, self.slots = L, llama, int(slots)
        self.shares_context = self.slots == 1
        if self.shares_context:
            self.ctx = llama.ctx
            self.n_batch = int(llama.context_params.n_batch)
        else:
            params = L.llama_context_params()
            ctypes.pointer(params)[0] = llama.context_params  # the same settings as the Llama's own context
            params.n_seq_max = self.slots + 1
            params.kv_unified = False
            params.n_ctx = int(n_ctx) * (self.slots + 1)  # a stream gets n_ctx / n_seq_max cells
            params.n_batch = params.n_ubatch = max(int(params.n_batch), self.slots)
            self.n_batch = int(params.n_batch)
            self.ctx = L.llama_init_from_model(llama.model, params)
            if not self.ctx:
                raise RuntimeError(f"llama.cpp could not create a context of {self.slots + 1} sequences")
        self._mem = L.llama_get_memory(self.ctx)
        self._batch = L.llama_batch_init(self.n_batch, 0, 1)
        self._vocab = llama._model.vocab
        self._n_vocab = L.llama_vocab_n_tokens(self._vocab)
        self.prefix = BlockPrefix(lambda tokens, pos: self._decode(tokens, pos, 0, False),
                                  lambda pos: L.llama_memory_seq_rm(self._mem, 0, pos, -1),
                                  self._save, self._load, reuse, scope)

    def _save(self) -> bytes:
        L = self._L
        size = L.llama_state_seq_get_size(self.ctx, 0)
        buf = (ctypes.c_uint8 * size)()
        n = L.llama_state_seq_get_data(self.ctx, buf, size, 0)
        return ctypes.string_at(buf, n)  # bytes(buf[:n]) would build a list of ints first: 60x slower

    def _load(self, state: bytes) -> None:
        L = self._L
        L.llama_memory_seq_rm(self._mem, 0, -1, -1)
        buf = (ctypes.c_uint8 * len(state)).from_buffer_copy(state)
        if L.llama_state_seq_set_data(self.ctx, buf, len(state), 0) != len(state):
            raise RuntimeError("llama.cpp could not restore a kept head state")

    def _run(self, items: Sequence[tuple[int, int, int]], logits: Sequence[bool]) -> None:
        """One llama_decode of at most n_batch (token, position, sequence) items."""
        b = self._batch
        b.n_tokens = len(items)
        for i, ((tok, pos, seq), want) in enumerate(zip(items, logits)):
            b.token[i], b.pos[i], b.n_seq_id[i], b.logits[i] = tok, pos, 1, want
            b.seq_id[i][0] = seq
        if self._L.llama_decode(self.ctx, b) != 0:
            raise RuntimeError("llama_decode failed (context full?)")

    def _decode(self, tokens: Sequence[int], pos: int, seq: int, last_logits: bool) -> None:
        """Prompt tokens from position `pos` of sequence `seq` in chunks of n_batch; logits only
        for the last token (last_logits) or none, since a block's end predicts nothing we read."""
        items = [(t, pos + j, seq) for j, t in enumerate(tokens)]
        for start in range(0, len(items), self.n_batch):
            chunk = items[start:start + self.n_batch]
            last = last_logits and start + len(chunk) == len(items)
            self._run(chunk, [False] * (len(chunk) - 1) + [last])

    def _step(self, items: Sequence[tuple[int, int, int]]) -> None:
        """One decoding step, one token per active slot, logits for every item."""
        self._run(items, [True] * len(items))

    def _argmax(self, i: int) -> int:
        import numpy as np

        return int(np.ctypeslib.as_array(self._L.llama_get_logits_ith(self.ctx, i), shape=(self._n_vocab,)).argmax())

    def generate(self, prompts: Sequence[tuple[list[int], list[tuple[int, ...]]]], stops: Sequence[list[str]],
                 max_tokens: int) -> tuple[list[str], int]:
        """Greedy answers of (tokens, blocks) prompts, entered in the order given; returns
        the answers and the prompt tokens evaluated."""
        L = self._L
        detok = lambda toks: self._llama._model.detokenize(toks, special=False)  # noqa: E731
        answers: list[str] = [""] * len(prompts)
        waiting = deque(range(len(prompts)))
        free = [0] if self.shares_context else list(range(self.slots, 0, -1))  # the one slot is sequence 0 itself
        active: dict[int, tuple[int, Completion, int]] = {}  # slot -> (prompt index, completion, next position)
        evaluated = 0

        def push(slot: int, i: int, done: Completion, row: int, pos: int) -> None:
            """The token at logits `row` to prompt `i`'s answer; a finished answer frees its slot."""
            tok = self._argmax(row)
            if done.push(tok, bool(L.llama_vocab_is_eog(self._vocab, tok))):
                answers[i] = done.answer()
                active.pop(slot, None)
                free.append(slot)
            else:
                active[slot] = (i, done, pos)

        while waiting or active:
            while waiting and free:  # a free slot takes the next prompt: copy the blocks, evaluate the tail
                i = waiting.popleft()
                tokens, blocks = prompts[i]
                evaluated += self.prefix.enter(blocks)
                pos = sum(len(b) for b in blocks)
                slot = free.pop()
                if not self.shares_context:
                    L.llama_memory_seq_rm(self._mem, slot, -1, -1)
                    if pos:
                        L.llama_memory_seq_cp(self._mem, 0, slot, -1, -1)
                self._decode(tokens[pos:], pos, slot, True)
                evaluated += len(tokens) - pos
                push(slot, i, Completion(detok, [s.encode("utf-8") for s in stops[i]], max_tokens), -1, len(tokens))
            if not active:
                continue
            order = sorted(active)
            self._step([(active[s][1].tokens[-1], active[s][2], s) for s in order])
            for row, slot in enumerate(order):
                i, done, pos = active[slot]
                push(slot, i, done, row, pos + 1)
        for slot in ([] if self.shares_context else range(1, self.slots + 1)):
            L.llama_memory_seq_rm(self._mem, slot, -1, -1)
        return answers, evaluated

    def close(self) -> None:
        if getattr(self, "ctx", None):
            self._L.llama_batch_free(self._batch)
            if not self.shares_context:
                self._L.llama_free(self.ctx)
            self.ctx = None
        self.prefix.clear()
