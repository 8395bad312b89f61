"""Writing the QUIT authors' file formats (reading them: `inferqa.formats`).

- Rankify / DPR JSON: a JSON array, one object per question in the split's dataset order
  (matched by position, not by id): `{"question", "answers", "ctxs": [{"id", "score",
  "has_answer", "text", "title"}]}`; reranker outputs add `"reranked_ctxs"`, which then is
  the ranking read.
- `retriever.jsonl`: one line per question of a split, in dataset order, with the question's
  own passages: `{"question", "answers", "contexts": [{"id", "text", "label", "rag_answers"}]}`.
- The Pyserini JSONL collection (`id`, `contents`, `title` = question id) that Pyserini,
  Anserini and Rankify index as it is.
"""

from __future__ import annotations

import json
import os
from typing import TYPE_CHECKING, Any, Iterator

from .formats.corpus import iter_corpus
from .formats.runs import Titles
from .io import atomic_open, write_jsonl
from .text import answer_in_text

if TYPE_CHECKING:
    from .benchmark import Benchmark
    from .records import Run

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


def write_pyserini_collection(bench: "Benchmark", path: str | os.PathLike) -> int:
    """corpus.jsonl as a Pyserini JSONL collection: `{"id", "contents", "title"}` per passage."""
    return write_jsonl(path, ({"id": p.id, "contents": p.text, "title": p.qid} for p in iter_corpus(bench)))


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
