"""`inferqa read`: each question answered by an LLM from the top-k passages of a run."""

from __future__ import annotations

from ..parameters import (ALLOW_PARTIAL, BENCH_FLAG as BENCH, READER_LLM_FLAG as LLM, LLM_CALLS, LLM_URLS, READER_LLM, READ_K, READ_KS, READ_STRATEGIES, RUN_HELP, UNION_ALPHA, UNION_BETA)  # noqa: F401 - re-exported until the stage moves

from dataclasses import replace
from pathlib import Path

from . import REQUIRED, Option, Stage



READ = Stage(
    "read", "Answer each question from the top-k passages of RUN; write one row per question, strategy and k.",
    entry="inferqa.reading.run:read_stage",
    options=(
        Option("run", str, REQUIRED, RUN_HELP, positional=True, metavar="RUN"),
        BENCH,
        LLM,
        replace(READ_STRATEGIES, flags=("--strategy", "-s"), item=str),
        replace(READ_KS, flags=("--k",), item=int),
        Option("out", Path, REQUIRED, "ANSWERS.jsonl to write (atomically)", flags=("--out", "-o")),
        Option("split", str, None, "only questions of this split (default: all in the run)"),
        *(replace(o, help=f"union_freq: {o.help}") for o in (UNION_ALPHA, UNION_BETA)),
        *LLM_CALLS, LLM_URLS,
        ALLOW_PARTIAL,
    ))
