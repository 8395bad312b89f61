"""`inferqa diagnose monotonicity` and `diagnose window`, and their Python calls `monotonicity`
and `window` (the benchmark, and the retriever, by position as docs/diagnose.md writes them)."""

from __future__ import annotations

import math
import os
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Sequence

from ..errors import InputError
from ..parameters import RESAMPLES, RETRIEVE_SPLIT, RETRIEVER
from ..registry import REQUIRED, Option
from ..stage import Opt, stage

if TYPE_CHECKING:
    from ..formats import Benchmark, Run
    from ..retrieve import Retriever
    from .monotonicity import MonotonicityReport
    from .window import WindowReport

Bench = Annotated["Path | Benchmark", Opt("benchmark folder, or a Benchmark", flags=("--bench", "-b"))]


@stage("diagnose monotonicity")
def diagnose_monotonicity(
        *, bench: Bench,
        retriever: Annotated["str | Retriever", Opt("retriever name (`inferqa plugins retriever`), or a Retriever",
                                                    flags=("--retriever", "-r"))] = RETRIEVER.default,
        model: Annotated["str | None", Opt("the retriever's model option (a folder, HF id or alias)")] = None,
        options: Annotated["dict | None", Opt("retriever option KEY=VALUE (repeatable), e.g. --opt compose=monotone",
                                              flags=("--opt",), metavar="KEY=VALUE")] = None,
        split: Annotated[str, replace(RETRIEVE_SPLIT, help="questions diagnosed (all: every question)")]
        = RETRIEVE_SPLIT.default,
        index_dir: Annotated["Path | None", Opt("index directory (default: BENCH/indexes/<retriever>-<hash of "
                                                "options>/, built there when missing)")] = None,
        seed: Annotated[int, Opt("seed of the bootstrap over questions")] = 0,
        resamples: Annotated[int, Opt("bootstrap resamples of the questions for the 95% CI", min=1)] = RESAMPLES,
) -> MonotonicityReport:
    """Evidence monotonicity of a retriever: how often adding one hint to a passage lowers its score.

    For each question of the split, each set S of its hints and each hint h not in S is one
    addition S → S∪{h}; a set's score is the retriever's score of its passages averaged over
    their orderings, and an addition whose score drops is a violation (a tie is not). EMVR =
    violations / additions, with a bootstrap CI over questions (docs/diagnose.md).
    """
    from ..formats.coerce import as_benchmark
    from .monotonicity import (MonotonicityReport, attach_index, hint_additions, named_retriever, question_passages,
                               rates, score_sets)

    bench = as_benchmark(bench)
    qids = bench.split_qids(split)
    if not qids:  # every input is checked before an index is built or a passage scored
        raise InputError(f"split {split!r} holds no questions", file=bench.path / "splits.json", field="split")
    r, given = named_retriever(retriever, model, options)
    passages = question_passages(bench, qids)
    attach_index(r, bench, index_dir)
    adds = hint_additions(score_sets(r, bench, qids, passages))
    if not len(adds):
        raise InputError(f"split {split!r}: no question has passages of a hint set and of it with one hint more",
                         file=bench.path, field="split")
    overall, by_stage, by_rank = rates(adds, len(qids), seed, resamples)
    return MonotonicityReport(str(bench.path), split, r.name, given, len(qids), seed, resamples,
                              overall, by_stage, by_rank)


def monotonicity(bench: "Benchmark | str | os.PathLike", retriever: "str | Retriever" = RETRIEVER.default,
                 **options: Any) -> MonotonicityReport:
    """`diagnose_monotonicity` with `bench` (a folder or a `Benchmark`) and `retriever` (a name, or a
    `Retriever` attached to the benchmark's index or not) by position. See `MonotonicityReport`."""
    return diagnose_monotonicity(bench=bench, retriever=retriever, **options)


# Each of the window's depths (the list option checks only that it is a list).
_DEPTH = Option("depths", int, REQUIRED, min=1)


@stage("diagnose window")
def diagnose_window(
        run: Annotated["Path | Run", Opt("a TREC run (any run file `inferqa evaluate` reads; in Python also a Run or "
                                         "a {qid: {pid: score}} dict)", metavar="RUN")], *,
        bench: Bench,
        depths: Annotated[list[int], Opt("window sizes k, each an integer ≥ 1", flags=("--depth",),
                                         metavar="K")] = [10, 20, 100],  # never changed: the body sorts a copy
        split: Annotated["str | None", Opt("only the run's questions of this split (none: every question of the "
                                           "run)")] = None,
) -> WindowReport:
    """The reranking window of a run: distinct questions in its top k, and the best a reranker
    could do over k passages or k distinct questions.

    A QUIT question's passages are orderings of the same hints, so its near-copies fill the head
    of a ranking. Per depth k, means over the run's questions with a relevant passage: distinct
    questions and hint sets in the top k; Hit@k; and the share whose first k distinct questions
    (hint sets) of the whole ranking hold a relevant passage (docs/diagnose.md#window).
    """
    from ..defaults import MIN_LABEL
    from ..formats.coerce import as_benchmark, as_run
    from ..hints import hint_group_key
    from .window import FIELDS, GroupView, WindowReport

    if not depths:
        raise InputError("diagnose window: give at least one depth", field="depths")
    depths = sorted({_DEPTH.check(k, "diagnose window", text=False) for k in depths})
    bench = as_benchmark(bench)
    if split is not None:
        bench.split_qids(split)  # an unknown split refused before the run is read
    run = as_run(run, bench, split)
    min_label = MIN_LABEL.default
    relevant = {q: {p for p, label in bench.qrels.get(q, {}).items() if label >= min_label} for q in run.qids}
    judged = [q for q in run.qids if relevant[q]]
    if not judged:
        raise InputError(f"no question of the run has a passage of label ≥ {min_label} in the benchmark's qrels",
                         file=bench.path / "qrels.tsv", field="run")
    by_question, by_set = hint_group_key(bench, "question"), hint_group_key(bench, "set")
    records = {k: dict.fromkeys(FIELDS[1:], 0.0) for k in depths}
    for q in judged:
        ranked = run[q]
        hit = next((i for i, (p, _) in enumerate(ranked) if p in relevant[q]), math.inf)
        questions, sets = GroupView.of(ranked, relevant[q], by_question), GroupView.of(ranked, relevant[q], by_set)
        for k, r in records.items():
            r["distinct_questions"] += questions.distinct_in_top(k)
            r["distinct_sets"] += sets.distinct_in_top(k)
            r["recall"] += hit < k
            r["recall_distinct_questions"] += questions.first_relevant_group < k
            r["recall_distinct_sets"] += sets.first_relevant_group < k
    rows = tuple({"k": k, **{f: v / len(judged) for f, v in r.items()}} for k, r in records.items())
    return WindowReport(str(bench.path), split, len(judged), len(run.qids) - len(judged), min_label, rows)


def window(run: "Run | str | os.PathLike", bench: "Benchmark | str | os.PathLike", *,
           depths: int | Sequence[int] | None = None, split: str | None = None) -> WindowReport:
    """`diagnose_window` with `run` and `bench` (objects or paths) by position; `depths`: one k or a
    sequence (None: 10, 20, 100). See `WindowReport`; docs/diagnose.md#window."""
    if depths is not None:
        depths = [depths] if isinstance(depths, int) else list(depths)
    return diagnose_window(run, bench=bench, depths=depths, split=split)
