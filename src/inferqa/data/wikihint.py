"""WikiHint JSON: a list of {id, question: {question, question_type, difficulty}, answer: {answer},
hints: [{hint, source, rank, metrics: {convergence, ...}}]}."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records import Hint, Question
from ._common import answers_field, check_unique, convergence_field, expect_list, get, record_name, text_field


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("question"), dict)


def parse(data: Any, file: Path) -> list[Question]:
    out = []
    for i, obj in enumerate(expect_list(data, file, "questions")):
        rec = record_name(i, obj)
        qid = text_field(get(obj, "id", file=file, record=rec), file=file, record=rec, field="id")
        q = get(obj, "question", file=file, record=rec)
        text = text_field(get(q, "question", file=file, record=rec, field="question.question"),
                          file=file, record=rec, field="question.question")
        a = get(obj, "answer", file=file, record=rec)
        answers = answers_field(get(a, "answer", file=file, record=rec, field="answer.answer"),
                                file=file, record=rec, field="answer.answer")
        raw_hints = get(obj, "hints", file=file, record=rec)
        hints = []
        for j, h in enumerate(raw_hints if isinstance(raw_hints, list) else [None]):
            f = f"hints[{j}]"
            h_text = get(h, "hint", file=file, record=rec, field=f"{f}.hint")
            if not isinstance(h_text, str) or not h_text.strip():
                continue
            metrics = h.get("metrics") or {}
            conv = convergence_field(metrics.get("convergence"), file=file, record=rec, field=f"{f}.metrics.convergence")
            hints.append(Hint(text=text_field(h_text, file=file, record=rec, field=f"{f}.hint"),
                              convergence=conv, source=h.get("source")))
        qtype = q.get("question_type") or {}
        meta = {"type": qtype.get("major"), "minor_type": qtype.get("minor"),
                "difficulty": q.get("difficulty"), "source_format": "wikihint"}
        out.append(Question(id=qid, text=text, answers=answers, hints=hints,
                            metadata={k: v for k, v in meta.items() if v is not None}))
    check_unique(out, file)
    return out
