"""`inferqa read`, `inferqa tune-union` and `inferqa evaluate-answers`."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..errors import InputError
from .app import app

RUN_HELP = "A TREC run file, or 'optimal' for every relevant passage sorted by label (the oracle pipeline)."
LLM_HELP = "LLM spec: smollm2, gemma3-270m, llama-cpp:/path.gguf, openai:MODEL@URL or transformers:ID_OR_PATH."
CACHE_HELP = "SQLite cache of LLM calls (default $INFERQA_LLM_CACHE, $INFERQA_CACHE/llm.sqlite or ~/.cache/inferqa/llm.sqlite)."


def parse_list(values: List[str] | None, cast=str) -> list:
    """Accept both repeated options and comma-separated lists."""
    out = []
    for v in values or []:
        for part in str(v).split(","):
            if part.strip():
                try:
                    out.append(cast(part.strip()))
                except ValueError:
                    raise InputError(f"not a valid value: {part.strip()!r}") from None
    return out


def open_llm(spec: str, cache: Optional[Path], no_cache: bool, backend: str = "local",
             ray_address: Optional[str] = None, num_actors: int = 1, llm_urls: Optional[List[str]] = None):
    from ..llm import DEFAULT_CACHE, load_llm
    if backend == "local" and not llm_urls:
        return load_llm(spec, cache=None if no_cache else (cache or DEFAULT_CACHE))
    from ..scale import load_scaled_llm
    return load_scaled_llm(spec, backend=backend, ray_address=ray_address, num_actors=num_actors,
                           base_urls=llm_urls or (), cache=False if no_cache else cache)

# --backend ray: spread the LLM calls over Ray actors (inferqa.scale; pip install 'inferqa[ray]').
BACKEND_HELP = "local, or ray: run the model on a pool of Ray actors (README: Scaling)."
_backend = typer.Option("local", "--backend", help=BACKEND_HELP)
_ray_address = typer.Option(None, "--ray-address", help="Ray cluster: auto, ray://HEAD:10001 (default: start Ray here).")
_num_actors = typer.Option(2, "--num-actors", help="Ray actors, each with its own copy of the model.")
_llm_url = typer.Option(None, "--llm-url", help="With --backend ray and an openai: spec: one server URL per "
                        "repeat; actors take them round-robin.")


def load_run_arg(run: str, bench, split: Optional[str]):
    from ..records import Run
    qids = bench.split_qids(split)
    if run in ("optimal", "oracle"):
        from ..evaluate.oracles import optimal
        return optimal(bench, qids, min_label=1), qids
    loaded = Run.load(run, bench, split)
    return loaded, [q for q in qids if q in loaded]


def _print_summary(rows: list[dict], metrics: tuple[str, ...], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    from ..read import summarize
    table = Table(title=title)
    for col in ("strategy", "k", "n", *metrics):
        table.add_column(col, justify="left" if col == "strategy" else "right")
    for s in summarize(rows, metrics):
        table.add_row(s["strategy"], str(s["k"]), str(s["n"]),
                      *[("-" if s[m] is None else f"{100 * s[m]:.2f}") for m in metrics])
    Console().print(table)


@app.command("read")
def read_cmd(
    run: str = typer.Argument(..., help=RUN_HELP),
    bench: Path = typer.Option(..., "--bench", "-b", help="Benchmark directory written by `inferqa build`."),
    llm: str = typer.Option("smollm2", "--llm", help=LLM_HELP),
    strategy: List[str] = typer.Option(["union_norm"], "--strategy", "-s",
                                       help="union_norm, union_freq or concat; repeat or comma-separate."),
    k: List[str] = typer.Option(["1,3,5"], "--k", help="Top-k passages merged into the context, e.g. 1,3,5."),
    out: Path = typer.Option(..., "--out", "-o", help="ANSWERS.jsonl to write (atomically)."),
    split: Optional[str] = typer.Option(None, "--split", help="Only questions of this split (default: all in the run)."),
    alpha: Optional[float] = typer.Option(None, "--alpha", help="union_freq weight of 1/rank (default 0.6)."),
    beta: Optional[float] = typer.Option(None, "--beta", help="union_freq weight of 1/position (default 0.4)."),
    cache: Optional[Path] = typer.Option(None, "--cache", help=CACHE_HELP),
    no_cache: bool = typer.Option(False, "--no-cache", help="Call the backend for every prompt."),
    backend: str = _backend, ray_address: Optional[str] = _ray_address, num_actors: int = _num_actors,
    llm_url: Optional[List[str]] = _llm_url,
) -> None:
    """Answer each question from the top-k passages of RUN; write one row per question, strategy and k."""
    from ..benchmark import Benchmark
    from ..io import write_jsonl
    from ..read import read_run

    b = Benchmark(bench)
    ranked, qids = load_run_arg(run, b, split)
    model = open_llm(llm, cache, no_cache, backend, ray_address, num_actors, llm_url)
    try:
        given = {"alpha": alpha, "beta": beta}
        rows = read_run(b, ranked, model, parse_list(strategy), parse_list(k, int), qids=qids,
                        **{key: v for key, v in given.items() if v is not None})
    finally:
        model.close()
    write_jsonl(out, rows)
    _print_summary(rows, ("em", "f1", "contains"), f"{out} ({len(rows)} rows, percent)")
    stats = getattr(model, "stats", None)
    if stats is not None:
        typer.echo(f"LLM cache: {stats.hits} hits, {stats.misses} backend calls")


@app.command("tune-union")
def tune_union_cmd(
    run: str = typer.Argument("optimal", help=RUN_HELP),
    bench: Path = typer.Option(..., "--bench", "-b", help="Benchmark directory."),
    split: str = typer.Option("dev", "--split", help="Split to tune on."),
    llm: str = typer.Option("smollm2", "--llm", help=LLM_HELP),
    k: List[str] = typer.Option(["3,5"], "--k", help="k values whose mean EM is maximised."),
    alphas: List[str] = typer.Option(["0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1"], "--alphas",
                                     help="alpha grid; beta = 1 - alpha (only their ratio orders hints)."),
    cache: Optional[Path] = typer.Option(None, "--cache", help=CACHE_HELP),
    no_cache: bool = typer.Option(False, "--no-cache", help="Call the backend for every prompt."),
) -> None:
    """Grid-search union_freq's alpha/beta on a split by reader EM; prints the grid, best first."""
    from rich.console import Console
    from rich.table import Table

    from ..benchmark import Benchmark
    from ..read import tune_union

    b = Benchmark(bench)
    ranked, qids = load_run_arg(run, b, split)
    if not qids:
        raise InputError(f"split {split!r} has no question in the run", file=bench)
    model = open_llm(llm, cache, no_cache)
    try:
        grid = tune_union(b, ranked, model, parse_list(k, int), qids=qids, alphas=parse_list(alphas, float))
    finally:
        model.close()
    table = Table(title=f"union_freq grid on {split} ({len(qids)} questions)")
    cols = list(grid[0])
    for c in cols:
        table.add_column(c, justify="right")
    for r in grid:
        table.add_row(*[f"{r[c]:.2f}" if c in ("alpha", "beta") else f"{100 * r[c]:.2f}" for c in cols])
    Console().print(table)
    Console().print(f"best: --alpha {grid[0]['alpha']} --beta {grid[0]['beta']}")


@app.command("evaluate-answers")
def evaluate_answers_cmd(
    answers: Path = typer.Argument(..., help="ANSWERS.jsonl written by `inferqa read`, or an authors' reader "
                                   "output (Rankify JSON with predicted_answer)."),
    bench: Optional[Path] = typer.Option(None, "--bench", "-b",
                                         help="Re-score against this benchmark's gold answers (default: the rows' golds)."),
    judge: Optional[str] = typer.Option(None, "--judge", help="LLM spec of an answer-equivalence judge (GPT-Eval style)."),
    judge_samples: int = typer.Option(3, "--judge-samples", help="Judge samples; the majority decides."),
    judge_temperature: float = typer.Option(0.7, "--judge-temperature", help="Sampling temperature of the judge."),
    cache: Optional[Path] = typer.Option(None, "--cache", help=CACHE_HELP),
    protocol: str = typer.Option("inferqa", "--protocol", help="inferqa: normalised EM | paper: the QUIT authors' "
                                 "answer cleaning, then exact case-sensitive EM (inferqa.evaluate.answers)."),
) -> None:
    """Print EM, F1 and contains (and the LLM judge's accuracy) per strategy and k."""
    from ..benchmark import Benchmark
    from ..evaluate.answers import paper_exact_match
    from ..runfiles import iter_answer_rows
    from ..read import answer_judge, contains, exact_match, f1

    if protocol not in ("inferqa", "paper"):
        raise InputError(f"unknown protocol {protocol!r} (use inferqa or paper)", field="protocol")
    b = Benchmark(bench) if bench else None
    rows = []
    for where, row in iter_answer_rows(answers):
        for field in ("qid", "strategy", "k", "prediction"):
            if field not in row:
                raise InputError("missing field", file=answers, record=where, field=field)
        if b is not None:
            q = b.questions.get(row["qid"])
            if q is None:
                raise InputError(f"question {row['qid']!r} is not in the benchmark", file=answers,
                                 record=where, field="qid")
            row["golds"], row["question"] = q.answers, q.text
        golds = row.get("golds")
        if not golds:
            raise InputError("no gold answers (give --bench)", file=answers, record=where, field="golds")
        pred = row["prediction"]
        em = paper_exact_match(pred, golds) if protocol == "paper" else exact_match(pred, golds)
        row.update(em=float(em), f1=f1(pred, golds), contains=float(contains(pred, golds)))
        rows.append(row)
    if not rows:
        raise InputError("no rows", file=answers)
    metrics: tuple[str, ...] = ("em", "f1", "contains")
    if judge:
        if b is None:
            raise InputError("--judge needs --bench (the judge reads the question)")
        model = open_llm(judge, cache, False)
        try:
            judged = answer_judge("llm", llm=model, samples=judge_samples, temperature=judge_temperature)
            for row in rows:
                row["judge"] = float(judged.correct(row["question"], row["prediction"], row["golds"]))
        finally:
            model.close()
        metrics += ("judge",)
    _print_summary(rows, metrics, f"{answers} ({len(rows)} rows, percent)")


@app.command("label")
def label_cmd(
    bench: Path = typer.Argument(..., help="Benchmark directory to label in place (qrels.tsv, labels.jsonl, meta.json)."),
    labeler: Optional[List[str]] = typer.Option(None, "--labeler", help="LLM spec of a labeller (repeatable; default smollm2)."),
    label_mode: str = typer.Option("full", "--label-mode", help="full: every ordering; subsets: one ordering per "
                                   "subset, label copied to the others (an approximation)."),
    parametric: bool = typer.Option(False, "--parametric", help="Also run the parametric test (parametric.jsonl)."),
    split_by: Optional[str] = typer.Option(None, "--split-by", help="parametric: rewrite splits.json from the test."),
    judge: Optional[str] = typer.Option(None, "--judge", help="LLM judge of answer correctness (default: exact match)."),
    cache: Optional[Path] = typer.Option(None, "--cache", help=CACHE_HELP),
    backend: str = _backend, ray_address: Optional[str] = _ray_address, num_actors: int = _num_actors,
    llm_url: Optional[List[str]] = _llm_url,
) -> None:
    """Label an existing benchmark with LLMs, as `inferqa build --label` does while building."""
    from rich.console import Console

    from ..benchmark import Benchmark
    from ..label import apply_parametric_split, label_benchmark, parametric_test
    from ..label.hook import DEFAULT_LABELER, dev_share_of

    b = Benchmark(bench)
    if split_by not in (None, "parametric"):
        raise InputError(f"--split-by {split_by!r}: only 'parametric' is known", field="split-by")
    llms = [open_llm(s, cache, False, backend, ray_address, num_actors, llm_url) for s in (labeler or [DEFAULT_LABELER])]
    judge_llm = open_llm(judge, cache, False) if judge else None
    try:
        record = label_benchmark(bench, llms, label_mode, judge=judge_llm)
        if parametric or split_by:
            flags = parametric_test(bench, llms, judge=judge_llm)
            if split_by:
                opts = b.meta.get("options", {})
                apply_parametric_split(bench, flags, dev_share=dev_share_of(opts.get("split")),
                                       seed=opts.get("seed", 13))
    finally:
        for m in llms + ([judge_llm] if judge_llm else []):
            m.close()
    labels = Benchmark(bench).meta.get("labels", {})
    Console().print(f"[bold]{bench}[/]: {record['passages_labelled']:,} passages labelled "
                    f"({record['passages_asked']:,} asked, mode {label_mode}); labels "
                    + ", ".join(f"{k}: {v:,}" for k, v in labels.items()))
