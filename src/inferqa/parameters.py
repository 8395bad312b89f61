"""The options several stages share, declared once: the parameter table.

A stage function (`inferqa.stage`) declares its own options in its signature; an option that
several stages or modules take (the split's seed, the LLM call cache, the diversification step,
the reader's union weights, ...) is declared here, once, as a registry `Option`, and a stage's
signature names it: `top_k: Annotated[int, TOP_K] = TOP_K.default`. The modules that apply an
option (the builder, the labellers, the retrievers) read its default from here too.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from .defaults import BACKEND, DEFAULT_ENCODER, DEFAULT_LLM, HINT_GROUPING, MIN_LABEL, NUM_ACTORS, ORACLE_SEED, TEST_SEED
from .llm.base import LLM
from .models import check_device
from .registry import KINDS, REQUIRED, Option

# The one --overwrite (every stage whose `out` names a file or folder it may replace declares it).
OVERWRITE = Option("overwrite", bool, False, "replace an existing --out that this command did not write (a file a "
                   "benchmark owns never)")

# The one torch `device` option of the model plugins (the transformers LLM, a layer below, declares
# its own with the same check): a device torch cannot read is refused before any model loads.
DEVICE = Option("device", str, None, "torch device (default: the library's choice)", validate=check_device)

# -- llm ---------------------------------------------------------------------------------------
CACHE = Option("cache", Path, None, "SQLite cache of LLM calls (default $INFERQA_LLM_CACHE, $INFERQA_CACHE/llm.sqlite "
               "or ~/.cache/inferqa/llm.sqlite)")
USE_CACHE = Option("use_cache", bool, True, "call the backend for every prompt", flags=("--no-cache",))
RAY_ADDRESS = Option("ray_address", str, None, "Ray cluster: auto, ray://HEAD:10001 (default: start Ray here)")
LLM_URLS = Option("llm_url", list, None, "with --backend ray and an openai: spec: one server URL per repeat; actors "
                  "take them round-robin", item=str)
CALL_CACHE = (CACHE, USE_CACHE)
# The LLM's call cache and its execution backend: one set, shared by the stages that call an LLM.
LLM_CALLS = (*CALL_CACHE, BACKEND, RAY_ADDRESS, NUM_ACTORS)
# The LLM answer judge (GPT-Eval style) of labelling, reading and evaluate-answers.
JUDGE_SAMPLES = Option("samples", int, 3, "votes of the LLM judge; the majority decides", min=1)
JUDGE_TEMPERATURE = Option("temperature", float, 0.7, "sampling temperature of the LLM judge (0: one greedy vote)",
                           min=0)

# -- diversify ---------------------------------------------------------------------------------
PER_GROUP = Option("diversify", int, REQUIRED, "at most N passages of one hint-group in the head; the rest "
                   "follow in order", min=1)
GROUPING = Option("diversify_by", str, HINT_GROUPING, "the hint-groups: set (the same hint texts) or linked (joined by "
                  "shared hint texts: a question's whole family of passages); `inferqa plugins hint-group`")
MARGIN = Option("diversify_margin", float, None, "adaptive: diversify a query only when its top hint-group's "
                 "score leads the next group's best score by less than this (unset: every query)", min=0.0)
SHARE = Option("diversify_share", float, None, "adaptive: diversify only this share of the queries, those "
                "whose top hint-group leads the next by least (ties by qid; unset: every query)", min=0.0, max=1.0)
DIVERSIFY_OPTIONS = (PER_GROUP, GROUPING, MARGIN, SHARE)

# -- evaluate ----------------------------------------------------------------------------------
# inferqa's own nDCG gains 2^label - 1 (QUIT's); it is named so, nDCG@k being linear as elsewhere.
DEFAULT_METRICS: tuple[str, ...] = (
    "hit@1", "hit@5", "hit@10", "hit@50", "hit@100",
    "recall@5", "recall@10", "recall@50",
    "mrr", "ndcg_exp@10", "ndcg_exp@100",
)
COMPARE_METRICS: tuple[str, ...] = ("hit@10", "mrr", "ndcg_exp@10")
# Which questions are scored (docs/field.md#which-questions-are-scored): every judged one, a
# judged question the run lacks counting 0 (ir_measures, trec_eval -c), or the run's judged ones.
QUESTIONS = ("judged", "run")
TESTS = ("randomisation", "t", "bootstrap")
CORRECTIONS = ("holm", "bonferroni", "none")
TEST = Option("test", str, "randomisation", "randomisation (paired sign flips; CI: percentile bootstrap) | t (paired "
              "t-test; CI: t interval) | bootstrap (percentile bootstrap, p from the same resamples)", choices=TESTS)
# The doctor's check for tied scores (`inferqa doctor`, `evaluation.doctor.diagnose`).
TIE_LENGTH = Option("tie_length", int, 10, "report runs of at least this many equal scores", min=2)
CORRECTION = "holm"  # compare's default, and the experiment report's (its marks, its tests tables)
RESAMPLES = 10_000
CONFIDENCE = 0.95
RUN_FILES_HELP = ("TREC (qid Q0 pid rank score tag) or Rankify/DPR JSON (ctxs / reranked_ctxs; needs --bench and "
                  "--split), told apart by content; in Python also a Run, a {qid: {pid: score}} dict, a ranx.Run "
                  "or a PyTerrier frame (qid, docno, score)")
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
EVAL_SPLIT = Option("split", str, None, "only the questions of this split (needs --bench): a JSON run's questions are "
               "that split's, by position; a TREC run is cut to it. Default: the split that holds every question of "
               "the run (as retrieve made it), else all; 'all': every question")

# -- build -------------------------------------------------------------------------------------
# passage ids spell hint indices with one digit each: at most 10 hints
TOP_K = Option("top_k", int, 5, "hints kept per question", min=1, max=10)
BUILD_SPLIT = Option("split", str, "0.7,0.1,0.2", "the train,dev,test split: fractions, counts (5000,862,1539), 'source' "
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
LEAK_JUDGE = Option("leak_judge", str, "string", "the leak judge (`inferqa plugins leak-judge`); the string rule always "
                    "runs first")
LEAK_POLICY = Option("leak_policy", str, "drop-hint", "drop-hint: remove leaking hints, keep the question; "
                     "drop-question: drop it (the paper's choice); none: no filter (data already filtered, e.g. the "
                     "QUIT release)")
# The leak judges' options as build and annotate import spell them.
LEAK_THRESHOLD_FLAG = replace(LEAK_THRESHOLD, name="leak_threshold", flags=("--leak-threshold",))
LEAK_LLM_FLAG = replace(LEAK_LLM, name="leak_llm", flags=("--leak-llm",))
LABEL_MODE = Option("label_mode", str, "full", "full: every ordering; subsets: one ordering per subset, label copied "
                    "to the others (an approximation)")
STOP_AT_FIRST_CORRECT = Option("stop_at_first_correct", bool, False, "with --label: ask the labellers in turn and "
                               "stop at the first that is right (same labels; skipped labellers recorded as not asked)",
                               flags=("--stop-at-first-correct",))
LABELERS = replace(LABELER, type=list, default=None, nullable=False, item=str)
PARAMETRIC = Option("parametric", bool, False, "ask each labeller every question with no context; write "
                    "parametric.jsonl")
LABELER_WORDS = {"labeler": {"takes": "text", "shown_default": LABELER.default}}
# The flags whose None the build resolves (the declared default, or the demo's with --demo alone).
BUILD_FLAG_WORDS = {
    "top_k": {"shown_default": str(TOP_K.default), "note": f"{DEMO_BUILD['top_k']} with --demo alone"},
    "split": {"shown_default": BUILD_SPLIT.default, "note": f"{','.join(map(str, DEMO_BUILD['split']))} with --demo alone"},
    "seed": {"shown_default": str(SEED.default)},
    **LABELER_WORDS,
}
SHEET_FORMAT = Option("fmt", str, None, "sheet format (default: from the file's suffix, csv otherwise)",
                      choices=("csv", "jsonl"), flags=("--format", "-f"))
# The help of the flags a plugin owns (`cli.stage_command.flag_text`'s parts).
LEAK_FLAG_WORDS = {"leak_threshold": {"owner": "embedding leak judge"}, "leak_llm": {"owner": "llm leak judge"}}
BUILD_FLAG_WORDS.update(LEAK_FLAG_WORDS)

# -- retrieve ----------------------------------------------------------------------------------
DEPTH = Option("depth", int, 1000, "passages per question in the run", min=1)
BENCH = Option("bench", (Path, object), REQUIRED, "benchmark directory written by `inferqa build` (in Python also "
               "a Benchmark)", positional=True, metavar="BENCH_DIR")
RETRIEVE_SPLIT = Option("split", str, "test", "questions to retrieve for: train | dev | test | all")
# The split a tuning grid chooses on (tune-diversify, tune-union).
TUNE_SPLIT = Option("split", str, "dev", "split to tune on")
# The retriever and its options (their help, where the CLI prints it, is the plugins' own).
RETRIEVER = Option("retriever", str, "bm25", "retriever (`inferqa plugins retriever NAME`: its options)",
                   flags=("--retriever", "-r"))
SHORTCUTS = (Option("model", str, None, "the retriever's model", flags=("--model",)),
             Option("dedup", bool, None, "sets dedup to false", flags=("--no-dedup",)),
             Option("k1", float, None, "bm25: term-frequency saturation"),
             Option("b", float, None, "bm25: length normalisation"),
             Option("query_prefix", str, None, "text put before each query"),
             Option("passage_prefix", str, None, "text put before each passage"),
             Option("batch_size", int, None, "encoding batch size"),
             Option("index_type", str, None, "dense: flat or hnsw"))
RETRIEVER_OPTIONS = (RETRIEVER, *SHORTCUTS,
                     Option("options", dict, None, "extra retriever option KEY=VALUE (repeatable), e.g. --opt "
                            "hnsw_m=48", flags=("--opt",)),
                     Option("index_dir", Path, None, "index directory (default: BENCH/indexes/<retriever>-<hash "
                            "of options>/)"))
_TUNED = "`inferqa tune-diversify` chooses it"
# N's range is checked with the other three by `diversification.check_diversify` (its own words).
DIVERSIFY = (replace(PER_GROUP, default=None, min=None, help=f"{PER_GROUP.help}; N ≥ 1"),
             replace(GROUPING, default=None, help=f"{GROUPING.help}; unset: {GROUPING.default}"),
             replace(MARGIN, help=f"{MARGIN.help}; needs --diversify; {_TUNED}"),
             replace(SHARE, help=f"{SHARE.help}; needs --diversify; not with --diversify-margin; {_TUNED}"))

# The fusion method of `inferqa fuse`, `inferqa.fuse` and the experiment file.
FUSION_METHOD = Option("method", str, "rrf", "fusion method (`inferqa plugins fusion`: what each computes)")

# -- read --------------------------------------------------------------------------------------
READER_LLM = Option("llm", str, DEFAULT_LLM, "LLM spec of the reader: smollm2, gemma3-270m, llama-cpp:/path.gguf, "
                    "openai:MODEL@URL or transformers:ID_OR_PATH")
READ_STRATEGIES = Option("strategies", list, ["union_norm"], "context strategies: union_norm, union_freq or concat")
READ_KS = Option("ks", list, [1, 3, 5], "top-k passages merged into one context, one reading per k")
READ_K = Option("k", int, REQUIRED, "top-k passages merged into one context", min=1)  # each of READ_KS
# union_freq's weights (the context strategy's options, `inferqa.reading.context`).
UNION_ALPHA = Option("alpha", float, 0.6, "weight of 1/rank of the passage", min=0)
UNION_BETA = Option("beta", float, 0.4, "weight of 1/position of the hint in its passage", min=0)
RUN_HELP = "a TREC run file, or 'optimal' for every relevant passage sorted by label (the oracle pipeline)"
BENCH_FLAG = Option("bench", Path, REQUIRED, "benchmark directory written by `inferqa build`", flags=("--bench", "-b"))
READER_LLM_FLAG = replace(READER_LLM, flags=("--llm",))

# -- rerank ------------------------------------------------------------------------------------
# The one declaration of the rerank depth: rerank_run, Reranker.rerank, the experiment file and --depth read it.
RERANK_DEPTH = Option("depth", int, 100, "the top DEPTH passages of each question are reranked; the rest "
                      "stays below in its order", min=1)
# The one declaration of the rerank window: rerank_run, the experiment file and --window read it.
RERANK_WINDOW = Option("window", str, "plain", "which candidates the --depth reranker calls score: plain, the top "
                       "--depth passages; question, set or linked (a hint-group, `inferqa plugins hint-group`), one "
                       "representative per group, the first of each in the run's order, each followed by its "
                       "group's other passages in the run's order", metavar="WINDOW")
# What a distinct window scores for each group (`Reranker.rerank_question`).
RERANK_REPRESENTATIVE = Option("representative", str, "first", "what a distinct --window scores per group: first, "
                               "its first passage in the run's order; all-hints (--window question only), the "
                               "question's passage of all its hints, held by the run or not",
                               choices=("first", "all-hints"))

# -- tune --------------------------------------------------------------------------------------
# The adaptive diversification margin's grid, as shares of the queries (`inferqa.tune.tune_margin`).
DEFAULT_SHARES = [i / 10 for i in range(11)]  # from no query diversified to all
# union_freq's alpha/beta grid search by reader EM (`inferqa.tune.union.tune_union`).
TUNE_KS = Option("ks", list, [3, 5], "cutoffs whose mean EM the union_freq grid search maximises")
TUNE_ALPHAS = Option("alphas", list, [round(a / 10, 1) for a in range(11)],
                     "alpha grid; beta = 1 - alpha (only their ratio orders hints)")
TUNE_ALPHA = Option("alpha", float, REQUIRED, "union_freq weight of 1/rank in a tuning grid (beta = 1 - alpha)",
                    min=0, max=1)  # each of TUNE_ALPHAS

# -- finetune ----------------------------------------------------------------------------------
FINETUNE_SEED = Option("seed", int, 13, "seed of sampling, shuffling and initialisation")
# `finetune upr`'s starting weights: the bundled LLM, converted from its GGUF to trainable floats.
UPR_START = Option("model", str, DEFAULT_LLM, "causal LM to start from: smollm2 (bundled), an HF id or a folder")
FINETUNER_OPTIONS = (
    Option("split", str, "train", "split to train on"),
    Option("positives", int, 10, "positive passages per question (the paper tries 1 .. 200)", min=1),
    Option("negatives", int, 10, "hard negatives per question (0: in-batch negatives only)", min=0),
    Option("negatives_from", str, "bm25", "negatives from bm25, dense, clue, random or a TREC run file"),
    replace(MIN_LABEL, help="lowest label counted as positive (2: answerable only)"),
    Option("epochs", int, 1, "passes over the examples", min=1),
    Option("batch_size", int, 32, "examples per step (in-batch negatives need two)", min=2),
    Option("lr", float, 2e-5, "learning rate", min=0, min_open=True),
    Option("warmup_ratio", float, 0.1, "share of the steps the learning rate warms up over", min=0, max=1),
    Option("max_length", int, 128, "tokens kept per text", min=1),
    Option("max_questions", int, None, "use the first N questions", min=1),
    Option("max_steps", int, None, "stop after N optimiser steps", min=1),
    FINETUNE_SEED,
)

# -- experiment --------------------------------------------------------------------------------
PROGRESS = Option("progress", bool, True, "per-stage progress bars")
# The explorer page (`inferqa explore` and each experiment's explorer.html).
EXPLORER_DEPTH = Option("depth", int, 10, "passages shown per run and question", min=1)
