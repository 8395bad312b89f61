"""`inferqa evaluate`, `inferqa compare` and `inferqa evaluate-answers`: the evaluation stages."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..defaults import MIN_LABEL, TEST_SEED
from . import REQUIRED, Option, Stage
from .llm import JUDGE_SAMPLES, JUDGE_TEMPERATURE

# inferqa's own nDCG gains 2^label - 1 (QUIT's); it is named so, nDCG@k being linear as elsewhere.
DEFAULT_METRICS: tuple[str, ...] = (
    "hit@1", "hit@5", "hit@10", "hit@50", "hit@100",
    "recall@5", "recall@10", "recall@50",
    "mrr", "ndcg_exp@10", "ndcg_exp@100",
)
COMPARE_METRICS: tuple[str, ...] = ("hit@10", "mrr", "ndcg_exp@10")
PROTOCOLS = ("inferqa", "paper")
# Which questions are scored (docs/field.md#which-questions-are-scored): every judged one, a
# judged question the run lacks counting 0 (ir_measures, trec_eval -c), or the run's judged ones.
QUESTIONS = ("judged", "run")
TESTS = ("randomisation", "t", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "none")
RESAMPLES = 10_000
CONFIDENCE = 0.95

_RUN_HELP = ("TREC (qid Q0 pid rank score tag) or Rankify/DPR JSON (ctxs / reranked_ctxs; needs --bench and "
             "--split), told apart by content; in Python also a Run, a {qid: {pid: score}} dict, a ranx.Run or "
             "a PyTerrier frame (qid, docno, score)")
METRICS = Option("metrics", (list, str, object), list(DEFAULT_METRICS),
                 "measures, any case, as ir_measures / ranx / trec_eval name them: hit@k (Success@k), recall@k "
                 "(R@k), P@k, mrr (RR), mrr@k, map (AP), map@k, nDCG@k (gain = label), ndcg_exp@k (gain "
                 "2^label-1, also nDCG(gain=exp)@k or nDCG(gains={0:0,1:1,2:3})@k), Judged@k, P(rel=2)@k, "
                 "ndcg_cut.10, P.5, ...; repeated flags add up", flags=("--metrics", "-m"), item=str)
PROTOCOL = Option("protocol", str, "inferqa", "inferqa (ours) | paper (the QUIT authors' rules: plain means over the "
                  "run's questions, precision over min(k, retrieved), duplicate passages kept, with --split a "
                  "question missing from the run an empty list, round 4); docs/paper.md")
QUESTIONS_OPT = Option("questions", str, "judged", "questions scored (inferqa protocol): judged = every judged "
                       "question (of --split), one the run lacks counting 0, as ir_measures and trec_eval -c; "
                       "run = only the run's judged questions, as trec_eval without -c; an unjudged question is "
                       "left out either way", choices=QUESTIONS)
MIN_LABEL_OPT = replace(MIN_LABEL, help=MIN_LABEL.help + "; at most the largest label; 2: fully relevant only",
                        flags=("--min-label",))
ALLOW_PARTIAL = Option("allow_partial", bool, False, "accept a Rankify/DPR JSON run of fewer questions than --split "
                       "(read as the split's first ones)")
SPLIT = Option("split", str, None, "only the questions of this split (needs --bench): a JSON run's questions are "
               "that split's, by position; a TREC run is cut to it")

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
