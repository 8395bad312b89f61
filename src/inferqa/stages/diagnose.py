"""`inferqa diagnose monotonicity`: does adding a hint to a passage ever lower its score?"""

from __future__ import annotations

from pathlib import Path

from . import REQUIRED, Option, Stage
from .evaluate import RESAMPLES

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
