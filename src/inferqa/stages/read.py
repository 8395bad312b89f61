"""`inferqa read`: each question answered by an LLM from the top-k passages of a run."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..defaults import DEFAULT_LLM
from .evaluate import ALLOW_PARTIAL
from .llm import LLM_CALLS, LLM_URLS
from . import REQUIRED, Option, Stage

READER_LLM = Option("llm", str, DEFAULT_LLM, "LLM spec of the reader: smollm2, gemma3-270m, llama-cpp:/path.gguf, "
                    "openai:MODEL@URL or transformers:ID_OR_PATH")
READ_STRATEGIES = Option("strategies", list, ["union_norm"], "context strategies: union_norm, union_freq or concat")
READ_KS = Option("ks", list, [1, 3, 5], "top-k passages merged into one context, one reading per k")
READ_K = Option("k", int, REQUIRED, "top-k passages merged into one context", min=1)  # each of READ_KS
# union_freq's weights (the context strategy's options, `inferqa.reading.context`).
UNION_ALPHA = Option("alpha", float, 0.6, "weight of 1/rank of the passage", min=0)
UNION_BETA = Option("beta", float, 0.4, "weight of 1/position of the hint in its passage", min=0)

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
