"""Convergence of hints, HintEval-style, for sources that lack it.

A hint converges when it narrows the candidate answers down: its convergence is the share
of wrong candidates it rules out (0 when it rules out the gold answer itself).
Candidates come from the question's `metadata["candidates"]` when the source has them,
else the model proposes them. Each (hint, candidate) pair is one yes/no question.
"""

from __future__ import annotations

import re
from dataclasses import replace
from typing import TYPE_CHECKING, Sequence

from ..llm.base import GenerationParams
from ..evaluation.exact_match import NO_ANSWER, clean_answer_ours, exact_match
from ..records import Hint, Question

if TYPE_CHECKING:
    from ..llm.base import LLM

_NO = re.compile(r"^\W*no\b", re.IGNORECASE)


def _ask(llm: "LLM", prompts: list[str], max_tokens: int) -> list[str]:
    params = GenerationParams(max_tokens=max_tokens)
    if getattr(llm, "mode", "chat") == "completion":
        return llm.complete([p + "\nReply:" for p in prompts], params)
    return llm.chat([[{"role": "user", "content": p}] for p in prompts], params)


def propose_candidates(llm: "LLM", question: Question, n: int = 5) -> list[str]:
    """Up to `n` distinct plausible answers from the model, gold answers excluded."""
    prompt = (f"Question: {question.text}\nList {n} different plausible short answers to this question, "
              "one per line, with no numbering and no explanation.")
    raw = _ask(llm, [prompt], 16 * n)[0]
    out: list[str] = []
    for line in raw.splitlines():
        cand = clean_answer_ours(re.sub(r"^\s*(?:\d+[.)]|[-*•])\s*", "", line))
        if cand != NO_ANSWER and not exact_match(cand, question.answers) and \
                not any(exact_match(cand, [c]) for c in out):
            out.append(cand)
    return out[:n]


def consistent(llm: "LLM", pairs: Sequence[tuple[str, str]]) -> list[bool]:
    """For each (hint, candidate): could the hint be true of the candidate? Unclear replies: yes."""
    prompts = [f"Hint: {h}\nCandidate answer: {c}\nCould this hint be true of this candidate answer? "
               "Reply yes or no." for h, c in pairs]
    return [not _NO.match(reply) for reply in _ask(llm, prompts, 3)]


def hint_convergence(llm: "LLM", question: Question, candidates: Sequence[str]) -> list[float | None]:
    """Convergence of each hint of `question` against `candidates` (wrong answers); None if none."""
    if not candidates:
        return [None] * len(question.hints)
    judged = [question.answers[0], *candidates]  # the gold answer first
    verdicts = consistent(llm, [(h.text, c) for h in question.hints for c in judged])
    rows = [verdicts[i:i + len(judged)] for i in range(0, len(verdicts), len(judged))]
    # a hint that rules out the gold answer (row[0]) misleads: 0
    return [sum(not ok for ok in row[1:]) / len(candidates) if row[0] else 0.0 for row in rows]


def fill_convergence(questions: Sequence[Question], llm: "LLM", n_candidates: int = 5,
                     progress: bool = True) -> list[Question]:
    """Questions whose hints all have a convergence stay as they are; the others get it computed."""
    from ..progress import track

    out = []
    for q in track(list(questions), f"convergence with {llm.identity}", progress):
        if q.hints and all(h.convergence is not None for h in q.hints):
            out.append(q)
            continue
        given = q.metadata.get("candidates") or []
        given = [given] if isinstance(given, str) else given
        cands = [str(c) for c in given if str(c).strip()] or propose_candidates(llm, q, n_candidates)
        cands = [c for c in cands if not exact_match(c, q.answers)]
        values = hint_convergence(llm, q, cands)
        hints = [h if h.convergence is not None else Hint(h.text, v, h.source) for h, v in zip(q.hints, values)]
        out.append(replace(q, hints=hints, metadata={**q.metadata, "convergence_by": llm.identity,
                                                     "convergence_candidates": cands}))
    return out
