"""Answers files, read and checked field by field (and against a benchmark), and written:

- our ANSWERS.jsonl and an authors' reader output (Rankify JSON with `predicted_answer`):
  `Answers.from_file` / `answers.to_file`, a reader output's questions as `ReaderRecord`s;
- the authors' `retriever.jsonl` (each question's passages, labels and stored `rag_answers`):
  `RetrieverRecord`s read by `read_retriever_records` (as they are) or `read_retriever_jsonl`
  (matched to a split), written by `write_retriever_records`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterable, Iterator

from .. import registry
from ..errors import InputError
from ..io import first_byte, iter_jsonl, write_jsonl
from .rankify import read_question_array
from .runs import RANKIFY

if TYPE_CHECKING:
    from .benchmark import Benchmark

STRATEGY_CODES = {"un": "union_norm", "uf": "union_freq"}  # the authors' reader-output keys


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


@dataclass(frozen=True)
class ReaderRecord:
    """One question of an authors' reader output: its `id` and gold `answers` where given, and
    `predicted_answer` (reader -> `{qid}_{un|uf}_{k}` -> answer, each reader's an object)."""

    qid: str | None
    answers: list | None
    predicted: dict[str, dict[str, Any]]

    def stored_answer(self, model: str, method: str, path: Any, record: int) -> str:
        """`predicted_answer[model][f"{id}_{method}"]` (`method`: `un_1`...), as stored; `path`
        and `record` (its index) name it in an error."""
        field = f"predicted_answer.{model}"
        answers = self.predicted.get(model)
        if not isinstance(answers, dict):
            raise InputError(f"no answers of reader {model}", file=path, record=record, field=field)
        key = f"{self.qid}_{method}"
        answer = answers.get(key)
        if not isinstance(answer, str):
            raise InputError("no answer string" if answer is None else f"{answer!r} is not a string", file=path,
                             record=record, field=f"{field}.{key}")
        return answer


def read_reader_output(path: str | os.PathLike, *, complete: bool = False) -> list[ReaderRecord]:
    """Every record of an authors' reader output (answers are checked where used). `complete`:
    each record must hold its `id` and gold `answers` (as the QUIT release's do)."""
    out = []
    for i, obj in enumerate(read_question_array(path)):
        record = obj if isinstance(obj, dict) else {}
        qid, answers, predicted = record.get("id"), record.get("answers"), record.get("predicted_answer")
        if qid is not None and not isinstance(qid, str):
            raise InputError(f"expected a string, got {_type(qid)}", file=path, record=str(i), field="id")
        if qid is None and complete:
            raise InputError("expected an object with a string id", file=path, record=i, field="id")
        if (answers is None and complete) or (answers is not None and not isinstance(answers, list)):
            raise InputError("expected a list of answer strings", file=path, record=str(i), field="answers")
        if not isinstance(predicted, dict):
            raise InputError("expected an object reader -> answers", file=path, record=str(i),
                             field="predicted_answer")
        for reader, by_key in predicted.items():
            if not isinstance(by_key, (dict, type(None))):
                raise InputError("expected an object key -> answer", file=path, record=str(i),
                                 field=f"predicted_answer.{reader}")
        out.append(ReaderRecord(qid, answers, {r: a or {} for r, a in predicted.items()}))
    return out


def is_reader_output(path: str | os.PathLike) -> bool:
    """Whether an answers file is an authors' reader output: its first byte opens Rankify's JSON array."""
    return registry.claimed("run-format", "first_bytes", first_byte(path)) == RANKIFY


def iter_answer_rows(path: str | os.PathLike, records: list[ReaderRecord] | None = None
                     ) -> Iterator[tuple[str, dict[str, Any]]]:
    """(record name, `{"qid", "strategy", "k", "prediction", ...}`) of ANSWERS.jsonl or a reader
    output (reader -> `{qid}_{un|uf}_{k}` -> answer: strategy `reader/union_norm`), its `records` unless given."""
    if records is None and not is_reader_output(path):
        for lineno, row in iter_jsonl(path):
            yield f"line {lineno}", row
        return
    for i, rec in enumerate(read_reader_output(path) if records is None else records):
        for reader, answers in rec.predicted.items():
            for key, answer in answers.items():
                parts = str(key).rsplit("_", 2)
                if len(parts) != 3 or parts[1] not in STRATEGY_CODES or not parts[2].isdigit():
                    raise InputError(f"key {key!r} is not qid_un|uf_k", file=path, record=str(i),
                                     field=f"predicted_answer.{reader}")
                if not isinstance(answer, str):
                    raise InputError(f"expected a string, got {_type(answer)}", file=path, record=str(i),
                                     field=f"predicted_answer.{reader}.{key}")
                row = {"qid": parts[0], "strategy": f"{reader}/{STRATEGY_CODES[parts[1]]}", "k": int(parts[2]),
                       "prediction": answer}
                if rec.answers:
                    row["golds"] = list(rec.answers)
                yield f"{i} ({key})", row


def _text(row: dict, key: str, file: Any, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or (key != "prediction" and not value.strip()):
        got = "missing" if key not in row else f"{_type(value)}, not a string"
        raise InputError(f"expected a string ({got})", file=file, record=where, field=key)
    return value


class Answers(list):
    """The rows of an answers file, `{"qid", "strategy", "k", "prediction", "golds", "question", ...}`
    each. Read from a reader output, `records` are its questions as `ReaderRecord`s in file order
    (the QUIT release's tables match them to other files by position); else None."""

    records: list[ReaderRecord] | None = None

    @classmethod
    def from_file(cls, path: str | os.PathLike, bench: "Benchmark | None" = None, *,
                  scored: bool = False, complete: bool = False) -> "Answers":
        """Every row, each field checked; with `bench`, each question must be one of its questions,
        golds and question text taken from it. `scored`: each row must hold its `em`. `complete`: see
        `read_reader_output`."""
        records = read_reader_output(path, complete=complete) if is_reader_output(path) else None
        out = cls(_checked_rows(path, bench, scored, records))
        out.records = records
        return out

    def to_file(self, path: str | os.PathLike) -> int:
        """The rows as ANSWERS.jsonl at `path` (replaced atomically); returns the rows written."""
        return write_jsonl(path, self)


def _checked_rows(path: str | os.PathLike, bench: "Benchmark | None", scored: bool,
                  records: list[ReaderRecord] | None) -> list[dict[str, Any]]:
    rows = []
    for where, row in iter_answer_rows(path, records):
        qid, strategy = _text(row, "qid", path, where), _text(row, "strategy", path, where)
        pred = _text(row, "prediction", path, where)
        k = row.get("k")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise InputError(f"expected a positive integer, got {k!r}", file=path, record=where, field="k")
        em = row.get("em")
        if (scored or em is not None) and (isinstance(em, bool) or not isinstance(em, (int, float))
                                            or not 0 <= em <= 1):
            raise InputError(f"expected a number from 0 to 1 (a row scored by `inferqa read`), got {em!r}",
                             file=path, record=where, field="em")
        golds, question = row.get("golds"), row.get("question")
        if bench is not None:
            q = bench.questions.get(qid)
            if q is None:
                raise InputError(f"question {qid!r} is not in the benchmark {bench.path}", file=path,
                                 record=where, field="qid")
            golds, question = q.answers, q.text
        if not isinstance(golds, list) or not golds or not all(isinstance(g, str) for g in golds):
            raise InputError("no gold answers (a list of strings; or give --bench)", file=path,
                             record=where, field="golds")
        rows.append({**row, "qid": qid, "strategy": strategy, "k": k, "prediction": pred, "golds": golds,
                     "question": question})
    if not rows:
        raise InputError("no answer rows", file=path)
    return rows


@dataclass(frozen=True)
class RetrieverContext:
    """One passage of a question in `retriever.jsonl` (its `contexts`)."""

    id: str
    label: int | None
    reader_answers: dict[str, str]  # `rag_answers`: reader -> its stored answer
    text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, **({} if self.text is None else {"text": self.text}), "label": self.label,
                "rag_answers": self.reader_answers}


@dataclass(frozen=True)
class RetrieverRecord:
    """One line of an authors' `retriever.jsonl`: `question` and `answers` where given."""

    question: str | None
    answers: list | None
    contexts: list[RetrieverContext]

    def labels(self) -> dict[str, int | None]:
        return {c.id: c.label for c in self.contexts}

    def to_dict(self) -> dict[str, Any]:
        return {"question": self.question, "answers": self.answers, "contexts": [c.to_dict() for c in self.contexts]}


def retriever_record(obj: dict, **where: Any) -> RetrieverRecord:
    """One `retriever.jsonl` line, every field type-checked; `where`: its `file` and `record`."""
    text = obj.get("question")
    if text is not None and not isinstance(text, str):
        raise InputError(f"expected a string, got {_type(text)}", field="question", **where)
    answers = obj.get("answers")
    if answers is not None and not isinstance(answers, list):
        raise InputError("expected a list of answer strings", field="answers", **where)
    contexts = [] if obj.get("contexts") is None else obj["contexts"]
    if not isinstance(contexts, list):
        raise InputError(f"expected a list of passages, got {_type(contexts)}", field="contexts", **where)
    out = []
    for j, ctx in enumerate(contexts):
        f = f"contexts[{j}]"
        if not isinstance(ctx, dict):
            raise InputError(f"expected an object, got {_type(ctx)}", field=f, **where)
        pid = ctx.get("id")
        if not isinstance(pid, str):
            raise InputError(f"expected a string, got {_type(pid)}", field=f"{f}.id", **where)
        label = ctx.get("label")
        if label is not None and (isinstance(label, bool) or not isinstance(label, int)):
            raise InputError(f"expected an integer label, got {_type(label)}", field=f"{f}.label", **where)
        stored = ctx.get("rag_answers") or {}
        if not isinstance(stored, dict) or not all(isinstance(a, str) for a in stored.values()):
            raise InputError("expected an object of reader -> answer string", field=f"{f}.rag_answers", **where)
        passage = ctx.get("text")
        if passage is not None and not isinstance(passage, str):
            raise InputError(f"expected a string, got {_type(passage)}", field=f"{f}.text", **where)
        out.append(RetrieverContext(pid, label, dict(stored), passage))
    return RetrieverRecord(text, answers, out)


def read_retriever_records(path: str | os.PathLike, *, complete: bool = False) -> list[RetrieverRecord]:
    """Every line of a `retriever.jsonl`, matched to no benchmark. `complete`: each line must hold
    its gold `answers` and every passage its label (as the QUIT release's do)."""
    out = []
    for lineno, obj in iter_jsonl(path):
        where = {"file": path, "record": f"line {lineno}"}
        rec = retriever_record(obj, **where)
        if complete:
            if rec.answers is None:
                raise InputError("expected a list of answer strings", field="answers", **where)
            for j, ctx in enumerate(rec.contexts):
                if ctx.label is None:
                    raise InputError("expected an integer label, got null", field=f"contexts[{j}].label", **where)
        out.append(rec)
    return out


def read_retriever_jsonl(path: str | os.PathLike, bench: "Benchmark", split: str) -> dict[str, RetrieverContext]:
    """pid -> its passage of a `retriever.jsonl` of `split`, matched by position (question text
    checked) and by passage id (each must be a passage of that question)."""
    qids = bench.split_qids(split)
    out: dict[str, RetrieverContext] = {}
    for i, (lineno, obj) in enumerate(iter_jsonl(path)):
        if i >= len(qids):
            raise InputError(f"more lines than split {split!r} has questions ({len(qids)})", file=path,
                             record=f"line {lineno}")
        qid = qids[i]
        where = {"file": path, "record": f"line {lineno} (question {qid})"}
        rec = retriever_record(obj, **where)
        if rec.question is None:
            raise InputError("expected a string, got null", field="question", **where)
        if rec.question.strip() != bench.questions[qid].text.strip():
            raise InputError(f"question text differs from {qid}'s in split {split!r}", field="question", **where)
        own = bench.qrels.get(qid, {})
        for j, ctx in enumerate(rec.contexts):
            if ctx.id not in own:
                raise InputError(f"passage {ctx.id} is not one of {qid}'s", field=f"contexts[{j}].id", **where)
            out[ctx.id] = ctx
    return out


def write_retriever_records(path: str | os.PathLike, records: Iterable[RetrieverRecord]) -> int:
    """`records` as a `retriever.jsonl` at `path` (replaced atomically); returns the lines written."""
    return write_jsonl(path, (r.to_dict() for r in records))
