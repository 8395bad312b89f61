"""Validation helpers shared by the source readers: every problem becomes a located InputError."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..errors import InputError
from ..records import Hint, Question
from ..text import clean_text, normalize_answer


def record_name(index: int, obj: Any, id_key: str = "id") -> str:
    """`3` or `3 (id q7)`: the record's position, with its id when it has a usable one."""
    if isinstance(obj, dict) and isinstance(obj.get(id_key), (str, int)) and str(obj[id_key]).strip():
        return f"{index} (id {obj[id_key]})"
    return str(index)


def get(obj: Any, key: str, *, file: Path, record: str, field: str | None = None) -> Any:
    """`obj[key]`, or an InputError naming file, record and field."""
    if not isinstance(obj, dict):
        raise InputError(f"expected a JSON object, got {type(obj).__name__}", file=file, record=record,
                         field=field.rsplit(".", 1)[0] if field and "." in field else None)
    if key not in obj or obj[key] is None:
        raise InputError("missing field", file=file, record=record, field=field or key)
    return obj[key]


def text_field(value: Any, *, file: Path, record: str, field: str, verbatim: bool = False) -> str:
    """The text, cleaned (`clean_text`), or with `verbatim` as written; blank is an error."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise InputError(f"expected a string, got {type(value).__name__}", file=file, record=record, field=field)
    text = str(value) if verbatim else clean_text(str(value))
    if not text.strip():
        raise InputError("empty text", file=file, record=record, field=field)
    return text


def answers_field(value: Any, *, file: Path, record: str, field: str, verbatim: bool = False) -> list[str]:
    """One answer string or a list of them (canonical first, then aliases), cleaned and de-duplicated
    (with `verbatim`, kept as written: only exact repeats and blank strings go)."""
    items = [value] if isinstance(value, (str, int, float)) and not isinstance(value, bool) else value
    if not isinstance(items, list):
        raise InputError("expected a string or a list of strings", file=file, record=record, field=field)
    out: list[str] = []
    for i, a in enumerate(items):
        if not isinstance(a, (str, int, float)) or isinstance(a, bool):
            raise InputError(f"answer {i} is not a string", file=file, record=record, field=field)
        a = str(a) if verbatim else clean_text(str(a))
        if (a.strip() if verbatim else normalize_answer(a)) and a not in out:
            out.append(a)
    if not out:
        raise InputError("empty answer", file=file, record=record, field=field)
    return out


def convergence_field(value: Any, *, file: Path, record: str, field: str) -> float | None:
    if value is None or value == "":
        return None
    try:
        c = float(value)
    except (TypeError, ValueError):
        raise InputError(f"convergence {value!r} is not a number", file=file, record=record, field=field) from None
    if math.isnan(c):
        raise InputError("convergence is NaN", file=file, record=record, field=field)
    return c


def make_hints(texts: Sequence[Any], convergences: Sequence[Any] | None, sources: Sequence[Any] | None,
               *, file: Path, record: str, field: str) -> list[Hint]:
    """Hints in source order; blank hints (after cleaning) are dropped, they cannot be clues."""
    if not isinstance(texts, list):
        raise InputError("expected a list of hints", file=file, record=record, field=field)
    for name, aligned in (("convergence", convergences), ("source", sources)):
        if aligned is not None and (not isinstance(aligned, list) or len(aligned) != len(texts)):
            raise InputError(f"{name} list is not aligned with the {len(texts)} hints", file=file,
                             record=record, field=name)
    hints = []
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise InputError(f"hint {i} is not a string", file=file, record=record, field=field)
        text = clean_text(t)
        if not text:
            continue
        conv = convergence_field(convergences[i], file=file, record=record, field=f"{field}[{i}].convergence") \
            if convergences is not None else None
        src = sources[i] if sources is not None else None
        hints.append(Hint(text=text, convergence=conv, source=str(src) if src is not None else None))
    return hints


def check_unique(questions: Iterable[Question], file: Path) -> None:
    seen: set[str] = set()
    for q in questions:
        if q.id in seen:
            raise InputError(f"duplicate question id {q.id!r}", file=file, record=q.id, field="id")
        seen.add(q.id)


def expect_list(data: Any, file: Path, what: str) -> list:
    if not isinstance(data, list):
        raise InputError(f"expected a JSON array of {what}, got {type(data).__name__}", file=file)
    if not data:
        raise InputError(f"no {what} in file", file=file)
    return data
