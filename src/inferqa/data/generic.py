"""The documented generic formats for users' own data (docs/build.md#data-formats).

JSONL, one object per line:
  {"id": str, "question": str, "answers": [canonical, alias, ...] or one string,
   "hints": [{"text": str, "convergence": float?, "source": str?} or plain strings],
   "metadata": {...}?}
A JSON array of such objects is read the same way.

CSV with a header row: `id`, `question`, `answers` (aliases separated by `|`),
`hint_1` ... `hint_N`, optionally `convergence_1` ... `convergence_N`; every other
column goes into metadata. Empty hint cells are skipped. A `.tsv` file is read the same
way with tabs between cells.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Iterable

from ..errors import InputError
from ..io import inner_suffix, read_csv
from ..records import Hint, Question
from ._common import answers_field, check_unique, convergence_field, get, text_field

ALIAS_SEPARATOR = "|"
_HINT_COL = re.compile(r"^hint_(\d+)$")


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and isinstance(obj.get("question"), str) and ("answers" in obj or "hints" in obj)


def parse_record(obj: Any, file: Path, rec: str) -> Question:
    qid = text_field(get(obj, "id", file=file, record=rec), file=file, record=rec, field="id")
    text = text_field(get(obj, "question", file=file, record=rec), file=file, record=rec, field="question")
    answers = answers_field(get(obj, "answers", file=file, record=rec), file=file, record=rec, field="answers")
    raw = get(obj, "hints", file=file, record=rec)
    if not isinstance(raw, list):
        raise InputError("expected a list of hints", file=file, record=rec, field="hints")
    hints = []
    for j, h in enumerate(raw):
        f = f"hints[{j}]"
        if isinstance(h, str):
            h = {"text": h}
        h_text = get(h, "text", file=file, record=rec, field=f"{f}.text")
        if isinstance(h_text, str) and not h_text.strip():
            continue
        conv = convergence_field(h.get("convergence"), file=file, record=rec, field=f"{f}.convergence")
        src = h.get("source")
        hints.append(Hint(text=text_field(h_text, file=file, record=rec, field=f"{f}.text"), convergence=conv,
                          source=str(src) if src is not None else None))
    meta = obj.get("metadata") or {}
    if not isinstance(meta, dict):
        raise InputError("metadata must be an object", file=file, record=rec, field="metadata")
    return Question(id=qid, text=text, answers=answers, hints=hints, metadata=dict(meta))


def parse_records(records: Iterable[tuple[object, Any]], file: Path) -> list[Question]:
    """The questions of (record name, object) pairs: a JSONL file's lines, a JSON array's items, CSV rows."""
    out = [parse_record(obj, file, str(rec)) for rec, obj in records]
    check_unique(out, file)
    return out


def parse_csv(file: Path) -> list[Question]:
    header, numbered = read_csv(file, delimiter="\t" if inner_suffix(file) == ".tsv" else ",")
    if not numbered:
        raise InputError("no questions in file (a header row and one row per question expected)", file=file)
    for col in ("id", "question", "answers"):
        if col not in header:
            raise InputError("missing column", file=file, record="header", field=col)
    hint_cols = sorted((int(m.group(1)), c) for c in header if (m := _HINT_COL.match(c)))
    if not hint_cols:
        raise InputError("no hint_1 ... hint_N columns", file=file, record="header", field="hint_1")
    out = []
    for n_row, row in ((n - 1, row) for n, row in numbered):  # row 1: the first question
        hints = []
        for n, col in hint_cols:
            cell = (row.get(col) or "").strip()
            if cell:
                hints.append({"text": cell, "convergence": row.get(f"convergence_{n}") or None})
        used = {"id", "question", "answers"} | {c for _, c in hint_cols} | {f"convergence_{n}" for n, _ in hint_cols}
        meta = {k: v for k, v in row.items() if k not in used and v not in (None, "")}
        out.append((f"row {n_row}", {"id": row.get("id"), "question": row.get("question"), "hints": hints,
                                     "answers": (row.get("answers") or "").split(ALIAS_SEPARATOR), "metadata": meta}))
    return parse_records(out, file)
