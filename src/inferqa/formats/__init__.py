"""The one reading layer for domain files: runs, qrels, answers, labels and the corpus (and
the run formats' writers, beside their readers).

Every command reads these through here, so each rule (special files refused, compressed
files opened, truncated and mistyped records located, ids checked against the benchmark)
is written once. Bytes and text come from `inferqa.io`.
"""

from __future__ import annotations

from .answers import iter_answer_rows, open_answers, read_retriever_jsonl
from .corpus import corpus_ids, iter_corpus
from .labels import LabelRow, open_labels, resolve_copies, stored_answers
from .oracles import optimal, oracle_retriever
from .benchmark import Benchmark
from .coerce import as_benchmark, as_qrels, as_run, open_run
from .findings import Findings
from .qrels import Qrels
from .rankify import read_rankify, write_rankify
from .benchmark import check_run_ids
from .runs import OPTIMAL, RANKED_KEYS, RANKIFY, TREC, Run, RunFormat, Titles, check_same_questions, sniff
from .trec import read_trec, write_trec

__all__ = ["Benchmark", "Qrels", "Run", "as_benchmark", "as_qrels", "as_run", "LabelRow", "open_labels", "resolve_copies", "stored_answers", "OPTIMAL", "RANKED_KEYS", "RANKIFY", "TREC", "Findings", "RunFormat", "Titles", "check_run_ids", "check_same_questions",
           "corpus_ids", "iter_answer_rows", "iter_corpus", "open_answers", "read_retriever_jsonl", "open_run", "optimal", "oracle_retriever", "read_rankify",
           "read_trec", "sniff", "write_rankify", "write_trec"]
