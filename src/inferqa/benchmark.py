"""A benchmark directory as written by `inferqa build`, read back lazily.

Layout: questions.jsonl, corpus.jsonl (id, text, qid), qrels.tsv, splits.json, meta.json.
Passage text is recoverable from its id and the question's kept hints, so most stages
never need to read corpus.jsonl (`inferqa.formats.iter_corpus` streams it).
"""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path

from .errors import InputError
from .io import iter_jsonl, iter_lines, read_json
from .records import ID_SCHEME, Qrels, Question, is_old_passage_id, parse_passage_id

HINT_SEPARATOR = " "
REBUILD = "rebuild it with `inferqa build`"


class Benchmark:
    """A benchmark directory (questions.jsonl, corpus.jsonl, qrels.tsv, meta.json), read on first use."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.is_dir():
            raise InputError("benchmark directory not found", file=self.path)
        for name in ("questions.jsonl", "qrels.tsv"):
            if not (self.path / name).exists():
                raise InputError(f"not a benchmark directory: {name} is missing", file=self.path)
        self._check_id_scheme()

    def _check_id_scheme(self) -> None:
        """Refuse a directory written with passage ids of another scheme, before any stage misreads them."""
        scheme = (self.meta.get("id_scheme") or {}).get("name") if isinstance(self.meta, dict) else None
        if scheme not in (None, ID_SCHEME):
            raise InputError(f"passage id scheme {scheme!r} is not {ID_SCHEME!r}; {REBUILD}",
                             file=self.path / "meta.json", field="id_scheme")
        if scheme is None:
            first = next((line.split() for _, line in iter_lines(self.path / "qrels.tsv") if line.strip()), [])
            if len(first) == 4 and is_old_passage_id(first[2]):
                raise InputError(f"written with the old passage ids ({first[2]}: sorted hint indices, not QUIT's "
                                 f"0/1 mask); {REBUILD}", file=self.path)

    @cached_property
    def questions(self) -> dict[str, Question]:
        out: dict[str, Question] = {}
        f = self.path / "questions.jsonl"
        for lineno, obj in iter_jsonl(f):
            try:
                q = Question.from_dict(obj)
            except (KeyError, TypeError) as exc:
                raise InputError("missing or invalid field", file=f, record=f"line {lineno}", field=str(exc)) from None
            out[q.id] = q
        return out

    @cached_property
    def qrels(self) -> Qrels:
        return Qrels.load(self.path / "qrels.tsv")

    @cached_property
    def splits(self) -> dict[str, list[str]]:
        f = self.path / "splits.json"
        return read_json(f) if f.exists() else {"all": list(self.questions)}

    @cached_property
    def meta(self) -> dict:
        f = self.path / "meta.json"
        return read_json(f) if f.exists() else {}

    @cached_property
    def mask_bits(self) -> str | None:
        """The one mask bit order meta.json records for the passage ids, None if not exactly one."""
        bits = (self.meta.get("id_scheme") or {}).get("mask_bits") or []
        return bits[0] if len(bits) == 1 else None

    def split_qids(self, split: str | None) -> list[str]:
        if split in (None, "all"):
            return list(self.questions)
        if split not in self.splits:
            raise InputError(f"unknown split {split!r} (have: {', '.join(self.splits)})",
                             file=self.path / "splits.json")
        return list(self.splits[split])

    def hints_of(self, pid: str) -> list[str]:
        """The hint texts of a passage, in passage order."""
        qid, order = parse_passage_id(pid)
        q = self.questions.get(qid)
        if q is None:
            raise KeyError(f"passage {pid}: unknown question {qid}")
        if max(order) >= len(q.hints):
            raise KeyError(f"passage {pid}: hint index beyond the question's {len(q.hints)} hints")
        return [q.hints[i].text for i in order]

    def passage_text(self, pid: str) -> str:
        """The hints in passage order, joined by one space, stripped (as the QUIT authors build it)."""
        return HINT_SEPARATOR.join(self.hints_of(pid)).strip()
