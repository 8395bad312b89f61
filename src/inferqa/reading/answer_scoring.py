"""Scoring the rows of an answers file, and the `answer-judge` plugins that decide whether an answer
is correct: `exact-match`, or `llm`, a GPT-Eval style vote (not inferqa.construct's leak judges)."""

from __future__ import annotations

import re
from typing import Any, Sequence

from ..defaults import DEFAULT_LLM
from ..errors import InputError
from ..evaluation.exact_match import exact_match, is_abstention, paper_exact_match, score_row
from ..evaluation.metrics import check_protocol  # EM: normalised (ours), or the authors' cleaning + exact match
from ..llm.base import LLM
from ..registry import Option, plugin
from ..parameters import JUDGE_SAMPLES, JUDGE_TEMPERATURE, PROTOCOL

JUDGE_PROMPT = (
    "Question: {question}\n"
    "Correct answers: {golds}\n"
    "Proposed answer: {pred}\n"
    "Does the proposed answer mean the same as any of the correct answers? Reply yes or no."
)
METRICS = ("em", "f1", "contains")
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


def score_answers(rows: list[dict[str, Any]], judge: "LLM | None" = None, *,
                  judge_samples: int = JUDGE_SAMPLES.default,
                  judge_temperature: float = JUDGE_TEMPERATURE.default, protocol: str = PROTOCOL.default) -> tuple[str, ...]:
    """Add em, f1, contains (and `judge`, the LLM judge's verdict) to every row, in place;
    returns the metric names set. `protocol="paper"`: EM as the QUIT authors compute it, exact
    membership of the answer in the golds, where the answer is a row's raw generation (`raw`,
    as `read_with_llm` keeps it) cleaned by `clean_answer_paper`, else its prediction as
    stored (an authors' reader output holds answers they cleaned already)."""
    check_protocol(protocol)
    if judge is not None and any(not isinstance(r.get("question"), str) for r in rows):
        raise InputError("the LLM judge reads the question: give --bench", field="judge")
    judged = (answer_judge("llm", llm=judge, samples=judge_samples, temperature=judge_temperature)
              if judge is not None else None)
    for row in rows:
        pred, golds = row["prediction"], row["golds"]
        row.update(score_row(pred, golds))
        if protocol == "paper":
            raw = row.get("raw")
            row["em"] = float(paper_exact_match(raw, golds) if isinstance(raw, str) else pred in golds)
        if judged is not None:
            row["judge"] = float(judged.correct(row["question"], pred, golds))
    return METRICS + (("judge",) if judge is not None else ())
