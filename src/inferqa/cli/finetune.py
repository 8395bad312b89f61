"""`inferqa finetune`: a retriever, clue encoder or reranker trained on a benchmark split."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..defaults import DEFAULT_ENCODER
from .. import registry
from ..errors import InputError
from ..experiments import finetune as _fine_tuners  # noqa: F401 (registers the fine-tuners)
from .app import app
from .flags import option_flag

FINETUNE = registry.options_of("fine-tuner", "retriever")  # every fine-tuner declares the same options


@app.command("finetune")
def finetune_command(
    kind: str = typer.Argument(..., help="retriever, colbert, clue or reranker: `inferqa plugins fine-tuner` says what "
                               "each trains."),
    bench: Path = typer.Option(..., "--bench", help="Benchmark directory."),
    out: Path = typer.Option(..., "--out", "-o", help="Folder for the trained model (usable as --model PATH)."),
    split: Optional[str] = option_flag(FINETUNE["split"], "--split"),
    model: str = typer.Option(DEFAULT_ENCODER, "--model", help="Initial weights: minilm, an HF id or a folder."),
    positives: Optional[int] = option_flag(FINETUNE["positives"], "--positives"),
    negatives: Optional[int] = option_flag(FINETUNE["negatives"], "--negatives"),
    min_label: Optional[int] = option_flag(FINETUNE["min_label"], "--min-label"),
    negatives_from: Optional[str] = option_flag(FINETUNE["negatives_from"], "--negatives-from"),
    epochs: Optional[int] = option_flag(FINETUNE["epochs"], "--epochs"),
    batch_size: Optional[int] = option_flag(FINETUNE["batch_size"], "--batch-size"),
    lr: Optional[float] = option_flag(FINETUNE["lr"], "--lr"),
    max_questions: Optional[int] = option_flag(FINETUNE["max_questions"], "--max-questions"),
    max_steps: Optional[int] = option_flag(FINETUNE["max_steps"], "--max-steps"),
    seed: Optional[int] = option_flag(FINETUNE["seed"], "--seed"),
) -> None:
    """Fine-tune a bi-encoder retriever, a ColBERT, a clue encoder or a cross-encoder reranker on a benchmark split."""
    from ..io import check_output

    check_output(out, kind="dir")
    if kind not in registry.available("fine-tuner"):
        raise InputError(f"finetune KIND must be one of {', '.join(registry.available('fine-tuner'))}, not {kind!r} "
                         "(`inferqa plugins fine-tuner`)", field="kind")
    trainer = registry.create("fine-tuner", kind, split=split, positives=positives, negatives=negatives,
                              negatives_from=negatives_from, epochs=epochs, batch_size=batch_size, lr=lr,
                              max_questions=max_questions, max_steps=max_steps, seed=seed, min_label=min_label)
    path = trainer(bench, out, model=model)
    typer.echo(f"model: {path}")
