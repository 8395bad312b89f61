"""The reader: prompts an LLM with hints and a question, and cleans its reply."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence

from ..llm.base import LLM, GenerationParams
from .prompts import COMPLETION_STOP, NO_ANSWER, chat_messages, completion_prompt

MAX_NEW_TOKENS = 32
MAX_ANSWER_WORDS = 10  # longer replies are sentences, not short exact answers

_LABEL = re.compile(r"^\s*(?:final\s+)?(?:answer|a)\s*[:\-]\s*", re.IGNORECASE)
_THE_ANSWER_IS = re.compile(r"^(?:so\s+|therefore\s+)?(?:the\s+(?:correct\s+)?answer\s+is\s*:?|(?:it|this|that)"
                            r"(?:'s|\s+is|\s+was))\s+(.+)$", re.IGNORECASE)
_REFUSAL = re.compile(
    r"\b(no answer|not enough|cannot|can't|can not|unable to|don't know|do not know|not sure|"
    r"insufficient|sorry|not possible|no idea|not provided|not mentioned)\b", re.IGNORECASE)
_BARE_REFUSAL = {"unknown", "none", "n/a", "?", "idk"}
_WRAP = "\"'`“”‘’«»[](){}<>*_ "
_SENTENCE_END = ".!?"


def clean_answer(raw: str) -> str:
    """Last non-empty line, without labels, brackets or quotes; refusals and sentences → NO ANSWER."""
    lines = [ln.strip() for ln in raw.splitlines() if ln.strip()]
    if not lines:
        return NO_ANSWER
    text = _LABEL.sub("", lines[-1]).strip()
    m = _THE_ANSWER_IS.match(text)
    if m:
        text = m.group(1)
    text = text.strip(_WRAP).rstrip(_SENTENCE_END + ",;:").strip(_WRAP)
    if not text or _REFUSAL.search(text) or text.lower() in _BARE_REFUSAL:
        return NO_ANSWER
    words = text.split()
    if len(words) > MAX_ANSWER_WORDS or (len(words) >= 6 and lines[-1].rstrip(_WRAP)[-1:] in _SENTENCE_END):
        return NO_ANSWER
    return text


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
        return [ReaderOutput(raw, clean_answer(raw)) for raw in raws]

    def answer(self, question_text: str, hints: Sequence[str]) -> str:
        return self.read_batch([(question_text, hints)])[0].answer

    def answer_batch(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
        return [o.answer for o in self.read_batch(items)]
