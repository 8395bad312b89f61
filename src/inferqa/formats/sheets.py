"""The annotation review sheet: CSV (default, opens in any spreadsheet) or JSONL, one row per
answer, read (`read_sheet`) and written (`write_sheet`) here.

A person fills `verdict` with accept or reject (yes/no, correct/wrong, true/false, 1/0
work too), or `skip` to leave an answer undecided. Rows are numbered as a spreadsheet
shows them: the CSV header is row 1; in JSONL the row is the line number.
"""

from __future__ import annotations

import csv
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, Literal

from .. import registry
from ..errors import InputError
from ..io import atomic_open, check_file, iter_jsonl, read_csv, write_jsonl
from ..registry import plugin

SheetFormat = Literal["csv", "jsonl"]

COLUMNS = ("qid", "question", "gold_answers", "answer", "judge", "reason", "passages", "decides",
           "previous_verdict", "verdict")
REQUIRED = ("qid", "answer", "verdict")
GOLD_SEPARATOR = " | "

ACCEPT, REJECT, SKIP = "accept", "reject", "skip"
_VERDICTS = {**dict.fromkeys((ACCEPT, "accepted", "yes", "y", "correct", "true", "1"), ACCEPT),
             **dict.fromkeys((REJECT, "rejected", "no", "n", "wrong", "incorrect", "false", "0"), REJECT), SKIP: SKIP}


@dataclass(frozen=True)
class SheetVerdict:
    row: int
    qid: str
    answer: str
    verdict: str  # ACCEPT | REJECT | SKIP


@plugin("sheet-format", "jsonl", suffixes=(".jsonl", ".json", ".ndjson"), help="JSON lines, one row per line")
def _jsonl_rows(path: Path) -> Iterator[tuple[int, dict]]:
    yield from iter_jsonl(path)


@plugin("sheet-format", "csv", suffixes=(".csv",), help="CSV with a header row (the default)")
def _csv_rows(path: Path) -> Iterator[tuple[int, dict]]:
    header, rows = read_csv(path)  # a spreadsheet's BOM is dropped there
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise InputError(f"missing column {', '.join(repr(m) for m in missing)} in the header",
                         file=path, record="row 1")
    yield from rows


def guess_format(path: str | os.PathLike, fmt: str | None = None) -> SheetFormat:
    """`fmt`, else the sheet format whose declared suffixes hold the path's ending (csv for any other)."""
    if fmt:
        if fmt not in ("csv", "jsonl"):
            raise InputError(f"unknown sheet format {fmt!r} (use csv or jsonl)")
        return fmt  # type: ignore[return-value]
    return registry.claimed("sheet-format", "suffixes", Path(path).suffix.lower()) or "csv"  # type: ignore[return-value]


def write_sheet(path: str | os.PathLike, rows: Iterable[dict[str, object]], fmt: SheetFormat = "csv") -> int:
    if fmt != "csv":
        return write_jsonl(path, rows)
    rows = list(rows)
    with atomic_open(path) as fh:
        writer = csv.DictWriter(fh, fieldnames=COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
    return len(rows)


def parse_verdict(value: object, *, file: Path, row: int) -> str:
    text = str(value).strip().lower() if value is not None else ""
    if text not in _VERDICTS:  # "" included
        problem = f"invalid verdict {value!r}" if text else "empty verdict"
        raise InputError(f"{problem} (write accept, reject or skip)", file=file, record=f"row {row}", field="verdict")
    return _VERDICTS[text]


def read_sheet(path: str | os.PathLike, fmt: str | None = None) -> list[SheetVerdict]:
    """Every row's verdict, or an InputError naming the first bad row."""
    path = check_file(path)
    out = []
    for row, rec in registry.create("sheet-format", guess_format(path, fmt))(path):
        for col in REQUIRED:
            if col not in rec:
                raise InputError(f"missing column {col!r}", file=path, record=f"row {row}", field=col)
        qid, answer = str(rec["qid"] or "").strip(), str(rec["answer"] or "").strip()
        if not qid:
            raise InputError("empty question id", file=path, record=f"row {row}", field="qid")
        if not answer:
            raise InputError("empty answer", file=path, record=f"row {row}", field="answer")
        out.append(SheetVerdict(row, qid, answer, parse_verdict(rec["verdict"], file=path, row=row)))
    if not out:
        raise InputError("the sheet has no rows", file=path)
    return out
