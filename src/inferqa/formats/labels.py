"""labels.jsonl, the labeller's per-passage record, read as typed rows and rewritten without loss.

One row per labelled passage: `{"pid", "qid", "label": 1|2, "answers": {labeller: answer},
"correct": {labeller: bool}, "copied_from": pid | null}` (a QUIT release adds
`reader_answers`, kept in `extra`). A row whose `copied_from` is set and whose `answers` is
empty takes its label from that source passage: `resolve_copies` follows the chain, the one
place that does.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable

from ..errors import InputError
from ..io import iter_jsonl
from ..records import LABEL_ANSWERABLE, LABEL_PARTIAL, answerability_label
from ..text import normalize_answer

# Reader outputs that mean "no answer" are never candidates for review.
NO_ANSWER_KEYS = frozenset({"", "no answer", "noanswer", "none", "unknown", "i dont know"})


@dataclass
class LabelRow:
    pid: str
    qid: str
    label: int
    answers: dict[str, str]
    correct: dict[str, bool]
    copied_from: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # unknown keys, written back unchanged

    @property
    def follows_source(self) -> bool:
        return bool(self.copied_from) and not self.answers

    def answer_keys(self) -> dict[str, bool]:
        """Normalised answer -> judged correct by any labeller that gave it in this passage."""
        out: dict[str, bool] = {}
        for who, ans in self.answers.items():
            key = answer_key(ans)
            if key is None:
                continue
            out[key] = out.get(key, False) or bool(self.correct.get(who, False))
        return out

    def relabel(self) -> int:
        """The label the `correct` flags imply: 2 if any labeller's answer is correct, else 1."""
        return answerability_label(self.correct.values())

    def to_dict(self) -> dict[str, Any]:
        d = {"pid": self.pid, "qid": self.qid, "label": self.label, "answers": self.answers,
             "correct": self.correct, "copied_from": self.copied_from}
        d.update(self.extra)
        return d


@lru_cache(maxsize=1 << 16)  # a benchmark has few distinct answers and millions of rows
def answer_key(answer: str | None) -> str | None:
    """The normalised form answers are grouped by; None for empty or "no answer" outputs."""
    if not isinstance(answer, str):
        return None
    key = normalize_answer(answer)
    return None if key in NO_ANSWER_KEYS else key


def _row(obj: dict, path: Path, lineno: int) -> LabelRow:
    where = {"file": path, "record": f"line {lineno}"}
    for name in ("pid", "qid", "label"):
        if name not in obj:
            raise InputError("missing field", field=name, **where)
    answers, correct = obj.get("answers") or {}, obj.get("correct") or {}
    if not isinstance(answers, dict) or not all(isinstance(v, str) for v in answers.values()):
        raise InputError("expected an object of labeller -> answer string", field="answers", **where)
    if not isinstance(correct, dict) or not all(isinstance(v, bool) for v in correct.values()):
        raise InputError("expected an object of labeller -> true/false", field="correct", **where)
    if obj["label"] not in (LABEL_PARTIAL, LABEL_ANSWERABLE):
        raise InputError(f"label {obj['label']!r} is not 1 or 2", field="label", **where)
    known = {"pid", "qid", "label", "answers", "correct", "copied_from"}
    return LabelRow(pid=str(obj["pid"]), qid=str(obj["qid"]), label=obj["label"], answers=dict(answers),
                    correct=dict(correct), copied_from=obj.get("copied_from") or None,
                    extra={k: v for k, v in obj.items() if k not in known})


def open_labels(path: str | os.PathLike) -> list[LabelRow]:
    """Every row of a labels.jsonl, each field checked; a `copied_from` must name a labelled passage."""
    path = Path(path)
    if not path.exists():
        raise InputError("labels.jsonl is missing: label the benchmark first (inferqa build --label)", file=path)
    rows = [_row(obj, path, lineno) for lineno, obj in iter_jsonl(path)]
    pids = {r.pid for r in rows}
    for r in rows:
        if r.follows_source and r.copied_from not in pids:
            raise InputError(f"copied_from {r.copied_from!r} is not a labelled passage", file=path,
                             record=r.pid, field="copied_from")
    return rows


def resolve_copies(rows: Iterable[LabelRow]) -> dict[str, LabelRow]:
    """pid -> the row whose answers decide that passage (itself, or the end of its copy chain)."""
    by_pid = {r.pid: r for r in rows}
    out: dict[str, LabelRow] = {}
    for r in by_pid.values():
        src, seen = r, {r.pid}
        while src.follows_source:
            src = by_pid[src.copied_from]  # type: ignore[index]
            if src.pid in seen:
                raise InputError(f"copied_from cycle through passage {src.pid}", record=r.pid, field="copied_from")
            seen.add(src.pid)
        out[r.pid] = src
    return out
