"""Evaluation: QUIT's ranking metrics, run checks, oracle runs, paired comparisons.

`evaluate` and `compare` (also `inferqa.evaluate`, `inferqa.compare`) call the stages of the
same names (`inferqa.evaluation.stage`), so Python checks a value as the command line does.
The names of `metrics`, `comparison` and `providers` load on first use: the command line
declares the stages without importing them.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from ..defaults import MIN_LABEL
from ..formats import OPTIMAL, check_run_ids, open_run, optimal, oracle_retriever
from ..parameters import COMPARE_METRICS, DEFAULT_METRICS, PROTOCOL, QUESTIONS_OPT
from . import stage as stages
from .measures import FAMILIES, SPELLINGS, Measure, parse_measure

if TYPE_CHECKING:
    from ..formats import Benchmark, Qrels, Run
    from .comparison import Comparison
    from .metrics import Metric, check_min_label, parse_metric, per_query_scores
    from .providers import PROVIDERS

# name -> its module, loaded on first use; the same as the TYPE_CHECKING imports above
_LAZY = {"Comparison": "comparison", "Metric": "metrics", "check_min_label": "metrics", "parse_metric": "metrics",
         "per_query_scores": "metrics", "PROVIDERS": "providers"}
_D = stages.compare.stage.default

__all__ = [
    "DEFAULT_METRICS", "FAMILIES", "MIN_LABEL", "Measure", "Metric", "PROVIDERS", "SPELLINGS", "check_min_label",
    "evaluate", "parse_measure", "parse_metric", "per_query_scores",
    "check_run_ids", "open_run", "OPTIMAL", "oracle_retriever", "optimal",
    "COMPARE_METRICS", "Comparison", "compare",
]


def evaluate(run: Run | str | os.PathLike, qrels: Qrels | Benchmark | str | os.PathLike,
             metrics: Any = DEFAULT_METRICS, min_label: int = MIN_LABEL.default, per_query: bool = False,
             protocol: str = PROTOCOL.default, *, split: str | None = None, allow_partial: bool = False,
             questions: str = QUESTIONS_OPT.default) -> dict:
    """Mean of each metric (`{"hit@10": 0.25, ...}`, rounded to 4 decimals under
    `protocol="paper"`), keyed by the names as given. `metrics` is one name (`"RR"`), a
    comma-separated string, ir_measures measure objects, or a list of these.

    `run` is a `Run`, a run file, a {qid: {pid: score}} dict, a ranx.Run or a PyTerrier
    frame; `qrels` is `Qrels`, a qrels file, a dict, a ranx.Qrels or a frame, or a benchmark
    (object or directory: its qrels, the run's passage ids checked against it, and `split`
    cuts the run to that split's questions); the run is read by `metrics.scored_run`.

    The questions scored (`metrics.scored_questions`): every judged question (of `split`), one
    the run lacks counting 0, as ir_measures does; one without a judgement is left out of every
    measure; `questions="run"` scores only the run's judged questions.

    With `per_query=True`: `{"mean": {...}, "per_query": {qid: {metric: value or None}}}`
    (None where a metric is undefined for that question: under `protocol="paper"`, hit@k with
    `min_label` 2 for a question without a label-2 passage).
    A mean over no defined question is NaN.
    """
    (evaluation,) = stages.evaluate([run], qrels=qrels, metrics=metrics, min_label=min_label, protocol=protocol,
                                    split=split, allow_partial=allow_partial, questions=questions)
    return evaluation.result(per_query)


def compare(runs: Sequence[Any] | Mapping[str, Any], qrels: Any, metrics: Any = COMPARE_METRICS, *,
            split: str | None = None, test: str = _D("test"), correction: str = _D("correction"),
            min_label: int = MIN_LABEL.default, protocol: str = PROTOCOL.default, allow_partial: bool = False,
            resamples: int = _D("resamples"), seed: int = _D("seed"), confidence: float = _D("confidence"),
            questions: str = QUESTIONS_OPT.default) -> Comparison:
    """Each run against the first: `runs` are `Run`s or run files (a list, or a dict name -> run);
    `qrels` as in `evaluate` (a benchmark, for `split` and for JSON runs); every run is read
    as `evaluate` reads it (`metrics.scored_run`: `min_label`, `protocol`, `allow_partial`) and
    scored on the questions `evaluate` scores (`questions`)."""
    from ..formats.coerce import as_run_list

    return stages.compare(dict(runs) if isinstance(runs, Mapping) else as_run_list(runs), bench=qrels,
                          metrics=metrics, split=split, test=test, correction=correction, min_label=min_label,
                          protocol=protocol, allow_partial=allow_partial, resamples=resamples, seed=seed,
                          confidence=confidence, questions=questions)


def __getattr__(name: str) -> Any:
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(f".{_LAZY[name]}", __name__), name)


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
