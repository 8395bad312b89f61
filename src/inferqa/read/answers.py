"""Answer scoring: EM, token F1 and containment against every gold alias, plus an LLM judge."""

from __future__ import annotations

import re
from collections import Counter
from typing import TYPE_CHECKING, Sequence

from ..text import normalize_answer
from .prompts import NO_ANSWER

if TYPE_CHECKING:
    from ..llm.base import LLM


def _is_abstention(pred: str) -> bool:
    return pred.strip().upper() == NO_ANSWER or not normalize_answer(pred)


def exact_match(pred: str, golds: Sequence[str]) -> bool:
    """SQuAD-style EM: equal after normalisation to any gold answer. Abstentions never match."""
    if _is_abstention(pred):
        return False
    p = normalize_answer(pred)
    return any(p == normalize_answer(g) for g in golds)


def _f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1(pred: str, golds: Sequence[str]) -> float:
    """SQuAD token F1, best over the gold answers."""
    if _is_abstention(pred):
        return 0.0
    p = normalize_answer(pred).split()
    return max((_f1(p, normalize_answer(g).split()) for g in golds if normalize_answer(g)), default=0.0)


def contains(pred: str, golds: Sequence[str]) -> bool:
    """A normalised gold answer occurs in the normalised prediction as whole words."""
    if _is_abstention(pred):
        return False
    p = f" {normalize_answer(pred)} "
    return any(g and f" {g} " in p for g in (normalize_answer(x) for x in golds))


JUDGE_PROMPT = (
    "Question: {question}\n"
    "Correct answers: {golds}\n"
    "Proposed answer: {pred}\n"
    "Does the proposed answer mean the same as any of the correct answers? Reply yes or no."
)
_YES = re.compile(r"^\W*(yes|no)\b", re.IGNORECASE)


def judge_prompts(question: str, pred: str, golds: Sequence[str]) -> list[dict]:
    text = JUDGE_PROMPT.format(question=question, golds="; ".join(golds), pred=pred)
    return [{"role": "system", "content": "You check answers to quiz questions. Reply with yes or no only."},
            {"role": "user", "content": text}]


def llm_judge(llm: "LLM", question: str, pred: str, golds: Sequence[str], samples: int = 3,
              temperature: float = 0.7) -> bool:
    """GPT-Eval style: majority vote of `samples` yes/no judgements (one at temperature 0).

    Samples differ by seed, so each has its own cache entry. Unparseable replies count as no.
    """
    from ..llm.base import GenerationParams

    if _is_abstention(pred):
        return False
    if exact_match(pred, golds):
        return True
    n = 1 if temperature == 0 else samples
    conv = judge_prompts(question, pred, golds)
    votes = 0
    for seed in range(n):
        params = GenerationParams(max_tokens=4, temperature=temperature, seed=seed if n > 1 else None)
        reply = llm.chat([conv], params)[0] if getattr(llm, "mode", "chat") == "chat" else \
            llm.complete([conv[0]["content"] + "\n\n" + conv[1]["content"] + "\nReply:"], params)[0]
        m = _YES.match(reply)
        votes += bool(m and m.group(1).lower() == "yes")
    return votes * 2 > n
