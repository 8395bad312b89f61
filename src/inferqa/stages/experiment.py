"""`inferqa run`, `inferqa demo` and `inferqa explore`: experiment grids and the explorer page."""

from __future__ import annotations

from ..parameters import (PROGRESS)  # noqa: F401 - re-exported until the stage moves

from pathlib import Path

from . import REQUIRED, Option, Stage


RUN = Stage(
    "run", "Run an experiment grid; stages already computed in the folder are reused.",
    entry="inferqa.experiments.runner:run_stage",
    output="folder",
    options=(
        Option("config", Path, REQUIRED, "experiment YAML (docs/experiments.md)", positional=True),
        Option("out", Path, None, "experiment folder (default: runs/<name>)", flags=("--out", "-o")),
        PROGRESS,
    ))

DEMO = Stage(
    "demo", "Run the shipped demo experiment on the demo benchmark and print its tables.",
    entry="inferqa.experiments.runner:demo_stage",
    output="folder",
    description="experiments/configs/demo.yaml on the benchmark `inferqa build --demo` writes (48 questions, "
                "15 passages each, SmolLM2's labels): bm25 and clue (clue-level MiniLM) retrieval, "
                "llm-pointwise SmolLM2 reranking of the top 5, SmolLM2 reading (union_norm, union_freq; "
                "k = 1, 3, 5) and the three oracles, on the 38 test questions; then the report and explorer paths.",
    options=(
        Option("out", Path, Path("runs/demo"), "experiment folder", flags=("--out", "-o")),
        Option("config", str, "demo", "shipped config to run", choices=("demo", "ci")),
        PROGRESS,
        Option("compute", bool, False, "ask SmolLM2 again instead of starting from the answers shipped with the "
               "demo (several minutes more on 2 cores)"),
    ))

EXPLORE = Stage(
    "explore", "Write explorer.html: one offline page to study runs and answers question by question.",
    entry="inferqa.experiments.explorer:explore_stage",
    options=(
        Option("runs", list, [], "runs (TREC, or Rankify JSON with --split), as PATH or NAME=PATH",
               positional=True, metavar="RUN..."),
        Option("bench", Path, REQUIRED, "benchmark folder"),
        Option("answers", list, [], "reader ANSWERS.jsonl, as PATH or NAME=PATH; answers named like a run "
               "belong to that run"),
        Option("out", Path, Path("explorer.html"), "the page to write", flags=("--out", "-o")),
        Option("split", str, None, "only the questions of this split"),
        Option("depth", int, 10, "passages shown per run and question", min=1),
        Option("allow_partial", bool, False, "accept a Rankify/DPR JSON run of fewer questions than --split "
               "(read as the split's first ones)"),
    ))
