"""Answers files (ANSWERS.jsonl as `read_with_llm` writes it, or an authors' reader output):
open them, checked field by field and against a benchmark, and score them."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

from ..errors import InputError
from ..evaluate.answers import paper_exact_match, score_row
from ..evaluate.metrics import check_protocol  # EM: normalised (ours), or the authors' cleaning + exact match
from .answers import answer_judge

if TYPE_CHECKING:
    from ..benchmark import Benchmark
    from ..llm.base import LLM

METRICS = ("em", "f1", "contains")


def _text(row: dict, key: str, file: Any, where: str) -> str:
    value = row.get(key)
    if not isinstance(value, str) or (key != "prediction" and not value.strip()):
        got = "missing" if key not in row else f"{type(value).__name__}, not a string"
        raise InputError(f"expected a string ({got})", file=file, record=where, field=key)
    return value


def open_answers(path: str | os.PathLike, bench: "Benchmark | None" = None) -> list[dict[str, Any]]:
    """Every row of an answers file, each field checked; with `bench`, each question must be
    one of its questions and the golds and question text come from it (else from the rows)."""
    from ..runfiles import iter_answer_rows

    rows = []
    for where, row in iter_answer_rows(path):
        qid, strategy = _text(row, "qid", path, where), _text(row, "strategy", path, where)
        pred = _text(row, "prediction", path, where)
        k = row.get("k")
        if not isinstance(k, int) or isinstance(k, bool) or k < 1:
            raise InputError(f"expected a positive integer, got {k!r}", file=path, record=where, field="k")
        golds, question = row.get("golds"), row.get("question")
        if bench is not None:
            q = bench.questions.get(qid)
            if q is None:
                raise InputError(f"question {qid!r} is not in the benchmark {bench.path}", file=path,
                                 record=where, field="qid")
            golds, question = q.answers, q.text
        if not isinstance(golds, list) or not golds or not all(isinstance(g, str) for g in golds):
            raise InputError("no gold answers (a list of strings; or give --bench)", file=path,
                             record=where, field="golds")
        rows.append({**row, "qid": qid, "strategy": strategy, "k": k, "prediction": pred, "golds": golds,
                     "question": question})
    if not rows:
        raise InputError("no answer rows", file=path)
    return rows


def score_answers(rows: list[dict[str, Any]], judge: "LLM | None" = None, *, judge_samples: int = 3,
                  judge_temperature: float = 0.7, protocol: str = "inferqa") -> tuple[str, ...]:
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

