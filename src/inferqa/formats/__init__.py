"""The one reading and writing layer for domain files: runs, qrels, answers, labels and the
corpus, each format's writer beside its reader.

Every command reads these through here, so each rule (special files refused, compressed
files opened, truncated and mistyped records located, ids checked against the benchmark)
is written once. Bytes and text come from `inferqa.io`.
"""

from __future__ import annotations

from .answers import (Answers, ReaderRecord, RetrieverContext, RetrieverRecord, iter_answer_rows, read_reader_output,
                      read_retriever_jsonl, read_retriever_records, write_retriever_records)
from .corpus import corpus_ids, iter_corpus, write_corpus
from .labels import LabelRow, Labels, read_baseline_labels, resolve_copies, stored_answers
from .oracles import optimal, oracle_retriever
from .qrels import open_qrels
from .rankify import read_rankify, write_rankify
from .runs import (OPTIMAL, RANKED_KEYS, RANKIFY, TREC, Findings, RunFormat, Titles, check_run_ids,
                   check_same_questions, load_run, open_run, read_run_titles, sniff)
from .trec import read_trec, write_trec

__all__ = ["Answers", "LabelRow", "Labels", "ReaderRecord", "RetrieverContext", "RetrieverRecord", "read_baseline_labels",
           "read_reader_output", "read_retriever_records", "write_corpus", "write_retriever_records", "open_qrels", "resolve_copies", "stored_answers", "OPTIMAL", "RANKED_KEYS", "RANKIFY", "TREC", "Findings", "RunFormat", "Titles", "check_run_ids", "check_same_questions",
           "corpus_ids", "iter_answer_rows", "iter_corpus", "load_run", "read_retriever_jsonl", "open_run", "optimal", "oracle_retriever", "read_rankify",
           "read_run_titles", "read_trec", "sniff", "write_rankify", "write_trec"]
