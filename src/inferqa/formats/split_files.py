"""A benchmark split as the field's files: TREC qrels (`qid 0 pid label`) and a topics TSV
(`qid<TAB>question`, the queries format of ir_datasets, Anserini and PyTerrier's
`singleline` topics), so ir_measures or trec_eval over them averages over that split only.
`split_qrels` and `split_topics` are what a split holds, written here and served by
`inferqa.irds` alike.
"""

from __future__ import annotations

import os

from .coerce import as_benchmark, BenchLike
from ..io import atomic_open
from .qrels import Qrels
from ..text import normalize_whitespace


def split_qrels(bench: BenchLike, split: str | None = None) -> Qrels:
    """The judgements of the questions of `split` (None or "all": every question)."""
    b = as_benchmark(bench)
    qrels = b.qrels
    return Qrels({q: qrels[q] for q in b.split_qids(split) if q in qrels})


def split_topics(bench: BenchLike, split: str | None = None) -> dict[str, str]:
    """qid -> question text on one line (whitespace runs, tabs and newlines as one space), per
    question of `split` in split order."""
    b = as_benchmark(bench)
    return {qid: normalize_whitespace(b.questions[qid].text) for qid in b.split_qids(split)}


def write_qrels(bench: BenchLike, split: str | None, path: str | os.PathLike) -> int:
    """TREC qrels of `split` at `path` (atomically); returns the questions written."""
    qrels = split_qrels(bench, split)
    qrels.to_file(path)
    return len(qrels)


def write_topics(bench: BenchLike, split: str | None, path: str | os.PathLike) -> int:
    """`qid<TAB>question` per question of `split` at `path` (atomically); returns the count."""
    topics = split_topics(bench, split)
    with atomic_open(path) as fh:
        for qid, text in topics.items():
            fh.write(f"{qid}\t{text}\n")
    return len(topics)
