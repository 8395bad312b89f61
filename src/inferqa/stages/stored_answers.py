"""`inferqa import-answers` and `inferqa stored-answers`: reader answers stored in a benchmark's
labels.jsonl, brought in from the QUIT authors' files and scored without a model."""

from __future__ import annotations

from ..parameters import (ALLOW_PARTIAL, READ_KS)  # noqa: F401 - re-exported until the stage moves
from ..defaults import MIN_LABEL

from dataclasses import replace
from pathlib import Path

from . import REQUIRED, Option, Stage

IMPORT_ANSWERS = Stage(
    "import-answers", "Store the file's per-passage reader answers (`rag_answers`) in the benchmark's labels.jsonl.",
    entry="inferqa.formats.authors_files:import_answers_stage",
    options=(
        Option("retriever_jsonl", Path, REQUIRED, "the authors' retriever.jsonl of one split", positional=True,
               metavar="RETRIEVER_JSONL"),
        Option("bench", Path, REQUIRED, "benchmark directory (labels.jsonl is updated)", flags=("--bench",)),
        Option("split", str, REQUIRED, "split of the file (its lines are that split, in order)"),
    ))

STORED_ANSWERS = Stage(
    "stored-answers", "The paper's answer-level numbers without a model: optimal EM, accuracy per label, oracle "
    "reranker.",
    entry="inferqa.reading.oracle_reader:stored_answers_stage",
    options=(
        Option("bench", Path, REQUIRED, "benchmark directory with stored answers (labels.jsonl)", positional=True,
               metavar="BENCH_DIR"),
        Option("split", str, "test", "questions: train | dev | test | all"),
        Option("models", list, None, "model(s) whose stored answers to score (default: every one stored)",
               flags=("--model",), item=str),
        Option("run", Path, None, "also the oracle-reranker reader over this run: top-k unions looked up in the "
               "stored answers (inferqa: the run's passages sorted by label first; paper: in the run's own order)"),
        replace(READ_KS, help=READ_KS.help + " of the oracle-reranker reader", flags=("--k",)),
        replace(MIN_LABEL, help=MIN_LABEL.help + " for optimal EM; inferqa protocol only", flags=("--min-label",)),
        Option("protocol", str, "inferqa", "inferqa | paper: the rows of the QUIT authors' scripts (accuracy and "
               "optimal EM over labels 1 and 2, 1, 2; both unions un_k and uf_k; hint contribution)"),
        Option("as_json", bool, False, "print JSON", flags=("--json",)),
        ALLOW_PARTIAL,
    ))
