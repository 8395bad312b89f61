"""`inferqa rerank`: a run in, the top DEPTH passages of each question reranked, a run out."""

from __future__ import annotations

from ..parameters import (ALLOW_PARTIAL, DEPTH, GROUPING, READER_LLM_FLAG as LLM, LLM_CALLS, MARGIN, PER_GROUP, RERANK_DEPTH, RERANK_WINDOW, SHARE)  # noqa: F401 - re-exported until the stage moves

from dataclasses import replace
from pathlib import Path

from . import REQUIRED, Option, Stage



RERANK = Stage(
    "rerank", "Rerank the top --depth passages (or --depth distinct questions, --window question) of every "
    "question of RUN; the passage set is kept.",
    entry="inferqa.experiments.rerank:rerank_stage",
    description="Resumable: finished questions go to a checkpoint beside --out, LLM calls to the call cache.",
    options=(
        Option("run", Path, REQUIRED, "TREC run to rerank (e.g. from `inferqa retrieve`)", positional=True,
               metavar="RUN"),
        Option("bench", Path, REQUIRED, "benchmark directory the run was made on", flags=("--bench", "-b")),
        Option("reranker", str, REQUIRED, "llm-pointwise | llm-listwise | upr | cross-encoder | monot5 | rankt5 | "
               "lit5 | oracle (`inferqa plugins reranker` lists them with their options)", flags=("--reranker", "-r")),
        Option("out", Path, REQUIRED, "reranked TREC run to write (atomically)", flags=("--out", "-o")),
        Option("llm", str, None, "LLM rerankers: LLM spec (smollm2, gemma3-270m, llama-cpp:/x.gguf, openai:MODEL, "
               "transformers:ID); default: the reranker's own (`inferqa plugins reranker`)"),
        Option("model", str, None, "cross-encoder and the T5 family: HF id or local folder of the weights; default: "
               "the reranker's own", flags=("--model", "-m")),
        RERANK_DEPTH,
        RERANK_WINDOW,
        Option("batch_size", int, None, "batch size (cross-encoder, T5 family)", min=1),
        Option("split", str, None, "only the questions of this split (the output holds only them)"),
        Option("options", dict, None, "extra reranker option KEY=VALUE, repeatable (e.g. window=10, reduction=mean)",
               flags=("--option",)),
        *LLM_CALLS,
        replace(PER_GROUP, default=None, flags=("--diversify",)),
        replace(GROUPING, default=None, help=GROUPING.help + f"; unset: {GROUPING.default}",
                flags=("--diversify-by",)),
        replace(MARGIN, help=MARGIN.help + "; needs --diversify; `inferqa tune-diversify` chooses it",
                flags=("--diversify-margin",)),
        replace(SHARE, help=SHARE.help + "; needs --diversify; not with --diversify-margin; `inferqa tune-diversify` "
                "chooses it", flags=("--diversify-share",)),
        ALLOW_PARTIAL,
    ))
