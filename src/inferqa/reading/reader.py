"""The reader: prompts an LLM with hints and a question, and cleans its reply (our cleaner,
inferqa.evaluation.exact_match.clean_answer_ours)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from ..evaluation.exact_match import clean_answer_ours
from ..llm.base import LLM, GenerationParams
from ..llm.heads import trie_order
from .prompts import COMPLETION_STOP, chat_messages, completion_prompt

MAX_NEW_TOKENS = 32


def reading_order(items: Sequence[tuple[str, Sequence[str]]]) -> list[int]:
    """Indices of (question, context lines) items in trie order: questions one after another
    (first seen first), each question's contexts depth-first over their lines, so a backend
    (or a server's prefix cache) keeping the longest shared prefix evaluates every hint prefix
    once (inferqa.llm.heads)."""
    first: dict[str, int] = {}
    for q, _ in items:
        first.setdefault(q, len(first))
    return trie_order(items, key=lambda it: (first[it[0]], tuple(it[1])))


@dataclass(frozen=True)
class ReaderOutput:
    raw: str
    answer: str


class Reader:
    """Few-shot reader over any backend; chat template when the backend has one, else completion."""

    def __init__(self, llm: LLM, mode: str | None = None, max_new_tokens: int = MAX_NEW_TOKENS):
        self.llm = llm
        self.mode = mode or getattr(llm, "mode", "chat")
        self.max_new_tokens = max_new_tokens

    def read_batch(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[ReaderOutput]:
        """items: (question, context lines) pairs; one backend batch for all of them."""
        if not items:
            return []
        if self.mode == "completion":
            params = GenerationParams(max_tokens=self.max_new_tokens, stop=COMPLETION_STOP)
            raws = self.llm.complete([completion_prompt(q, ctx) for q, ctx in items], params)
        else:
            params = GenerationParams(max_tokens=self.max_new_tokens)
            raws = self.llm.chat([chat_messages(q, ctx) for q, ctx in items], params)
        return [ReaderOutput(raw, clean_answer_ours(raw)) for raw in raws]
