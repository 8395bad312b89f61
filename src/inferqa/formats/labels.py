"""labels.jsonl, the labeller's per-passage record, read and written without loss by `Labels`.

One row per labelled passage: `{"pid", "qid", "label": 1|2, "answers": {labeller: answer},
"correct": {labeller: bool}, "copied_from": pid | null}` (a QUIT release adds `reader_answers`:
{reader model: answer}). A row whose `copied_from` is set and whose `answers` is empty takes its
label from that passage of the same question (`resolve_copies` follows the chain).
"""

from __future__ import annotations

import contextlib
import json
import os
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Iterator

from ..errors import InputError
from ..io import atomic_open, iter_jsonl, write_jsonl
from ..records import LABEL_ANSWERABLE, LABEL_PARTIAL, answerability_label, parse_passage_id
from ..text import normalize_answer
from .rankify import read_question_array

if TYPE_CHECKING:
    from .benchmark import Benchmark

LABELS = "labels.jsonl"

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
            if key is not None:
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


class Labels(list):
    """The rows of a labels.jsonl, typed (`LabelRow`): `Labels.from_file` reads and checks
    them, `to_file` (or `Labels.writer`, row by row) writes them atomically."""

    @classmethod
    def from_file(cls, path: str | os.PathLike, qids: Iterable[str] | None = None) -> "Labels":
        """Every row of a labels.jsonl (only those of `qids`, when given), each field checked; a
        `copied_from` must name a labelled passage."""
        path = path if isinstance(path, Path) else Path(path)  # a `PinnedPath` stays pinned
        if not path.exists():
            raise InputError(f"{LABELS} is missing: label the benchmark first (inferqa build --label)", file=path)
        wanted = None if qids is None else set(qids)
        # a full release holds millions of rows: only the rows asked for are typed and kept
        rows = cls(_row(obj, path, lineno) for lineno, obj in iter_jsonl(path)
                   if wanted is None or "qid" not in obj or str(obj["qid"]) in wanted)
        pids = {r.pid for r in rows}
        for r in rows:
            # a copy's source is of the same question, so it is kept whenever the copy is
            if r.follows_source and r.copied_from not in pids:
                raise InputError(f"copied_from {r.copied_from!r} is not a labelled passage", file=path,
                                 record=r.pid, field="copied_from")
        return rows

    @classmethod
    def of(cls, bench: "Benchmark", qids: Iterable[str] | None = None) -> "Labels":
        """The benchmark's labels.jsonl rows (of `qids`), as committed when it was opened; none
        where it has no labels.jsonl."""
        path = bench.file(LABELS)
        return cls.from_file(path, qids) if path.exists() else cls()

    @staticmethod
    @contextlib.contextmanager
    def writer(path: str | os.PathLike) -> Iterator[Callable[[LabelRow], None]]:
        """`write(row)` appends one row; the file replaces `path` only when the block succeeds."""
        with atomic_open(path) as fh:
            def write(row: LabelRow) -> None:
                fh.write(json.dumps(row.to_dict(), ensure_ascii=False) + "\n")
            yield write

    def to_file(self, path: str | os.PathLike) -> int:
        """Write every row at `path` atomically; returns the rows written."""
        return write_jsonl(path, (row.to_dict() for row in self))

    def by_pid(self) -> dict[str, LabelRow]:
        return {r.pid: r for r in self}


def stored_answers(bench: "Benchmark", qids: Iterable[str] | None = None) -> dict[str, LabelRow]:
    """pid -> its labels.jsonl row (the stored answers the paper's answer-level numbers use), for the
    passages of `qids` (every passage without); empty without labels.jsonl. Read afresh on each call."""
    return Labels.of(bench, qids).by_pid()


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


def read_order_labels(path: str | os.PathLike) -> dict[tuple[str, str], LabelRow]:
    """(qid, hint order) -> row of labels in their id-free form (the demo's demo_labels.jsonl:
    `{"qid", "order", "label", "answers", "correct"}`), which survives a change of the id format;
    each row's `pid` is empty until a benchmark's is given (`dataclasses.replace`)."""
    out = {}
    for lineno, obj in iter_jsonl(path):
        order = obj.pop("order", None)
        if not isinstance(order, str) or not order.isdigit():
            raise InputError(f"expected the hint order as a string of digits, got {order!r}", file=path,
                             record=f"line {lineno}", field="order")
        row = _row({**obj, "pid": ""}, path, lineno)
        out[(row.qid, order)] = row
    return out


def write_order_labels(path: str | os.PathLike, rows: Iterable[LabelRow]) -> int:
    """`rows` in the id-free form `read_order_labels` reads, atomically; returns the rows written."""
    def portable(r: LabelRow) -> dict[str, Any]:
        qid, order = parse_passage_id(r.pid)
        return {"qid": qid, "order": "".join(map(str, order)), "label": r.label, "answers": r.answers,
                "correct": r.correct}
    return write_jsonl(path, map(portable, rows))


def read_baseline_labels(path: str | os.PathLike) -> list[dict[str, int]]:
    """The QUIT release's `baselines/baseline.json` (labels of its comparison corpus): per question,
    in the split's order, `ctxs` as passage id -> `{"label", ...}`, read as passage id -> label."""
    out = []
    for i, obj in enumerate(read_question_array(path)):
        ctxs = obj.get("ctxs") if isinstance(obj, dict) else None
        if not isinstance(ctxs, dict):
            raise InputError("expected an object passage id -> {label, ...}", file=path, record=i, field="ctxs")
        labels = {}
        for pid, ctx in ctxs.items():
            label = ctx.get("label") if isinstance(ctx, dict) else None
            if not isinstance(label, int) or isinstance(label, bool):
                raise InputError(f"label {label!r} is not an integer", file=path, record=i,
                                 field=f"ctxs.{pid}.label")
            labels[pid] = label
        out.append(labels)
    return out
