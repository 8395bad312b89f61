"""Qrels files: TREC `qid 0 pid label`, plain or compressed, read and written by `Qrels`
(a benchmark's own qrels.tsv, `evaluate --qrels` and the API alike)."""

from __future__ import annotations

import contextlib
import os
import re
from typing import Any, Callable, Iterable, Iterator

from ..defaults import MIN_LABEL
from ..errors import InputError, optional_import
from ..io import atomic_open, iter_lines

QRELS_KINDS = ("trec",)
_INTEGER = re.compile(r"-?[0-9]+")  # int() also takes "1_0", "+1" and non-ASCII digits


def _check_kind(kind: str | None, path: str | os.PathLike) -> None:
    if kind not in (None, *QRELS_KINDS):
        raise InputError(f"unknown qrels format {kind!r} (have: {', '.join(QRELS_KINDS)})", file=path, field="kind")


class Qrels(dict):
    """question id -> passage id -> label (0, 1, 2). Unlisted passages are label 0."""

    @classmethod
    def from_file(cls, path: str | os.PathLike, kind: str | None = None) -> "Qrels":
        """The qrels of a TREC qrels file; a malformed, truncated or non-integer line is one
        InputError naming file, line and field."""
        _check_kind(kind, path)
        q = cls()
        for qid, pid, label in iter_qrels(path):
            q.setdefault(qid, {})[pid] = label
        if not q:
            raise InputError("qrels file is empty", file=path)
        return q

    def to_file(self, path: str | os.PathLike, kind: str | None = None) -> None:
        """TREC qrels at `path`, atomically."""
        _check_kind(kind, path)
        with self.writer(path) as write:
            for qid, docs in self.items():
                for pid, label in docs.items():
                    write(qid, pid, label)

    @staticmethod
    @contextlib.contextmanager
    def writer(path: str | os.PathLike) -> Iterator[Callable[[str, str, int], None]]:
        """`write(qid, pid, label)` appends one TREC qrels line; the file replaces `path` only
        when the block succeeds (a corpus-sized qrels streamed without holding it)."""
        with atomic_open(path) as fh:
            def write(qid: str, pid: str, label: int) -> None:
                fh.write(f"{qid} 0 {pid} {label}\n")
            yield write

    def only(self, qids: Iterable[str]) -> "Qrels":
        """The judgements of `qids` (a question without any left out)."""
        return Qrels({q: self[q] for q in qids if q in self})

    def to_ranx(self) -> Any:
        """These qrels as a `ranx.Qrels` (ranx keeps label 0 judgements too)."""
        return optional_import("ranx", "Qrels.to_ranx").Qrels({q: dict(d) for q, d in self.items()})

    def to_dataframe(self) -> Any:
        """These qrels as a pandas DataFrame of PyTerrier's qrels columns: qid, docno, label."""
        pd = optional_import("pandas", "Qrels.to_dataframe")
        rows = [(q, p, int(lab)) for q, docs in self.items() for p, lab in docs.items()]
        return pd.DataFrame(rows, columns=["qid", "docno", "label"])

    to_pyterrier = to_dataframe

    def relevant(self, qid: str, min_label: int = MIN_LABEL.default) -> set[str]:
        return {pid for pid, lab in self.get(qid, {}).items() if lab >= min_label}


def iter_qrels(path: str | os.PathLike) -> Iterator[tuple[str, str, int]]:
    """(qid, pid, label) per line of a TREC qrels file, streamed: the one qrels parser."""
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        parts = line.split()
        if len(parts) != 4:
            cut = "truncated: the last line ends mid-way; " if not line.endswith("\n") else ""
            raise InputError(f"{cut}expected 4 columns 'qid 0 pid label'", file=path, record=f"line {lineno}")
        qid, _, pid, label = parts
        if not _INTEGER.fullmatch(label):
            raise InputError(f"label {label!r} is not an integer", file=path, record=f"line {lineno}", field="label")
        yield qid, pid, int(label)
