"""Writing the QUIT authors' file formats (reading them: `inferqa.formats`; Rankify JSON runs:
`inferqa.formats.rankify`): `retriever.jsonl`, one line per question of a split in dataset order,
`{"question", "answers", "contexts": [{"id", "text", "label", "rag_answers"}]}`, and the Pyserini
JSONL collection (`id`, `contents`, `title` = question id) that Pyserini, Anserini and Rankify index.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Iterator

from .answers import RetrieverContext, RetrieverRecord, write_retriever_records
from .bench_write import BenchmarkWrite
from .corpus import iter_corpus
from .labels import LABELS, LabelRow, Labels, stored_answers
from .rankify import write_rankify
from ..io import write_jsonl

if TYPE_CHECKING:
    from .benchmark import Benchmark


def iter_retriever_records(bench: "Benchmark", split: str) -> Iterator[RetrieverRecord]:
    """`retriever.jsonl` records of `split`: each question's own passages, with stored reader answers."""
    qids = bench.split_qids(split)
    stored = stored_answers(bench, qids)
    qrels = bench.qrels
    for qid in qids:
        q = bench.questions[qid]
        contexts = [RetrieverContext(pid, label, (stored[pid].reader_answers or {}) if pid in stored else {},
                                     bench.passage_text(pid))
                    for pid, label in qrels.get(qid, {}).items() if label > 0]
        yield RetrieverRecord(q.text, q.answers, contexts)


def write_retriever_jsonl(bench: "Benchmark", split: str, path: str | os.PathLike) -> int:
    return write_retriever_records(path, iter_retriever_records(bench, split))


def write_pyserini_collection(bench: "Benchmark", path: str | os.PathLike) -> int:
    """corpus.jsonl as a Pyserini JSONL collection: `{"id", "contents", "title"}` per passage."""
    return write_jsonl(path, ({"id": p.id, "contents": p.text, "title": p.qid} for p in iter_corpus(bench)))


def merge_reader_answers(bench: "Benchmark", imported: dict[str, RetrieverContext]) -> dict[str, int]:
    """Write imported `rag_answers` into labels.jsonl as `reader_answers` (a passage without a
    row gets one with its qrels label); labels are never changed, disagreements are counted."""
    from ..records import LABEL_PARTIAL, split_passage_id

    rows = stored_answers(bench)
    qrels = bench.qrels
    disagree = added = 0
    for pid, got in imported.items():
        qid = split_passage_id(pid)[0]  # a passage of its question: read_retriever_jsonl checked it
        label = qrels.get(qid, {}).get(pid, LABEL_PARTIAL)
        if got.label is not None and got.label != label:
            disagree += 1
        row = rows.get(pid)
        if row is None:
            row = rows[pid] = LabelRow(pid=pid, qid=qid, label=label, answers={}, correct={})
            added += 1
        row.reader_answers = {**(row.reader_answers or {}), **got.reader_answers}
    with BenchmarkWrite(bench.path) as write:  # one transaction, as every benchmark write
        Labels(rows.values()).to_file(write.path(LABELS))
        write.commit(dict(bench.meta))
    return {"passages": len(imported), "rows_added": added, "label_disagreements": disagree}


__all__ = ["iter_retriever_records", "merge_reader_answers", "write_pyserini_collection", "write_rankify",
           "write_retriever_jsonl"]
