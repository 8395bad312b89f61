"""`inferqa finetune KIND`: a retriever, clue encoder, ColBERT or reranker trained on a benchmark
split. Every fine-tuner declares FINETUNER_OPTIONS with the registry (`@plugin("fine-tuner",
NAME, *FINETUNER_OPTIONS)`); the stage's own options are those and what every kind takes."""

from __future__ import annotations

from ..parameters import (FINETUNER_OPTIONS, OVERWRITE)  # noqa: F401 - re-exported until the stage moves
from ..defaults import DEFAULT_ENCODER

from dataclasses import replace
from pathlib import Path

from . import OVERWRITE, REQUIRED, Option, Stage


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
