"""The review sheet's rows, built from the candidates; the sheet file itself (CSV or JSONL,
its columns and verdict words) is read and written by `inferqa.formats.sheets`."""

from __future__ import annotations

from typing import Iterable, Iterator

from ..formats.sheets import GOLD_SEPARATOR
from .candidates import Candidate


def sheet_rows(cands: Iterable[Candidate], question_text: dict[str, str],
               gold: dict[str, list[str]]) -> Iterator[dict[str, object]]:
    """One sheet row per candidate answer (`inferqa.formats.sheets.COLUMNS`), its verdict left blank."""
    for c in cands:
        yield {"qid": c.qid, "question": question_text.get(c.qid, ""),
               "gold_answers": GOLD_SEPARATOR.join(gold.get(c.qid, [])), "answer": c.answer,
               "judge": c.judge, "reason": c.reason, "passages": len(c.passages), "decides": len(c.decides),
               "previous_verdict": c.previous, "verdict": ""}
