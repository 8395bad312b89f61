"""The answer judges (`answer-judge` plugins) that decide whether an answer is correct:
`exact-match`, or `llm`, a GPT-Eval style vote of an LLM (not to be confused with the leak
judges of inferqa.construct, which decide whether a hint gives its answer away). EM, F1 and
containment themselves live in inferqa.evaluate.exact_match."""

from __future__ import annotations

import re
from typing import Any, Sequence

from ..defaults import DEFAULT_LLM
from ..evaluate.exact_match import exact_match, is_abstention
from ..llm.base import LLM
from ..registry import Option, plugin
from ..stage_options import JUDGE_SAMPLES, JUDGE_TEMPERATURE


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


@plugin("answer-judge", "exact-match")
class ExactMatchAnswerJudge:
    """Correct when the answer equals a gold alias after SQuAD normalisation."""

    identity = "exact_match"

    def correct(self, question: str, pred: str, golds: Sequence[str]) -> bool:
        return exact_match(pred, golds)


@plugin("answer-judge", "llm",
        Option("llm", (str, LLM), DEFAULT_LLM, "LLM spec or instance that votes"),
        JUDGE_SAMPLES, JUDGE_TEMPERATURE)
class LLMAnswerJudge:
    """GPT-Eval style: majority vote of `samples` yes/no judgements (one at temperature 0).

    Samples differ by seed, so each has its own cache entry. Unparseable replies count as no.
    An exact match needs no vote; an abstention is never correct.
    """

    def __init__(self, *, llm: Any, samples: int, temperature: float):
        """Settings resolved by the registry (`answer_judge("llm", ...)`), which holds the defaults."""
        if isinstance(llm, str):
            from ..llm import load_llm

            llm = load_llm(llm)
        self.llm, self.samples, self.temperature = llm, samples, temperature

    @property
    def identity(self) -> str:
        return self.llm.identity

    def correct(self, question: str, pred: str, golds: Sequence[str]) -> bool:
        from ..llm.base import GenerationParams

        if is_abstention(pred):
            return False
        if exact_match(pred, golds):
            return True
        n = 1 if self.temperature == 0 else self.samples
        conv = judge_prompts(question, pred, golds)
        votes = 0
        for seed in range(n):
            params = GenerationParams(max_tokens=4, temperature=self.temperature, seed=seed if n > 1 else None)
            if getattr(self.llm, "mode", "chat") == "chat":
                reply = self.llm.chat([conv], params)[0]
            else:
                reply = self.llm.complete([conv[0]["content"] + "\n\n" + conv[1]["content"] + "\nReply:"], params)[0]
            m = _YES.match(reply)
            votes += bool(m and m.group(1).lower() == "yes")
        return votes * 2 > n


def answer_judge(name: str = "exact-match", **options: Any) -> Any:
    """The answer judge NAME with checked options: `.correct(question, answer, golds)`."""
    from .. import registry

    return registry.create("answer-judge", name, **options)
