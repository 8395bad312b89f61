"""`inferqa stats` and `inferqa annotate export|import`: the benchmark-writing stages, declared once."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..stage_options import LEAK_LLM, LEAK_THRESHOLD, MIN_F1
from . import REQUIRED, Option, Stage

STATS = Stage(
    "stats", "Print counts of a benchmark directory: questions, passages and labels per split.",
    entry="inferqa.construct.stats:stats_stage",
    description="JSON: the counts as `inferqa.construct.stats.benchmark_stats` returns them.",
    options=(Option("bench", Path, REQUIRED, "a benchmark directory written by `inferqa build`", positional=True,
                    metavar="BENCH"),))

SHEET_FORMAT = Option("fmt", str, None, "sheet format (default: from the file's suffix, csv otherwise)",
                      choices=("csv", "jsonl"), flags=("--format", "-f"))

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

# The help of the flags a plugin owns (`cli.flags.flag_text`'s parts).
LEAK_FLAG_WORDS = {"leak_threshold": {"owner": "embedding leak judge"}, "leak_llm": {"owner": "llm leak judge"}}
