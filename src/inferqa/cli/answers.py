"""`inferqa evaluate-answers`: EM, F1, contains (and an LLM judge) of an answers file."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..stage_options import JUDGE_SAMPLES, JUDGE_TEMPERATURE
from .app import app
from .flags import format_flag, json_flag, option_flag, chosen_format
from .llm_options import cache_opt, llm_opener
from .output import print_summary


@app.command("evaluate-answers")
def evaluate_answers_cmd(
    answers: Path = typer.Argument(..., help="ANSWERS.jsonl written by `inferqa read`, or an authors' reader "
                                   "output (Rankify JSON with predicted_answer)."),
    bench: Optional[Path] = typer.Option(None, "--bench", "-b",
                                         help="Re-score against this benchmark's gold answers (default: the rows' golds)."),
    judge: Optional[str] = typer.Option(None, "--judge", help="LLM spec of an answer-equivalence judge (GPT-Eval style)."),
    judge_samples: int = option_flag(JUDGE_SAMPLES, "--judge-samples", filled=True),
    judge_temperature: float = option_flag(JUDGE_TEMPERATURE, "--judge-temperature", filled=True),
    cache: Optional[Path] = cache_opt,
    protocol: str = typer.Option("inferqa", "--protocol", help="inferqa: normalised EM | paper: the QUIT authors' "
                                 "answer cleaning, then exact case-sensitive EM (inferqa.evaluate.answers)."),
    table_format: str = format_flag(),
    as_json: bool = json_flag,
) -> None:
    """Print EM, F1 and contains (and the LLM judge's accuracy) per strategy and k."""
    from ..formats.benchmark import Benchmark
    from ..errors import InputError
    from ..formats import Answers
    from ..read import score_answers
    from ..evaluate.metrics import check_protocol

    check_protocol(protocol)
    fmt = chosen_format(table_format, as_json)

    b = Benchmark(bench) if bench else None
    if judge and b is None:
        raise InputError("--judge needs --bench (the judge reads the question)", field="judge")
    rows = Answers.from_file(answers, b)
    model = llm_opener(cache)(judge) if judge else None
    try:
        metrics = score_answers(rows, model, judge_samples=judge_samples, judge_temperature=judge_temperature,
                                protocol=protocol)
    finally:
        if model is not None:
            model.close()
    print_summary(rows, metrics, f"{answers} ({len(rows)} rows, percent)", fmt)
