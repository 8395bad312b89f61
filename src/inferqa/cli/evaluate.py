"""`inferqa evaluate`: QUIT's metrics for a run (TREC, or Rankify/DPR JSON matched to --split)."""

from __future__ import annotations

import math
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import List, Optional

import typer

from ..defaults import TEST_SEED
from ..errors import InputError
from ..tabular import MISSING, TextTable
from ..defaults import MIN_LABEL
from ..options import named_path
from .app import allow_partial_opt, app
from .flags import format_flag, json_flag, option_flag, chosen_format
from .output import print_tables


# evaluate and compare read and score runs alike (`scored_run`), so they take the same flags.
protocol_opt = typer.Option("inferqa", "--protocol", help="inferqa (ours) | paper (the QUIT authors' rules: "
                            "plain means over the run's questions, precision over min(k, retrieved), duplicate "
                            "passages kept, with --split a question missing from the run an empty list, round 4); "
                            "docs/paper.md.")
min_label_opt = option_flag(MIN_LABEL, "--min-label", note="at most the largest label; 2: fully relevant only")


@contextmanager
def _warnings_as_notes():
    """A warning of the computation (two spellings of one measure, ...) as one line on stderr."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield
    for w in caught:
        typer.echo(f"note: {w.message}", err=True)


def _fmt(v: float | None) -> str:
    return MISSING if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.2f}"


@app.command("evaluate")
def evaluate_cmd(
    run_file: Path = typer.Argument(..., help="Run: TREC (qid Q0 pid rank score tag) or Rankify/DPR JSON "
                                    "(ctxs / reranked_ctxs; needs --bench and --split), told apart by content."),
    qrels_file: Optional[Path] = typer.Option(None, "--qrels", help="TREC qrels (qid 0 pid label); "
                                              "default: the --bench directory's qrels.tsv."),
    bench_dir: Optional[Path] = typer.Option(None, "--bench", help="Benchmark directory: passage ids of the run "
                                             "are checked against its corpus."),
    split: Optional[str] = typer.Option(None, "--split", help="Split the run covers: a JSON run's questions are "
                                        "that split's, by position; a TREC run is cut to it."),
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Comma-separated, any case, as "
                                          "ir_measures / ranx / trec_eval name them: hit@k (Success@k), recall@k "
                                          "(R@k), P@k, mrr (RR), mrr@k, map (AP), map@k, nDCG@k (gain = label), "
                                          "ndcg_exp@k (gain 2^label-1, also nDCG(gain=exp)@k), Judged@k, "
                                          "P(rel=2)@k, ndcg_cut_k, ... (default: the paper's set)."),
    protocol: str = protocol_opt,
    min_label: Optional[int] = min_label_opt,
    table_format: str = format_flag(),
    as_json: bool = json_flag,
    per_query: bool = typer.Option(False, "--per-query", help="Also give every question's values."),
    allow_partial: bool = allow_partial_opt,
) -> None:
    """Hit@k, Recall@k, MRR, nDCG@k, MAP, P@k, ... over the run's questions."""
    from ..evaluate import DEFAULT_METRICS, check_min_label, evaluate
    from ..evaluate.metrics import check_protocol, scored_run
    from ..formats import Qrels

    fmt = chosen_format(table_format, as_json)
    if qrels_file is None and bench_dir is None:
        raise InputError("give --qrels QRELS (or --bench DIR to use its qrels.tsv)", field="qrels")
    if split is not None and bench_dir is None:
        raise InputError("--split needs --bench DIR (the split's questions come from it)", field="split")
    bench = None
    if bench_dir is not None:
        from ..formats.benchmark import Benchmark

        bench = Benchmark(bench_dir)
    check_protocol(protocol)
    qrels = Qrels.from_file(qrels_file) if qrels_file is not None else bench.qrels
    min_label = check_min_label(min_label, qrels)
    run = scored_run(run_file, bench, split, min_label=min_label, protocol=protocol, allow_partial=allow_partial)
    with _warnings_as_notes():
        res = evaluate(run, qrels, metrics or DEFAULT_METRICS, min_label=min_label, per_query=per_query,
                       protocol=protocol)
    if run and qrels and not any(q in qrels for q in run):
        typer.echo(f"inferqa: warning: the run's {len(run)} questions and the qrels' {len(qrels)} share none: "
                   "every value is 0 or undefined", err=True)
    means = res["mean"] if per_query else res
    payload = {"run": str(run_file), "questions": len(run), "min_label": min_label, "protocol": protocol,
               "metrics": means}
    if per_query:
        payload["per_query"] = res["per_query"]
    note = f"{len(run)} questions, relevant: label ≥ {min_label}, {protocol} protocol, values in percent"
    if not per_query:
        table = TextTable(f"{run_file.name} (%)", ("metric", "value"),
                          tuple((name, _fmt(v)) for name, v in means.items()), note=note)
    else:
        rows = [(qid, *(_fmt(vals[n]) for n in means)) for qid, vals in res["per_query"].items()]
        rows.append(("mean", *(_fmt(v) for v in means.values())))
        table = TextTable(f"{run_file.name} (%)", ("question", *means), tuple(rows),
                          rules=frozenset({len(rows) - 1}), note=note)
    print_tables([table], fmt, payload)


@app.command("compare")
def compare_cmd(
    runs: List[str] = typer.Argument(..., help="Runs (TREC, or Rankify JSON with --split) as PATH or NAME=PATH; "
                                     "the first is the baseline.", show_default=False),
    bench_dir: Path = typer.Option(..., "--bench", help="Benchmark directory (its qrels; run ids are checked)."),
    split: Optional[str] = typer.Option(None, "--split", help="Only the questions of this split."),
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Comma-separated, as for evaluate "
                                          "(default: hit@10,mrr,ndcg_exp@10)."),
    test: str = typer.Option("randomisation", "--test", help="randomisation (paired sign flips; CI: percentile "
                             "bootstrap) | t (paired t-test; CI: t interval) | bootstrap (percentile bootstrap, "
                             "p from the same resamples)."),
    correction: str = typer.Option("holm", "--correction", help="holm | bonferroni | none: over the runs compared, "
                                   "per metric."),
    min_label: Optional[int] = min_label_opt,
    protocol: str = protocol_opt,
    seed: int = typer.Option(TEST_SEED, "--seed", help="Seed of the resamples and sign flips."),
    table_format: str = format_flag(),
    as_json: bool = json_flag,
    allow_partial: bool = allow_partial_opt,
) -> None:
    """Each run against the first: per metric its value, the difference with its 95 % CI, and
    the corrected p-value of a paired test (docs/field.md#comparing-runs)."""
    from ..formats.benchmark import Benchmark
    from ..evaluate import COMPARE_METRICS, check_min_label, compare
    from ..evaluate.significance import check_correction, check_test

    fmt = chosen_format(table_format, as_json)
    check_test(test)
    check_correction(correction)
    named = {}
    for item in runs:
        name, path = named_path(item)
        if name in named:
            raise InputError(f"two runs are named {name!r}; name them NAME=PATH", field="runs")
        named[name] = path
    with _warnings_as_notes():
        result = compare(named, Benchmark(bench_dir), metrics or COMPARE_METRICS, split=split, test=test,
                         correction=correction, min_label=check_min_label(min_label), protocol=protocol,
                         allow_partial=allow_partial, seed=seed)
    title = (f"{result.questions} questions{f' of {split}' if split else ''}, vs {result.baseline} "
             f"(percent; {test} test, {correction} correction)")
    print_tables([result.text_table(title)], fmt, result.to_dict())
