"""`inferqa evaluate`: QUIT's metrics for a run (TREC, or Rankify/DPR JSON matched to --split)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Optional

import typer

from ..errors import InputError
from .app import app


def _fmt(v: float | None) -> str:
    return "—" if v is None or (isinstance(v, float) and math.isnan(v)) else f"{100 * v:.2f}"


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
    metrics: Optional[str] = typer.Option(None, "--metrics", "-m", help="Comma-separated: hit@k, recall@k, "
                                          "precision@k (p@k), mrr, mrr@k, map, map@k, ndcg@k (default: the "
                                          "paper's set)."),
    protocol: str = typer.Option("inferqa", "--protocol", help="inferqa (ours) | paper (the QUIT authors' rules: "
                                 "plain means over the run's questions, precision over min(k, retrieved), "
                                 "duplicate passages kept, round 4); README: Reproducing the paper."),
    min_label: int = typer.Option(1, "--min-label", help="Lowest label counted as relevant (2: fully relevant only)."),
    as_json: bool = typer.Option(False, "--json", help="Print JSON instead of a table."),
    per_query: bool = typer.Option(False, "--per-query", help="Also give every question's values."),
) -> None:
    """Hit@k, Recall@k, MRR, nDCG@k (gain 2^label-1), MAP, P@k over the run's questions."""
    from ..evaluate import DEFAULT_METRICS, check_run_ids, evaluate
    from ..evaluate.metrics import check_protocol
    from ..records import Qrels, Run

    if qrels_file is None and bench_dir is None:
        raise InputError("give --qrels QRELS (or --bench DIR to use its qrels.tsv)", field="qrels")
    if split is not None and bench_dir is None:
        raise InputError("--split needs --bench DIR (the split's questions come from it)", field="split")
    bench = None
    if bench_dir is not None:
        from ..benchmark import Benchmark

        bench = Benchmark(bench_dir)
    check_protocol(protocol)
    run = Run.load(run_file, bench, split, allow_duplicates=protocol == "paper")
    if bench is not None:
        check_run_ids(run, bench, run_file)
        if split is not None:
            wanted = set(bench.split_qids(split))
            run = Run({q: r for q, r in run.items() if q in wanted}, tag=run.tag)
    qrels = Qrels.load(qrels_file) if qrels_file is not None else bench.qrels
    names = [m.strip() for m in metrics.split(",") if m.strip()] if metrics else list(DEFAULT_METRICS)
    res = evaluate(run, qrels, names, min_label=min_label, per_query=per_query, protocol=protocol)
    means = res["mean"] if per_query else res
    if as_json:
        clean = lambda d: {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in d.items()}
        payload = {"run": str(run_file), "questions": len(run), "min_label": min_label, "protocol": protocol,
                   "metrics": clean(means)}
        if per_query:
            payload["per_query"] = res["per_query"]
        typer.echo(json.dumps(payload, indent=2))
        return
    from rich.console import Console
    from rich.table import Table

    title = f"{run_file.name}: {len(run)} questions, label ≥ {min_label}, {protocol} protocol (percent)"
    if not per_query:
        table = Table(title=title)
        table.add_column("metric", style="bold")
        table.add_column("value", justify="right")
        for name, v in means.items():
            table.add_row(name, _fmt(v))
    else:
        table = Table(title=title)
        table.add_column("question", style="bold", no_wrap=True)
        for name in means:
            table.add_column(name, justify="right", no_wrap=True)
        for qid, vals in res["per_query"].items():
            table.add_row(qid, *(_fmt(vals[n]) for n in means))
        table.add_section()
        table.add_row("mean", *(_fmt(v) for v in means.values()))
    Console().print(table)
