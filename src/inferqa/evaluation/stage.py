"""`inferqa evaluate`, `compare` and `doctor`: the evaluation stages.

`inferqa.evaluate(run, qrels)` and `inferqa.compare(runs, qrels)` call `evaluate` and
`compare` here (`inferqa.evaluation`), so the Python API checks what the command line checks.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from ..defaults import TEST_SEED
from ..errors import InputError
from ..parameters import (ALLOW_PARTIAL, COMPARE_METRICS, CONFIDENCE, CORRECTION, CORRECTIONS, EVAL_SPLIT, METRICS,
                          MIN_LABEL_OPT, PROTOCOL, QUESTIONS_OPT, RESAMPLES, RUN_FILES_HELP, TEST, TIE_LENGTH)
from ..stage import Opt, stage

if TYPE_CHECKING:
    from ..formats import Benchmark, Qrels, Run
    from .comparison import Comparison
    from .metrics import Evaluation

Split = Annotated["str | None", EVAL_SPLIT]
Protocol = Annotated[str, PROTOCOL]
MinLabel = Annotated[int, MIN_LABEL_OPT]
Questions = Annotated[str, QUESTIONS_OPT]
AllowPartial = Annotated[bool, ALLOW_PARTIAL]


@stage("evaluate")
def evaluate(runs: Annotated["list[Path] | Path | Run", Opt("runs: " + RUN_FILES_HELP, metavar="RUN...")], *,
             qrels: Annotated["Path | Qrels | None", Opt(
                 "TREC qrels (qid 0 pid label), in Python also Qrels, a {qid: {pid: label}} dict, a ranx.Qrels or a "
                 "frame (qid, docno, label); default: the --bench folder's qrels.tsv", flags=("--qrels",))] = None,
             bench: Annotated["Path | Benchmark | None", Opt(
                 "benchmark folder (or a Benchmark): the run's passage ids are checked against its corpus; its "
                 "qrels unless --qrels", flags=("--bench", "-b"))] = None,
             split: Split = EVAL_SPLIT.default,
             metrics: Annotated["list[str] | str | object", METRICS] = METRICS.default,
             protocol: Protocol = PROTOCOL.default, min_label: MinLabel = MIN_LABEL_OPT.default,
             questions: Questions = QUESTIONS_OPT.default,
             per_query: Annotated[bool, Opt("also give every question's values")] = False,
             allow_partial: AllowPartial = ALLOW_PARTIAL.default) -> list[Evaluation]:
    """Hit@k, Recall@k, MRR, nDCG@k, MAP, P@k, ... of one or more runs.

    One row per run (or per question with --per-query); the line under the table says how many
    questions were scored, left out (not judged) and counted 0 (judged, not in the run)."""
    from .metrics import (checked_min_label, named_runs, qrels_and_bench, resolve, run_split, scope_of, score,
                          scored_run)

    measures = resolve(metrics, min_label, protocol)
    qrels, bench = qrels_and_bench(qrels, bench)
    if not qrels:
        raise InputError("qrels are empty", field="qrels")
    min_label = checked_min_label(min_label, qrels)
    loaded = [(name, scored_run(run, bench, split, min_label=min_label, protocol=protocol,
                                allow_partial=allow_partial)) for name, run in named_runs(
        runs if isinstance(runs, list) else [runs])]
    scored = run_split(bench, [run for _, run in loaded], split, protocol)
    scope = scope_of(bench, scored)
    out = [score(name, run, qrels, measures, scope=scope, split=scored, min_label=min_label, protocol=protocol,
                 questions=questions) for name, run in loaded]
    for e in out:
        e.inferred_split = scored if split is None else None
    return out


@stage("compare")
def compare(runs: Annotated["list[str] | dict", Opt("runs as PATH or NAME=PATH, the first the baseline: "
                                                    + RUN_FILES_HELP, metavar="RUN...")], *,
            bench: Annotated["Path | Benchmark | Qrels", Opt(
                "benchmark folder (its qrels; run ids are checked), in Python also a Benchmark or qrels",
                flags=("--bench", "-b"))],
            split: Split = EVAL_SPLIT.default,
            metrics: Annotated["list[str] | str | object", Opt("measures, named as for evaluate",
                                                               flags=("--metrics", "-m"))] = list(COMPARE_METRICS),
            test: Annotated[str, TEST] = TEST.default,
            correction: Annotated[str, Opt("holm | bonferroni | none: over the runs compared, per metric",
                                           choices=CORRECTIONS)] = CORRECTION,
            min_label: MinLabel = MIN_LABEL_OPT.default, protocol: Protocol = PROTOCOL.default,
            questions: Questions = QUESTIONS_OPT.default,
            seed: Annotated[int, Opt("seed of the resamples and sign flips")] = TEST_SEED,
            resamples: Annotated[int, Opt("bootstrap resamples and random sign flips", min=1)] = RESAMPLES,
            confidence: Annotated[float, Opt("confidence of the intervals", min=0.0, max=1.0, min_open=True)]
            = CONFIDENCE,
            allow_partial: AllowPartial = ALLOW_PARTIAL.default) -> Comparison:
    """Each run against the first: per metric its value, the difference with its 95 % CI, and the
    corrected p-value of a paired test (docs/field.md#comparing-runs)."""
    from ..formats.coerce import as_qrels
    from .comparison import tested
    from .metrics import (checked_min_label, named_runs, per_query_scores, resolve, run_split, scope_of,
                          scored_questions, scored_run)

    named = named_runs(runs)
    if len(named) < 2:
        raise InputError("compare needs at least two runs (the first is the baseline)", field="runs")
    measures = resolve(metrics, min_label, protocol)  # names as in `evaluate`
    qrels, bench = as_qrels(bench)
    min_label = checked_min_label(min_label, qrels)
    loaded = [(name, scored_run(run, bench, split, min_label=min_label, protocol=protocol,
                                allow_partial=allow_partial)) for name, run in named]
    split = run_split(bench, [run for _, run in loaded], split, protocol)
    scope = scope_of(bench, split)
    first = loaded[0][1]
    qids = list(first) if protocol == "paper" else scored_questions(first, qrels, scope, questions)[0]
    if not qids:
        raise InputError(f"run {loaded[0][0]!r} has no judged question" + (f" of split {split!r}" if split else ""),
                         field="runs")
    scores, missing = [], []
    for _, run in loaded:
        missing.append(sum(q not in run for q in qids))
        scores.append(per_query_scores(run.only(qids, fill=True), qrels, measures, min_label, protocol)[1])
    return tested([n for n, _ in loaded], scores, missing, len(qids), test=test, correction=correction,
                  resamples=resamples, seed=seed, confidence=confidence)


@stage("doctor")
def doctor(run: Annotated[Path, Opt("run file: TREC or Rankify/DPR JSON (told apart by content)",
                                    metavar="RUN_FILE")], *,
           bench: Annotated[Path, Opt("benchmark directory the run is about", flags=("--bench",))],
           split: Annotated["str | None", Opt("split the run covers; needed for JSON runs")] = None,
           tie_length: Annotated[int, TIE_LENGTH] = TIE_LENGTH.default,
           as_json: Annotated[bool, Opt("print the report as JSON", flags=("--json",))] = False) -> dict[str, Any]:
    """Ids not in the corpus, missing questions, duplicates, title/id disagreements, tied scores
    (exit 1 on any; ties among the orderings of one hint set are by design and only noted)."""
    from ..formats.benchmark import Benchmark
    from .doctor import diagnose

    return diagnose(run, Benchmark(bench), split, tie_length)
