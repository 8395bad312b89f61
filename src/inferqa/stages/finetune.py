"""`inferqa finetune KIND`: a retriever, clue encoder, ColBERT or reranker trained on a benchmark
split. Every fine-tuner declares FINETUNER_OPTIONS with the registry (`@plugin("fine-tuner",
NAME, *FINETUNER_OPTIONS)`); the stage's own options are those and what every kind takes."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from ..defaults import DEFAULT_ENCODER, MIN_LABEL
from . import OVERWRITE, REQUIRED, Option, Stage

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
    Option("seed", int, 13, "seed of sampling, shuffling and initialisation"),
)

FINETUNE = Stage(
    "finetune", "Fine-tune a bi-encoder retriever, a ColBERT, a clue encoder (on hints or on hint sets) or a "
    "cross-encoder reranker on a benchmark split.",
    entry="inferqa.experiments.finetune:finetune_stage",
    output="self-checked folder",  # `io.refuse_existing_folder`
    options=(
        Option("kind", str, REQUIRED, "retriever, colbert, clue, clue-sets or reranker: `inferqa plugins fine-tuner` "
               "says what each trains", positional=True, metavar="KIND"),
        Option("bench", Path, REQUIRED, "benchmark directory", flags=("--bench",)),
        Option("out", Path, REQUIRED, "folder for the trained model (usable as --model PATH)", flags=("--out", "-o")),
        replace(OVERWRITE, help="replace the files a fine-tune writes in an existing --out folder (its other files "
                "stay)"),
        Option("model", str, DEFAULT_ENCODER, "initial weights: minilm, an HF id or a folder"),
        *FINETUNER_OPTIONS,
    ))
