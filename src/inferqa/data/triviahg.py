"""TriviaHG JSON, both schemas.

Early (the public validation file): `ExactAnswer` a string, no `Convergence`.
Later: `ExactAnswer` a list (canonical first, then aliases), `Convergence` a list aligned
with `Hints`, `Candidates_Answers`. Hints carry `[^1^]` citation markers, removed on load.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..records import Question
from ._common import answers_field, check_unique, expect_list, get, make_hints, record_name, text_field


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and ("Q_ID" in obj or "ExactAnswer" in obj)


def parse(data: Any, file: Path) -> list[Question]:
    out = []
    for i, obj in enumerate(expect_list(data, file, "questions")):
        rec = record_name(i, obj, "Q_ID")
        qid = text_field(get(obj, "Q_ID", file=file, record=rec), file=file, record=rec, field="Q_ID")
        text = text_field(get(obj, "Question", file=file, record=rec), file=file, record=rec, field="Question")
        answers = answers_field(get(obj, "ExactAnswer", file=file, record=rec), file=file, record=rec,
                                field="ExactAnswer")
        hints = make_hints(get(obj, "Hints", file=file, record=rec), obj.get("Convergence"), None,
                           file=file, record=rec, field="Hints")
        popularity = obj.get("Exact_Answer_Popularity") or {}
        meta = {"type": obj.get("MajorType"), "minor_type": obj.get("MinorType"),
                "difficulty": popularity.get("Category") if isinstance(popularity, dict) else None,
                "candidates": obj.get("Candidates_Answers"), "source_format": "triviahg"}
        out.append(Question(id=qid, text=text, answers=answers, hints=hints,
                            metadata={k: v for k, v in meta.items() if v is not None}))
    check_unique(out, file)
    return out
