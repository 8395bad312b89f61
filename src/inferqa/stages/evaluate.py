"""`inferqa evaluate`, `inferqa compare` and `inferqa evaluate-answers`: the evaluation stages."""

from __future__ import annotations

from ..parameters import (ALLOW_PARTIAL, COMPARE_METRICS, CONFIDENCE, CORRECTIONS, DEFAULT_METRICS, JUDGE_SAMPLES, JUDGE_TEMPERATURE, READER_LLM_FLAG as LLM, METRICS, MIN_LABEL_OPT, PROTOCOL, PROTOCOLS, QUESTIONS, QUESTIONS_OPT, RESAMPLES, EVAL_SPLIT as SPLIT, TESTS, _RUN_HELP)  # noqa: F401 - re-exported until the stage moves
from ..defaults import TEST_SEED

from dataclasses import replace
from pathlib import Path

from . import REQUIRED, Option, Stage



EVALUATE = Stage(
    "evaluate", "Hit@k, Recall@k, MRR, nDCG@k, MAP, P@k, ... of one or more runs.",
    entry="inferqa.evaluation.metrics:evaluate_stage",
    description="One row per run (or per question with --per-query); the line under the table says how many "
                "questions were scored, left out (not judged) and counted 0 (judged, not in the run).",
    options=(
        Option("runs", (list, Path, object), REQUIRED, "runs: " + _RUN_HELP, positional=True, metavar="RUN...",
               item=Path),
        Option("qrels", (Path, object), None, "TREC qrels (qid 0 pid label), in Python also Qrels, a {qid: {pid: "
               "label}} dict, a ranx.Qrels or a frame (qid, docno, label); default: the --bench folder's qrels.tsv",
               flags=("--qrels",)),
        Option("bench", (Path, object), None, "benchmark folder (or a Benchmark): the run's passage ids are checked "
               "against its corpus; its qrels unless --qrels", flags=("--bench", "-b")),
        SPLIT, METRICS, PROTOCOL, MIN_LABEL_OPT, QUESTIONS_OPT,
        Option("per_query", bool, False, "also give every question's values"),
        ALLOW_PARTIAL,
    ))

COMPARE = Stage(
    "compare", "Each run against the first: per metric its value, the difference with its 95 % CI, and the "
    "corrected p-value of a paired test (docs/field.md#comparing-runs).",
    entry="inferqa.evaluation.comparison:compare_stage",
    options=(
        Option("runs", (list, object), REQUIRED, "runs as PATH or NAME=PATH, the first the baseline: " + _RUN_HELP,
               positional=True, metavar="RUN...", item=str),
        Option("bench", (Path, object), REQUIRED, "benchmark folder (its qrels; run ids are checked), in Python "
               "also a Benchmark or qrels", flags=("--bench", "-b")),
        SPLIT,
        Option("metrics", (list, str, object), list(COMPARE_METRICS), "measures, named as for evaluate",
               flags=("--metrics", "-m"), item=str),
        Option("test", str, "randomisation", "randomisation (paired sign flips; CI: percentile bootstrap) | t "
               "(paired t-test; CI: t interval) | bootstrap (percentile bootstrap, p from the same resamples)"),
        Option("correction", str, "holm", "holm | bonferroni | none: over the runs compared, per metric"),
        MIN_LABEL_OPT, PROTOCOL, QUESTIONS_OPT,
        Option("seed", int, TEST_SEED, "seed of the resamples and sign flips"),
        Option("resamples", int, RESAMPLES, "bootstrap resamples and random sign flips", min=1),
        Option("confidence", float, CONFIDENCE, "confidence of the intervals", min=0.0, max=1.0, min_open=True),
        ALLOW_PARTIAL,
    ))

EVALUATE_ANSWERS = Stage(
    "evaluate-answers", "Print EM, F1 and contains (and the LLM judge's accuracy) per strategy and k.",
    entry="inferqa.reading.answer_scoring:evaluate_answers_stage",
    options=(
        Option("answers", Path, REQUIRED, "ANSWERS.jsonl written by `inferqa read`, or an authors' reader "
               "output (Rankify JSON with predicted_answer)", positional=True, metavar="ANSWERS"),
        Option("bench", (Path, object), None, "re-score against this benchmark's gold answers (default: the rows' "
               "golds)", flags=("--bench", "-b")),
        Option("split", str, None, "only the rows of this split's questions (needs --bench)"),
        Option("judge", str, None, "LLM spec of an answer-equivalence judge (GPT-Eval style)"),
        replace(JUDGE_SAMPLES, name="judge_samples"),
        replace(JUDGE_TEMPERATURE, name="judge_temperature"),
        Option("cache", Path, None, "SQLite cache of LLM calls (default $INFERQA_LLM_CACHE, $INFERQA_CACHE/llm.sqlite "
               "or ~/.cache/inferqa/llm.sqlite)"),
        Option("protocol", str, "inferqa", "inferqa: normalised EM | paper: the QUIT authors' answer cleaning, then "
               "exact case-sensitive EM (inferqa.evaluation.exact_match)"),
    ))
