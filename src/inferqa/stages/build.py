"""`inferqa build`, `inferqa label`, `inferqa stats` and `inferqa annotate export|import`: the
benchmark-writing stages, declared once (with the demo benchmark's build values, `DEMO_BUILD`).

Their shared options (TOP_K, SPLIT, SEED, the leak judges', LABELER, LABEL_MATCH, MIN_F1) are
declared here too; the builder, the labellers and the annotation sheets take their defaults
from these very objects."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..defaults import DEFAULT_LLM
from ..llm.base import LLM
from . import OVERWRITE, REQUIRED, Option, Stage
from .llm import LLM_CALLS, LLM_URLS

# passage ids spell hint indices with one digit each: at most 10 hints
TOP_K = Option("top_k", int, 5, "hints kept per question", min=1, max=10)
SPLIT = Option("split", str, "0.7,0.1,0.2", "the train,dev,test split: fractions, counts (5000,862,1539), 'source' "
               "or a roles file (roles.yaml: per source file, its split names)")
SEED = Option("seed", int, 13, "seed of the split shuffle")
LEAK_THRESHOLD = Option("threshold", float, 0.85, "cosine from which a hint span leaks", min=0, max=1,
                        min_open=True)
LEAK_LLM = Option("llm", (str, LLM), DEFAULT_LLM, "LLM asked whether the hint gives the answer")
LABELER = Option("labeler", str, DEFAULT_LLM, "LLM spec of a labeller; repeat the flag for several")
MIN_F1 = Option("min_f1", float, 0.5, "token F1 to a gold alias from which an answer the judge rejected is "
                "contested (so exported too), as is one contained in an alias or containing one", min=0, max=1)
LABEL_MATCH = Option("label_match", str, "exact", "QUIT release labels: exact (the authors' rule: a labeller's "
                    "answer is in answers, case-sensitive) or normalized (our SQuAD-style normalised match); "
                    "recorded in meta.json", choices=("exact", "normalized"))

# The demo benchmark `inferqa demo` runs on (`inferqa build --demo` alone): 38 of the 48
# questions in test, one question is 2.6 points; 3 hints -> 15 passages each.
DEMO_BUILD = {"top_k": 3, "split": [6, 4, 38], "seed": 13}

LEAK_POLICY_HELP = ("drop-hint: remove leaking hints, keep the question; drop-question: drop it (the paper's "
                    "choice); none: no filter (data already filtered, e.g. the QUIT release)")
LEAK_JUDGE = Option("leak_judge", str, "string", "string (word-boundary rule) | embedding (best hint-span cosine to "
                    "the answer) | llm (asks --leak-llm); the string rule always runs first")
LEAK_JUDGE_OPTIONS = (replace(LEAK_THRESHOLD, name="leak_threshold", flags=("--leak-threshold",)),
                      replace(LEAK_LLM, name="leak_llm", flags=("--leak-llm",)))
LABEL_MODE = Option("label_mode", str, "full", "full: every ordering; subsets: one ordering per subset, label copied "
                    "to the others (an approximation)")
STOP_AT_FIRST_CORRECT = Option("stop_at_first_correct", bool, False, "with --label: ask the labellers in turn and "
                               "stop at the first that is right (same labels; skipped labellers recorded as not asked)",
                               flags=("--labellers-stop-at-first-correct",))

LABELERS = replace(LABELER, type=list, default=None, nullable=False, item=str)
PARAMETRIC = Option("parametric", bool, False, "ask each labeller every question with no context; write "
                    "parametric.jsonl")
LABELER_WORDS = {"labeler": {"takes": "text", "shown_default": LABELER.default}}

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
# The flags whose None the build resolves (the declared default, or the demo's with --demo alone).
BUILD_FLAG_WORDS = {
    "top_k": {"shown_default": str(TOP_K.default), "note": f"{DEMO_BUILD['top_k']} with --demo alone"},
    "split": {"shown_default": SPLIT.default, "note": f"{','.join(map(str, DEMO_BUILD['split']))} with --demo alone"},
    "seed": {"shown_default": str(SEED.default)},
    **LABELER_WORDS,
}

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

# The help of the flags a plugin owns (`cli.stage_command.flag_text`'s parts).
LEAK_FLAG_WORDS = {"leak_threshold": {"owner": "embedding leak judge"}, "leak_llm": {"owner": "llm leak judge"}}
BUILD_FLAG_WORDS.update(LEAK_FLAG_WORDS)
