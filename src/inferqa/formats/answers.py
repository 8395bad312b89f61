"""Answers files: our ANSWERS.jsonl (what `read_with_llm` writes), an authors' reader output
(Rankify JSON with `predicted_answer`) and the authors' `retriever.jsonl`, read and checked
field by field (and against a benchmark) in one place."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Iterator

from ..errors import InputError
from ..io import first_byte, iter_jsonl, read_json

if TYPE_CHECKING:
    from ..benchmark import Benchmark

STRATEGY_CODES = {"un": "union_norm", "uf": "union_freq"}  # the authors' reader-output keys


def _type(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def iter_answer_rows(path: str | os.PathLike) -> Iterator[tuple[str, dict[str, Any]]]:
    """(record name, `{"qid", "strategy", "k", "prediction", ...}`) of an answers file: our
    ANSWERS.jsonl, or an authors' reader output (Rankify JSON with `predicted_answer`:
    reader -> `{qid}_{un|uf}_{k}` -> answer; the strategy is named `reader/union_norm`)."""
    if first_byte(path) != b"[":  # the JSON array of a Rankify file, whatever run formats claim its name
        for lineno, row in iter_jsonl(path):
            yield f"line {lineno}", row
        return
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"expected a JSON array of questions, got {_type(data)}", file=path)
    for i, obj in enumerate(data):
        predicted = obj.get("predicted_answer") if isinstance(obj, dict) else None
        if not isinstance(predicted, dict):
            raise InputError("expected an object reader -> answers", file=path, record=str(i),
                             field="predicted_answer")
        for reader, answers in predicted.items():
            if not isinstance(answers, (dict, type(None))):
                raise InputError("expected an object key -> answer", file=path, record=str(i),
                                 field=f"predicted_answer.{reader}")
            for key, answer in (answers or {}).items():
                parts = str(key).rsplit("_", 2)
                if len(parts) != 3 or parts[1] not in STRATEGY_CODES or not parts[2].isdigit():
                    raise InputError(f"key {key!r} is not qid_un|uf_k", file=path, record=str(i),
                                     field=f"predicted_answer.{reader}")
                if not isinstance(answer, str):
                    raise InputError(f"expected a string, got {_type(answer)}", file=path, record=str(i),
                                     field=f"predicted_answer.{reader}.{key}")
                row = {"qid": parts[0], "strategy": f"{reader}/{STRATEGY_CODES[parts[1]]}", "k": int(parts[2]),
                       "prediction": answer}
                if isinstance(obj.get("answers"), list) and obj["answers"]:
                    row["golds"] = list(obj["answers"])
                yield f"{i} ({key})", row


def _text(row: dict, key: str, file: Any, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or (key != "prediction" and not value.strip()):
        got = "missing" if key not in row else f"{_type(value)}, not a string"
        raise InputError(f"expected a string ({got})", file=file, record=where, field=key)
    return value


def open_answers(path: str | os.PathLike, bench: "Benchmark | None" = None, *,
                 scored: bool = False) -> list[dict[str, Any]]:
    """Every row of an answers file, each field checked; with `bench`, each question must be
    one of its questions and the golds and question text come from it (else from the rows).
    `scored`: each row must also hold its `em` (as `inferqa read` writes it)."""
    rows = []
    for where, row in iter_answer_rows(path):
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


def read_retriever_jsonl(path: str | os.PathLike, bench: "Benchmark", split: str
                         ) -> dict[str, dict[str, Any]]:
    """pid -> {"label", "reader_answers"} from a `retriever.jsonl` of `split`, matched by position
    (question text checked) and by passage id (each id must be a passage of that question).
    Every field is type-checked; the file must cover the split unless it says otherwise."""
    qids = bench.split_qids(split)
    out: dict[str, dict[str, Any]] = {}
    for i, (lineno, obj) in enumerate(iter_jsonl(path)):
        if i >= len(qids):
            raise InputError(f"more lines than split {split!r} has questions ({len(qids)})", file=path,
                             record=f"line {lineno}")
        qid = qids[i]
        where = {"file": path, "record": f"line {lineno} (question {qid})"}
        text = obj.get("question")
        if not isinstance(text, str):
            raise InputError(f"expected a string, got {_type(text)}", field="question", **where)
        if text.strip() != bench.questions[qid].text.strip():
            raise InputError(f"question text differs from {qid}'s in split {split!r}", field="question", **where)
        contexts = obj.get("contexts")
        if contexts is None:
            contexts = []
        if not isinstance(contexts, list):
            raise InputError(f"expected a list of passages, got {_type(contexts)}", field="contexts", **where)
        own = bench.qrels.get(qid, {})
        for j, ctx in enumerate(contexts):
            f = f"contexts[{j}]"
            if not isinstance(ctx, dict):
                raise InputError(f"expected an object, got {_type(ctx)}", field=f, **where)
            pid = ctx.get("id")
            if not isinstance(pid, str):
                raise InputError(f"expected a string, got {_type(pid)}", field=f"{f}.id", **where)
            if pid not in own:
                raise InputError(f"passage {pid} is not one of {qid}'s", field=f"{f}.id", **where)
            label = ctx.get("label")
            if label is not None and (isinstance(label, bool) or not isinstance(label, int)):
                raise InputError(f"expected an integer label, got {_type(label)}", field=f"{f}.label", **where)
            answers = ctx.get("rag_answers") or {}
            if not isinstance(answers, dict) or not all(isinstance(a, str) for a in answers.values()):
                raise InputError("expected an object of reader -> answer string", field=f"{f}.rag_answers", **where)
            out[pid] = {"label": label, "reader_answers": answers}
    return out
