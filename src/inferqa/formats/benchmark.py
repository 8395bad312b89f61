"""A benchmark directory as written by `inferqa build`, read back lazily.

Layout: questions.jsonl, corpus.jsonl (id, text, qid), qrels.tsv, splits.json, meta.json.
Passage text is recoverable from its id and the question's kept hints, so most stages
never need to read corpus.jsonl (`inferqa.formats.iter_corpus` streams it).

Reading never writes, and a reader sees one committed benchmark: every read through the
`Benchmark` (`file`, its attributes, `Labels.of`, `iter_corpus`) reads its files as last committed
when it was opened (`bench_write.read_committed`), whatever is committed meanwhile.
"""

from __future__ import annotations

import contextlib
import json
import os
from functools import cached_property
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping

from ..errors import InputError
from ..io import PinnedPath, atomic_open, iter_jsonl, read_json, write_jsonl
from ..records import ID_SCHEME, Question, hint_mask, is_old_passage_id, parse_passage_id, split_passage_id
from .bench_write import BUILD_FILES, read_committed
from .findings import Findings
from .qrels import Qrels, iter_qrels

HINT_SEPARATOR = " "
REBUILD = "rebuild it with `inferqa build`"


class Benchmark:
    """A benchmark directory written by `inferqa build` (or a converted release), read lazily:
    each attribute reads its file on first use, as committed when it was opened (`file`).
    Refused at once when the directory lacks questions.jsonl or qrels.tsv, or uses passage ids
    of another scheme."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        if not self.path.is_dir():
            raise InputError("a file, not a benchmark directory" if self.path.is_file()
                             else "benchmark directory not found", file=self.path)
        self._files = read_committed(self.path)
        for name in ("questions.jsonl", "qrels.tsv"):
            if not self.file(name).exists():
                raise InputError(f"not a benchmark directory: {name} is missing", file=self.path)
        self._check_id_scheme()

    def file(self, name: str) -> PinnedPath:
        """The benchmark's file `name` (one of `BUILD_FILES`) as committed when it was opened:
        reading it reads those bytes; `exists()` is False where there was none."""
        if name not in BUILD_FILES:
            raise ValueError(f"{name} is not a file of a benchmark's commit ({', '.join(BUILD_FILES)})")
        return self._files[name]

    def _check_id_scheme(self) -> None:
        """Refuse a directory written with passage ids of another scheme, before any stage misreads them."""
        scheme = (self.meta.get("id_scheme") or {}).get("name") if isinstance(self.meta, dict) else None
        if scheme not in (None, ID_SCHEME):
            raise InputError(f"passage id scheme {scheme!r} is not {ID_SCHEME!r}; {REBUILD}",
                             file=self.file("meta.json"), field="id_scheme")
        if scheme is None:
            first = next(iter_qrels(self.file("qrels.tsv")), None)
            if first is not None and is_old_passage_id(first[1]):
                raise InputError(f"written with the old passage ids ({first[1]}: sorted hint indices, not QUIT's "
                                 f"0/1 mask); {REBUILD}", file=self.path)

    @cached_property
    def questions(self) -> dict[str, Question]:
        """question id -> `Question` (text, gold answers, kept hints), in questions.jsonl's order."""
        out: dict[str, Question] = {}
        f = self.file("questions.jsonl")
        for lineno, obj in iter_jsonl(f):
            try:
                q = Question.from_dict(obj)
            except (KeyError, TypeError) as exc:
                raise InputError("missing or invalid field", file=f, record=f"line {lineno}", field=str(exc)) from None
            out[q.id] = q
        return out

    @cached_property
    def qrels(self) -> Qrels:
        """question id -> passage id -> label (qrels.tsv); unlisted passages are label 0."""
        return Qrels.from_file(self.file("qrels.tsv"))

    @cached_property
    def splits(self) -> dict[str, list[str]]:
        """split name -> its question ids (splits.json; without it, one split `all`)."""
        f = self.file("splits.json")
        return read_json(f) if f.exists() else {"all": list(self.questions)}

    @cached_property
    def meta(self) -> dict:
        """What built the benchmark (meta.json: sources, options, id scheme); {} without it."""
        f = self.file("meta.json")
        return read_json(f) if f.exists() else {}

    @cached_property
    def mask_bits(self) -> str | None:
        """The one mask bit order meta.json records for the passage ids, None if not exactly one."""
        bits = (self.meta.get("id_scheme") or {}).get("mask_bits") or []
        return bits[0] if len(bits) == 1 else None

    def question_objects(self) -> dict[str, dict]:
        """question id -> its questions.jsonl object as written (fields `Question` does not
        know kept), read afresh on each call: for editing and writing back with `write_questions`."""
        return {str(obj["id"]): obj for _, obj in iter_jsonl(self.file("questions.jsonl"))}

    def split_qids(self, split: str | None) -> list[str]:
        """The question ids of `split`, in split order (None or "all": every question); an
        unknown split is an InputError naming the splits there are."""
        if split in (None, "all"):
            return list(self.questions)
        if split not in self.splits:
            raise InputError(f"unknown split {split!r} (have: {', '.join(self.splits)})",
                             file=self.file("splits.json"))
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

    def check(self, run: Mapping[str, Any], *, strict: bool = True, file: str | os.PathLike | None = None) -> Findings:
        """The problems of `run` against this benchmark: a malformed passage id, one of an
        unknown question or naming a hint the question does not keep. Strict: the first is an
        InputError (naming `file`, the run's record and field); else they are collected by kind
        (`questions_not_in_benchmark`, `ids_not_in_corpus`) in the returned findings."""
        findings = Findings(strict)
        check_run_ids(run, self, file, findings)
        return findings


@contextlib.contextmanager
def questions_writer(path: str | os.PathLike) -> Iterator[Callable[[Question | dict], None]]:
    """`write(question)` appends one question (a `Question` or its questions.jsonl object); the
    file replaces `path` only when the block succeeds."""
    with atomic_open(path) as fh:
        def write(question: Question | dict) -> None:
            obj = question.to_dict() if isinstance(question, Question) else question
            fh.write(json.dumps(obj, ensure_ascii=False) + "\n")
        yield write


def write_questions(path: str | os.PathLike, questions: Iterable[Question | dict]) -> int:
    """`questions` as a questions.jsonl at `path` (replaced atomically); returns how many were written."""
    return write_jsonl(path, (q.to_dict() if isinstance(q, Question) else q for q in questions))


def check_run_ids(run: Mapping[str, Any], bench: Benchmark, file: str | os.PathLike | None = None,
                  findings: Findings | None = None) -> None:
    """`Benchmark.check`'s checks, into `findings` (default: strict, raising on the first problem);
    the corpus holds every ordering of a question's kept hints."""
    findings = Findings() if findings is None else findings
    questions = bench.questions
    n_hints = {qid: len(q.hints) for qid, q in questions.items()}
    one_reading = bench.mask_bits
    seen_ok: set[str] = set()
    for qid, ranked in run.items():
        if qid not in questions:
            findings.add("questions_not_in_benchmark", qid, InputError(
                f"question {qid!r} is not in the benchmark {bench.path} (a run made on another benchmark?)",
                file=file, record=f"{qid} rank 1", field="qid"))
        for rank, (pid, _) in enumerate(ranked, 1):
            if pid in seen_ok:
                continue
            example = f"{qid} rank {rank}: {pid}"
            try:
                pq, order = parse_passage_id(pid)
            except ValueError as exc:
                findings.add("ids_not_in_corpus", example, InputError(
                    f"unknown passage id: {exc}", file=file, record=f"{qid} rank {rank}", field="pid"))
                continue
            n = n_hints.get(pq)
            mask = split_passage_id(pid)[1]
            if n is None or len(mask) != n or (one_reading and mask != hint_mask(order, n, one_reading)):
                findings.add("ids_not_in_corpus", example, InputError(
                    f"unknown passage id {pid!r} (not in the corpus of {bench.path})", file=file,
                    record=f"{qid} rank {rank}", field="pid"))
                continue
            seen_ok.add(pid)
