"""labels.jsonl, the labeller's per-passage record, read as typed rows and rewritten without loss.

One row per labelled passage: `{"pid", "qid", "label": 1|2, "answers": {labeller: answer},
"correct": {labeller: bool}, "copied_from": pid | null}` (a QUIT release adds
`reader_answers`: {reader model: answer}, the answers the paper's readers gave). A row whose
`copied_from` is set and whose `answers` is empty takes its label from that source passage (a
passage of the same question): `resolve_copies` follows the chain, the one place that does.
`stored_answers` is a benchmark's rows by passage, the stored answers the paper's
answer-level numbers are computed from.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable

from ..errors import InputError
from ..io import iter_jsonl
from ..records import LABEL_ANSWERABLE, LABEL_PARTIAL, answerability_label
from ..text import normalize_answer

if TYPE_CHECKING:
    from .benchmark import Benchmark

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
    reader_answers: dict[str, str] | None = None  # a QUIT release's; None: the row has none (written so)
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
        if self.reader_answers is not None:
            d["reader_answers"] = self.reader_answers
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
    readers = obj.get("reader_answers")
    if readers is not None and (not isinstance(readers, dict) or not all(isinstance(v, str) for v in readers.values())):
        raise InputError("expected an object of reader model -> answer string", field="reader_answers", **where)
    if not isinstance(correct, dict) or not all(isinstance(v, bool) for v in correct.values()):
        raise InputError("expected an object of labeller -> true/false", field="correct", **where)
    if obj["label"] not in (LABEL_PARTIAL, LABEL_ANSWERABLE):
        raise InputError(f"label {obj['label']!r} is not 1 or 2", field="label", **where)
    known = {"pid", "qid", "label", "answers", "correct", "copied_from", "reader_answers"}
    return LabelRow(pid=str(obj["pid"]), qid=str(obj["qid"]), label=obj["label"], answers=dict(answers),
                    correct=dict(correct), copied_from=obj.get("copied_from") or None,
                    reader_answers=None if readers is None else dict(readers),
                    extra={k: v for k, v in obj.items() if k not in known})


def open_labels(path: str | os.PathLike, qids: Iterable[str] | None = None) -> list[LabelRow]:
    """Every row of a labels.jsonl (only those of `qids`, when given), each field checked; a
    `copied_from` must name a labelled passage."""
    path = Path(path)
    if not path.exists():
        raise InputError("labels.jsonl is missing: label the benchmark first (inferqa build --label)", file=path)
    wanted = None if qids is None else set(qids)
    # a full release holds millions of rows: only the rows asked for are typed and kept
    rows = [_row(obj, path, lineno) for lineno, obj in iter_jsonl(path)
            if wanted is None or "qid" not in obj or str(obj["qid"]) in wanted]
    pids = {r.pid for r in rows}
    for r in rows:
        # a copy's source is of the same question, so it is kept whenever the copy is
        if r.follows_source and r.copied_from not in pids:
            raise InputError(f"copied_from {r.copied_from!r} is not a labelled passage", file=path,
                             record=r.pid, field="copied_from")
    return rows


def stored_answers(bench: "Benchmark", qids: Iterable[str] | None = None) -> dict[str, LabelRow]:
    """pid -> its labels.jsonl row, for the passages of `qids` (every passage without); empty
    without labels.jsonl. Read afresh on each call."""
    path = bench.path / "labels.jsonl"
    return {r.pid: r for r in open_labels(path, qids)} if path.exists() else {}


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
