"""Scoring the rows of an answers file (read by `inferqa.formats.Answers.from_file`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..evaluate.exact_match import paper_exact_match, score_row
from ..evaluate.metrics import check_protocol  # EM: normalised (ours), or the authors' cleaning + exact match
from ..stage_options import JUDGE_SAMPLES, JUDGE_TEMPERATURE
from .answer_judges import answer_judge

if TYPE_CHECKING:
    from ..formats import Answers
    from ..llm.base import LLM
    from ..stages import Settings

METRICS = ("em", "f1", "contains")


def score_answers(rows: list[dict[str, Any]], judge: "LLM | None" = None, *,
                  judge_samples: int = JUDGE_SAMPLES.default,
                  judge_temperature: float = JUDGE_TEMPERATURE.default, protocol: str = "inferqa") -> tuple[str, ...]:
    """Add em, f1, contains (and `judge`, the LLM judge's verdict) to every row, in place;
    returns the metric names set. `protocol="paper"`: EM as the QUIT authors compute it, exact
    membership of the answer in the golds, where the answer is a row's raw generation (`raw`,
    as `read_with_llm` keeps it) cleaned by `clean_answer_paper`, else its prediction as
    stored (an authors' reader output holds answers they cleaned already)."""
    check_protocol(protocol)
    if judge is not None and any(not isinstance(r.get("question"), str) for r in rows):
        raise InputError("the LLM judge reads the question: give --bench", field="judge")
    judged = (answer_judge("llm", llm=judge, samples=judge_samples, temperature=judge_temperature)
              if judge is not None else None)
    for row in rows:
        pred, golds = row["prediction"], row["golds"]
        row.update(score_row(pred, golds))
        if protocol == "paper":
            raw = row.get("raw")
            row["em"] = float(paper_exact_match(raw, golds) if isinstance(raw, str) else pred in golds)
        if judged is not None:
            row["judge"] = float(judged.correct(row["question"], pred, golds))
    return METRICS + (("judge",) if judge is not None else ())



def evaluate_answers_stage(s: "Settings") -> tuple["Answers", tuple[str, ...]]:
    """The entry point of `EVALUATE_ANSWERS`: the rows of `s.answers` (of `s.split` only, with a
    benchmark), scored by `score_answers`; returns (the rows, the metric names set)."""
    import os

    from ..formats import Answers
    from ..formats.coerce import as_benchmark
    from ..io import check_output
    from ..llm import DEFAULT_CACHE
    from ..scale import load_scaled_llm

    check_protocol(s.protocol)
    bench = None if s.bench is None else as_benchmark(s.bench)
    if s.judge and bench is None:
        raise InputError("--judge needs --bench (the judge reads the question)", field="judge")
    if s.split is not None and bench is None:
        raise InputError("split needs a benchmark (--bench DIR): its splits name the questions", field="split")
    if not isinstance(s.answers, (str, os.PathLike)):
        raise InputError("answers must be an answers file (ANSWERS.jsonl or an authors' reader output)",
                         field="answers")
    rows = Answers.from_file(s.answers, bench)
    if s.split is not None:
        wanted = set(bench.split_qids(s.split))
        rows = Answers([r for r in rows if r["qid"] in wanted])
        if not rows:
            raise InputError(f"no row of split {s.split!r}", file=s.answers, field="split")
    if s.cache is not None:
        check_output(s.cache)
    model = load_scaled_llm(s.judge, cache=DEFAULT_CACHE if s.cache is None else s.cache) if s.judge else None
    try:
        metrics = score_answers(rows, model, judge_samples=s.judge_samples, judge_temperature=s.judge_temperature,
                                protocol=s.protocol)
    finally:
        if model is not None:
            model.close()
    return rows, metrics
