"""A benchmark split as the field's files: TREC qrels (`qid 0 pid label`) and a topics TSV
(`qid<TAB>question`, the queries format of ir_datasets, Anserini and PyTerrier's
`singleline` topics), so ir_measures or trec_eval over them averages over that split only.
"""

from __future__ import annotations

import os

from .inputs import BenchLike, as_benchmark
from .io import atomic_open
from .records import Qrels
from .text import normalize_whitespace


def split_qrels(bench: BenchLike, split: str | None = None) -> Qrels:
    """The judgements of the questions of `split` (None or "all": every question)."""
    b = as_benchmark(bench)
    qrels = b.qrels
    return Qrels({q: qrels[q] for q in b.split_qids(split) if q in qrels})


def write_qrels(bench: BenchLike, split: str | None, path: str | os.PathLike) -> int:
    """TREC qrels of `split` at `path` (atomically); returns the questions written."""
    qrels = split_qrels(bench, split)
    qrels.save(path)
    return len(qrels)


def write_topics(bench: BenchLike, split: str | None, path: str | os.PathLike) -> int:
    """`qid<TAB>question` per question of `split` at `path` (atomically); returns the count."""
    b = as_benchmark(bench)
    qids = b.split_qids(split)
    with atomic_open(path) as fh:
        for qid in qids:
            fh.write(f"{qid}\t{normalize_whitespace(b.questions[qid].text)}\n")  # one line, no tab
    return len(qids)
