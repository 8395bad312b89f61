"""The one reading and writing layer for domain files: runs, qrels, benchmarks, answers,
labels and the corpus, each format's writer beside its reader.

`Run.from_file` / `run.to_file` and `Qrels.from_file` / `qrels.to_file` are the gateways
(every run format of the `run-format` registry kind behind them, sniffed by its declared
suffixes and first bytes); `bench.check(run)` validates a run against a benchmark;
`open_run` does both and cuts to a split; `as_run` / `as_qrels` / `as_benchmark` take what
stage functions are given. Each rule (special files refused, compressed files opened,
truncated and mistyped records located, ids checked) is written once. Bytes and text come
from `inferqa.io`.
"""

from __future__ import annotations

from .answers import (Answers, ReaderRecord, RetrieverContext, RetrieverRecord, iter_answer_rows, read_retriever_jsonl,
                      read_retriever_records, write_retriever_records)
from .benchmark import Benchmark, check_run_ids
from .coerce import as_benchmark, as_qrels, as_run, as_run_list, open_run
from .corpus import corpus_ids, iter_corpus, write_corpus
from .findings import Findings
from .labels import LabelRow, Labels, read_baseline_labels, resolve_copies, stored_answers
from .oracles import optimal, oracle_retriever
from .qrels import Qrels
from .rankify import write_rankify
from .runs import OPTIMAL, RANKED_KEYS, RANKIFY, TREC, Run, RunFormat, Titles, check_same_questions, sniff
from .trec import write_trec

__all__ = ["Answers", "Benchmark", "Findings", "LabelRow", "Labels", "OPTIMAL", "Qrels", "RANKED_KEYS", "RANKIFY",
           "ReaderRecord", "RetrieverContext", "RetrieverRecord", "Run", "RunFormat", "TREC", "Titles",
           "as_benchmark", "as_qrels", "as_run", "as_run_list", "check_run_ids", "check_same_questions", "corpus_ids",
           "iter_answer_rows", "iter_corpus", "open_run", "optimal", "oracle_retriever", "read_baseline_labels",
           "read_retriever_jsonl", "read_retriever_records", "resolve_copies", "sniff", "stored_answers",
           "write_corpus", "write_rankify", "write_retriever_records", "write_trec"]
