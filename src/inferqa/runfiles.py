"""Run files in the formats the QUIT authors' tools read and write, beside TREC.

- Rankify / DPR JSON: a JSON array, one object per question in the split's dataset order
  (matched by position, not by id): `{"question", "answers", "ctxs": [{"id", "score",
  "has_answer", "text", "title"}]}`; reranker outputs add `"reranked_ctxs"`, which then is
  the ranking read.
- `retriever.jsonl`: one line per question of a split, in dataset order, with the question's
  own passages: `{"question", "answers", "contexts": [{"id", "text", "label", "rag_answers"}]}`.
- The Pyserini JSONL collection (`id`, `contents`, `title` = question id) that Pyserini,
  Anserini and Rankify index as it is.

`sniff` tells the formats apart from the first bytes, so every command that reads a run
(`Run.load`) accepts either.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from .errors import InputError
from .io import atomic_open, check_file, iter_jsonl, read_json, write_jsonl
from .text import answer_in_text

if TYPE_CHECKING:
    from .benchmark import Benchmark
    from .records import Run

TREC, RANKIFY = "trec", "rankify"
RANKED_KEYS = ("reranked_ctxs", "ctxs")  # a reranker's output holds both; its own ranking wins


def sniff(path: str | os.PathLike) -> str:
    """`rankify` for a file whose first non-blank byte opens a JSON array, else `trec`."""
    with open(path, "rb") as fh:
        while chunk := fh.read(4096):
            head = chunk.lstrip()
            if head:
                return RANKIFY if head[:1] == b"[" else TREC
    return TREC


def split_order(bench: "Benchmark | None", split: str | None, path: Path) -> list[str]:
    if bench is None or split is None:
        raise InputError("a Rankify/DPR JSON run is matched to questions by position: give --bench DIR and "
                         "--split SPLIT", file=path)
    return bench.split_qids(split)


def read_rankify(path: str | os.PathLike, bench: "Benchmark | None", split: str | None,
                 strict: bool = True) -> tuple["Run", list[dict[str, Any]]]:
    """(the run, per question `{"qid", "question", "key", "titles"}`) of a Rankify JSON file.

    Question i of the file is question i of `split`; its question text, where given, must be
    that question's. With `strict`, duplicate passage ids of a question are an error (the
    doctor reads with `strict=False` to report them instead).
    """
    from .records import Run

    path = Path(path)
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError("expected a JSON array of questions", file=path)
    qids = split_order(bench, split, path)
    if len(data) > len(qids):
        raise InputError(f"{len(data)} questions in the run but {len(qids)} in split {split!r}: wrong split?",
                         file=path)
    run, info = Run(tag=path.stem), []
    for i, obj in enumerate(data):
        qid, rec = qids[i], f"{i} (question {qids[i]})"
        if not isinstance(obj, dict):
            raise InputError("expected an object", file=path, record=rec)
        text = obj.get("question")
        if isinstance(text, str) and text.strip() != bench.questions[qid].text.strip():
            raise InputError(f"question text differs from {qid}'s in split {split!r}: runs are matched by "
                             "position, so the run and the split must hold the same questions in the same order",
                             file=path, record=rec, field="question")
        key = next((k for k in RANKED_KEYS if k in obj), None)
        ctxs = obj.get(key) if key else []
        if not isinstance(ctxs, list):
            raise InputError("expected a list of passages", file=path, record=rec, field=key)
        ranked, seen, titles = [], set(), []
        for r, ctx in enumerate(ctxs):
            f = f"{key}[{r}]"
            if not isinstance(ctx, dict) or "id" not in ctx:
                raise InputError("expected an object with an id", file=path, record=rec, field=f)
            pid = str(ctx["id"])
            try:
                score = float(ctx["score"]) if ctx.get("score") is not None else float(len(ctxs) - r)
            except (TypeError, ValueError):
                raise InputError(f"score {ctx['score']!r} is not a number", file=path, record=rec,
                                 field=f"{f}.score") from None
            if math.isnan(score):
                raise InputError("score is NaN", file=path, record=rec, field=f"{f}.score")
            if pid in seen and strict:
                raise InputError(f"duplicate passage {pid}", file=path, record=rec, field=f"{f}.id")
            seen.add(pid)
            ranked.append((pid, score))
            titles.append(ctx.get("title"))
        run[qid] = ranked
        info.append({"qid": qid, "question": text, "key": key, "titles": titles})
    if not data:
        raise InputError("run file is empty", file=path)
    return run, info


Titles = dict  # qid -> the `title` of each passage of its ranking, as a Rankify source gave them (None: none)


def _ctxs(bench: "Benchmark", ranked: list[tuple[str, float]], answers: list[str], titles: list | None,
          with_text: bool) -> list[dict[str, Any]]:
    out = []
    for r, (pid, score) in enumerate(ranked):
        pq = pid.rsplit("_", 2)[0]
        text = bench.passage_text(pid) if pq in bench.questions else ""
        ctx = {"id": pid, "score": score, "has_answer": answer_in_text(text, answers)}
        if with_text:
            ctx["text"] = text
        title = titles[r] if titles is not None and r < len(titles) else None
        ctx["title"] = pq if title is None else title
        out.append(ctx)
    return out


def read_run_titles(path: str | os.PathLike, bench: "Benchmark", split: str | None) -> tuple["Run", Titles, bool]:
    """(run, its passages' titles, whether it is a reranker's output) of a run file: a Rankify
    file's own titles and `reranked_ctxs`; a TREC run has neither. Passages listed twice are
    kept (the authors' files may hold them)."""
    from .records import Run

    path = check_file(path)
    if sniff(path) != RANKIFY:
        return Run.load(path, bench, split, allow_duplicates=True), {}, False
    run, info = read_rankify(path, bench, split, strict=False)
    return run, {d["qid"]: d["titles"] for d in info}, any(d["key"] == "reranked_ctxs" for d in info)


def write_rankify(run: "Run", bench: "Benchmark", split: str, path: str | os.PathLike, with_text: bool = True, *,
                  reranked: bool = False, first_stage: "Run | None" = None, titles: Titles | None = None,
                  first_stage_titles: Titles | None = None) -> int:
    """A Rankify JSON run of `split` in dataset order (a question missing from the run gets an
    empty list). `has_answer` is Rankify's answer-in-text test (`text.answer_in_text`), False
    for a passage of no known question; `title` as `titles` (a Rankify source's) has it, else
    the passage's question id. With `reranked` (or a `first_stage`), the file is a reranker's
    output: the run is `reranked_ctxs`, and `ctxs` the first stage (default: the run itself).
    Returns questions written."""
    reranked = reranked or first_stage is not None
    qids = bench.split_qids(split)
    with atomic_open(path) as fh:
        fh.write("[\n")
        for i, qid in enumerate(qids):
            q = bench.questions[qid]
            ranked = _ctxs(bench, run.get(qid, []), q.answers, (titles or {}).get(qid), with_text)
            obj = {"question": q.text, "answers": q.answers, "ctxs": ranked}
            if reranked:
                obj["ctxs"] = ranked if first_stage is None else _ctxs(
                    bench, first_stage.get(qid, []), q.answers, (first_stage_titles or {}).get(qid), with_text)
                obj["reranked_ctxs"] = ranked
            fh.write(("" if i == 0 else ",\n") + json.dumps(obj, ensure_ascii=False))
        fh.write("\n]\n")
    return len(qids)


def iter_retriever_lines(bench: "Benchmark", split: str) -> Iterator[dict[str, Any]]:
    """`retriever.jsonl` objects of `split`: each question's own passages, with stored reader answers."""
    qids = bench.split_qids(split)
    stored = bench.stored_answers(qids)
    qrels = bench.qrels
    for qid in qids:
        q = bench.questions[qid]
        contexts = [{"id": pid, "text": bench.passage_text(pid), "label": label,
                     "rag_answers": stored.get(pid, {}).get("reader_answers", {})}
                    for pid, label in qrels.get(qid, {}).items() if label > 0]
        yield {"question": q.text, "answers": q.answers, "contexts": contexts}


def write_retriever_jsonl(bench: "Benchmark", split: str, path: str | os.PathLike) -> int:
    return write_jsonl(path, iter_retriever_lines(bench, split))


def read_retriever_jsonl(path: str | os.PathLike, bench: "Benchmark", split: str
                         ) -> dict[str, dict[str, Any]]:
    """pid -> {"label", "reader_answers"} from a `retriever.jsonl` of `split`, matched by position
    (question text checked) and by passage id (each id must be a passage of that question)."""
    path = Path(path)
    qids = bench.split_qids(split)
    out: dict[str, dict[str, Any]] = {}
    for i, (lineno, obj) in enumerate(iter_jsonl(path)):
        if i >= len(qids):
            raise InputError(f"more lines than split {split!r} has questions ({len(qids)})", file=path,
                             record=f"line {lineno}")
        qid = qids[i]
        rec = f"line {lineno} (question {qid})"
        if obj.get("question", "").strip() != bench.questions[qid].text.strip():
            raise InputError(f"question text differs from {qid}'s in split {split!r}", file=path, record=rec,
                             field="question")
        own = bench.qrels.get(qid, {})
        for j, ctx in enumerate(obj.get("contexts") or []):
            pid = str(ctx.get("id"))
            if pid not in own:
                raise InputError(f"passage {pid} is not one of {qid}'s", file=path, record=rec,
                                 field=f"contexts[{j}].id")
            answers = ctx.get("rag_answers") or {}
            if not isinstance(answers, dict) or not all(isinstance(a, str) for a in answers.values()):
                raise InputError("expected an object of reader -> answer string", file=path, record=rec,
                                 field=f"contexts[{j}].rag_answers")
            out[pid] = {"label": ctx.get("label"), "reader_answers": answers}
    return out


def write_pyserini_collection(bench: "Benchmark", path: str | os.PathLike) -> int:
    """corpus.jsonl as a Pyserini JSONL collection: `{"id", "contents", "title"}` per passage."""
    return write_jsonl(path, ({"id": p.id, "contents": p.text, "title": p.qid} for p in bench.iter_corpus()))


def merge_reader_answers(bench: "Benchmark", imported: dict[str, dict[str, Any]]) -> dict[str, int]:
    """Write imported `rag_answers` into labels.jsonl as `reader_answers` (a passage without a
    row gets one with its qrels label); labels are never changed, disagreements are counted."""
    from .records import LABEL_PARTIAL

    rows = bench.stored_answers()
    qrels = bench.qrels
    disagree = added = 0
    for pid, got in imported.items():
        qid = pid.rsplit("_", 2)[0]
        label = qrels.get(qid, {}).get(pid, LABEL_PARTIAL)
        if got.get("label") is not None and got["label"] != label:
            disagree += 1
        row = rows.get(pid)
        if row is None:
            row = rows[pid] = {"pid": pid, "qid": qid, "label": label, "answers": {}, "correct": {},
                               "copied_from": None}
            added += 1
        row["reader_answers"] = {**(row.get("reader_answers") or {}), **got["reader_answers"]}
    write_jsonl(bench.path / "labels.jsonl", rows.values())
    return {"passages": len(imported), "rows_added": added, "label_disagreements": disagree}


STRATEGY_CODES = {"un": "union_norm", "uf": "union_freq"}  # the authors' reader-output keys


def iter_answer_rows(path: str | os.PathLike) -> Iterator[tuple[str, dict[str, Any]]]:
    """(record name, `{"qid", "strategy", "k", "prediction", ...}`) of an answers file: our
    ANSWERS.jsonl, or an authors' reader output (Rankify JSON with `predicted_answer`:
    reader -> `{qid}_{un|uf}_{k}` -> answer; the strategy is named `reader/union_norm`)."""
    path = check_file(path)
    if sniff(path) != RANKIFY:
        for lineno, row in iter_jsonl(path):
            yield f"line {lineno}", row
        return
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError("expected a JSON array of questions", file=path)
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
                row = {"qid": parts[0], "strategy": f"{reader}/{STRATEGY_CODES[parts[1]]}", "k": int(parts[2]),
                       "prediction": str(answer)}
                if isinstance(obj.get("answers"), list) and obj["answers"]:
                    row["golds"] = list(obj["answers"])
                yield f"{i} ({key})", row
