"""`inferqa diagnose ...`: `monotonicity` (does adding a hint to a passage ever lower its score?) and
`window` (how many distinct questions the head of a run holds, and what a reranker could reach)."""

from __future__ import annotations

from ..parameters import (BENCH, RESAMPLES, WINDOW_DEPTH)  # noqa: F401 - re-exported until the stage moves

from pathlib import Path

from . import REQUIRED, Option, Stage

MONOTONICITY = Stage(
    "monotonicity", "Evidence monotonicity of a retriever: how often adding one hint to a passage lowers its score.",
    entry="inferqa.diagnose.monotonicity:monotonicity_stage",
    description="For each question of the split, each set S of its hints and each hint h not in S is one "
                "addition S → S∪{h}; a set's score is the retriever's score of its passages averaged over "
                "their orderings, and an addition whose score drops is a violation (a tie is not). EMVR = "
                "violations / additions, with a bootstrap CI over questions (docs/diagnose.md).",
    options=(
        Option("bench", (Path, object), REQUIRED, "benchmark folder, or a Benchmark", flags=("--bench", "-b")),
        Option("retriever", (str, object), "bm25", "retriever name (`inferqa plugins retriever`), or a Retriever",
               flags=("--retriever", "-r")),
        Option("model", str, None, "the retriever's model option (a folder, HF id or alias)"),
        Option("options", dict, None, "retriever option KEY=VALUE (repeatable), e.g. --opt compose=monotone",
               flags=("--opt",), metavar="KEY=VALUE"),
        Option("split", str, "test", "questions diagnosed (all: every question)"),
        Option("index_dir", Path, None, "index directory (default: BENCH/indexes/<retriever>-<hash of options>/, "
               "built there when missing)"),
        Option("seed", int, 0, "seed of the bootstrap over questions"),
        Option("resamples", int, RESAMPLES, "bootstrap resamples of the questions for the 95% CI", min=1),
    ))


WINDOW = Stage(
    "window", "The reranking window of a run: distinct questions in its top k, and the best a reranker could do "
    "over k passages or k distinct questions.",
    entry="inferqa.diagnose.window:window_stage",
    description="A QUIT question's passages are orderings of the same hints, so its near-copies fill the head of a "
                "ranking. Per depth k, means over the run's questions with a relevant passage: distinct questions "
                "and hint sets in the top k; Hit@k; and the share whose first k distinct questions (hint sets) of "
                "the whole ranking hold a relevant passage (docs/diagnose.md#window).",
    options=(
        Option("run", (Path, object), REQUIRED, "a TREC run (any run file `inferqa evaluate` reads; in Python also a "
               "Run or a {qid: {pid: score}} dict)", positional=True, metavar="RUN"),
        Option("bench", (Path, object), REQUIRED, "benchmark folder, or a Benchmark", flags=("--bench", "-b")),
        Option("depths", list, [10, 20, 100], "window sizes k, each an integer ≥ 1", flags=("--depth",), item=int,
               metavar="K"),
        Option("split", str, None, "only the run's questions of this split (none: every question of the run)"),
    ))
