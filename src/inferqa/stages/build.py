"""`inferqa build`, `inferqa label`, `inferqa stats` and `inferqa annotate export|import`: the
benchmark-writing stages, declared once (with the demo benchmark's build values, `DEMO_BUILD`).

Their shared options (TOP_K, SPLIT, SEED, the leak judges', LABELER, LABEL_MATCH, MIN_F1) are
declared here too; the builder, the labellers and the annotation sheets take their defaults
from these very objects."""

from __future__ import annotations

from ..parameters import (BENCH, BUILD_FLAG_WORDS, DEMO_BUILD, LABELER, LABELERS, LABELER_WORDS, LABEL_MATCH, LABEL_MODE, LEAK_FLAG_WORDS, LEAK_JUDGE, LEAK_JUDGE_OPTIONS, LEAK_LLM, LEAK_POLICY_HELP, LEAK_THRESHOLD, READER_LLM_FLAG as LLM, LLM_CALLS, LLM_URLS, MIN_F1, OVERWRITE, PARAMETRIC, SEED, SHEET_FORMAT, BUILD_SPLIT as SPLIT, STOP_AT_FIRST_CORRECT, TOP_K)  # noqa: F401 - re-exported until the stage moves

from dataclasses import replace
from pathlib import Path

from . import OVERWRITE, REQUIRED, Option, Stage





BUILD = Stage(
    "build", "Build a QUIT-style benchmark: leakage filter, top-k hints, every ordering of every subset as a passage.",
    entry="inferqa.label.building:build_stage",
    output="self-checked folder",  # `bench_write.refuse_existing`
    options=(
        Option("sources", list, None, "source files: WikiHint/TriviaHG/QUIT JSON, JSONL or CSV", positional=True,
               metavar="SOURCE", item=Path),
        Option("out", Path, REQUIRED, "benchmark directory to write (its build files replaced together)", flags=("--out", "-o")),
        replace(OVERWRITE, help="replace an existing benchmark's files (what else its folder holds, such as indexes "
                "and runs, stays)"),
        Option("fmt", str, "auto", "source format: auto | wikihint | triviahg | quit | jsonl | csv (applies to every "
               "SOURCE)", flags=("--format", "-f")),
        Option("demo", bool, False, "the demo benchmark `inferqa demo` runs on: the 48 embedded questions, 3 hints "
               "each (15 passages), split 6,4,38, SmolLM2's shipped labels. With SOURCE files: add the demo "
               "questions to them (default options)"),
        replace(TOP_K, default=None, nullable=False),
        Option("leak_policy", str, "drop-hint", LEAK_POLICY_HELP),
        LEAK_JUDGE,
        *LEAK_JUDGE_OPTIONS,
        replace(SPLIT, default=None, nullable=False),
        replace(SEED, default=None, nullable=False),
        Option("strict", bool, False, "fail on a question with fewer than --top-k usable hints instead of "
               "skipping it"),
        Option("label", bool, False, "label passages with LLMs: 2 if a labeller answers correctly from the passage, "
               "else 1; answers kept in labels.jsonl"),
        LABELERS,
        LABEL_MODE,
        STOP_AT_FIRST_CORRECT,
        LABEL_MATCH,
        PARAMETRIC,
        Option("split_by", str, None, "parametric: parametric questions to train, the rest to dev/test (in "
               "--split's dev:test ratio)"),
        Option("convergence", str, None, "LLM spec that computes hint convergence for sources without it (before "
               "hints are ranked)"),
    ))

LABEL = Stage(
    "label", "Label an existing benchmark with LLMs, as `inferqa build --label` does while building.",
    entry="inferqa.label.hook:label_stage",
    options=(
        Option("bench", Path, REQUIRED, "benchmark directory to label in place (qrels.tsv, labels.jsonl, meta.json)",
               positional=True, metavar="BENCH"),
        LABELERS,
        LABEL_MODE,
        PARAMETRIC,
        Option("split_by", str, None, "parametric: rewrite splits.json from the test"),
        Option("judge", str, None, "LLM judge of answer correctness; none: exact match"),
        replace(STOP_AT_FIRST_CORRECT, help="ask the labellers in turn and stop at the first that is right (same "
                "labels; skipped labellers recorded as not asked); default: ask every labeller"),
        *LLM_CALLS, LLM_URLS,
    ))

STATS = Stage(
    "stats", "Print counts of a benchmark directory: questions, passages and labels per split.",
    entry="inferqa.construct.stats:stats_stage",
    description="JSON: the counts as `inferqa.construct.stats.benchmark_stats` returns them.",
    options=(Option("bench", Path, REQUIRED, "a benchmark directory written by `inferqa build`", positional=True,
                    metavar="BENCH"),))


ANNOTATE_EXPORT = Stage(
    "export", "Write one row per question and distinct model answer that the judge accepted or that is contested.",
    entry="inferqa.annotate.export:export_stage",
    options=(
        Option("bench", Path, REQUIRED, "a labelled benchmark directory (has labels.jsonl)", positional=True,
               metavar="BENCH"),
        Option("out", Path, REQUIRED, "the review sheet to write", flags=("--out", "-o")),
        Option("split", str, None, "only this split's questions (default: all)"),
        SHEET_FORMAT,
        MIN_F1,
    ))

ANNOTATE_IMPORT = Stage(
    "import", "Apply verdicts: relabel the passages each answer decides, add accepted answers as aliases, "
    "re-run the leak filter.",
    entry="inferqa.annotate.apply:import_stage",
    options=(
        Option("bench", Path, REQUIRED, "the benchmark directory the sheet was exported from", positional=True,
               metavar="BENCH"),
        Option("sheet", Path, REQUIRED, "the review sheet with its verdict column filled (accept, reject or skip)",
               positional=True, metavar="SHEET"),
        Option("annotator", str, REQUIRED, "who reviewed the sheet (recorded in meta.json)"),
        SHEET_FORMAT,
        Option("leak_judge", str, "string", "judge for new aliases (the string rule always runs first)", choices=("string", "embedding", "llm")),
        replace(LEAK_THRESHOLD, name="leak_threshold", flags=("--leak-threshold",)),
        replace(LEAK_LLM, name="leak_llm", flags=("--leak-llm",)),
        Option("leak_action", str, None, "what to do with a hint a new alias leaks into (default: the build's leak "
               "policy; its 'none' means flag)", choices=("drop-hint", "drop-question", "flag")),
        Option("dry_run", bool, False, "check the sheet and print what would change; write nothing"),
    ))

BUILD_FLAG_WORDS.update(LEAK_FLAG_WORDS)
