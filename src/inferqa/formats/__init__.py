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
from .qrels import open_qrels
from .rankify import read_rankify, write_rankify
from .runs import (OPTIMAL, RANKED_KEYS, RANKIFY, TREC, Findings, RunFormat, Titles, check_run_ids,
                   check_same_questions, load_run, open_run, read_run_titles, sniff)
from .trec import read_trec, write_trec

__all__ = ["LabelRow", "open_labels", "open_qrels", "resolve_copies", "stored_answers", "OPTIMAL", "RANKED_KEYS", "RANKIFY", "TREC", "Findings", "RunFormat", "Titles", "check_run_ids", "check_same_questions",
           "corpus_ids", "iter_answer_rows", "iter_corpus", "load_run", "open_answers", "read_retriever_jsonl", "open_run", "optimal", "oracle_retriever", "read_rankify",
           "read_run_titles", "read_trec", "sniff", "write_rankify", "write_trec"]
