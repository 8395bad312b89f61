"""`inferqa read`: each question answered by an LLM from the top-k passages of a run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..stage_options import READ_KS, READ_STRATEGIES, READER_LLM, UNION_ALPHA, UNION_BETA
from .evaluate import ALLOW_PARTIAL
from .llm import LLM_CALLS, LLM_URLS
from . import REQUIRED, Option, Stage

RUN_HELP = "a TREC run file, or 'optimal' for every relevant passage sorted by label (the oracle pipeline)"
BENCH = Option("bench", Path, REQUIRED, "benchmark directory written by `inferqa build`", flags=("--bench", "-b"))
LLM = replace(READER_LLM, flags=("--llm",))

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
