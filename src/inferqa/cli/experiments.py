"""`inferqa run CONFIG`, `inferqa demo` and `inferqa explore`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Optional

import typer

from ..errors import InputError
from .app import allow_partial_opt, app, named_path
from .flags import format_flag, chosen_format
from .output import print_tables


def _run(config_path: Path, out: Optional[Path], progress: bool, fmt: str, seed_demo_answers: bool = False) -> None:
    from rich.console import Console

    from ..experiments.config import load_config
    from ..experiments.runner import run_experiment
    from ..experiments.tables import all_tables

    console = Console(stderr=True, highlight=False, soft_wrap=True)
    from ..io import check_output

    config = load_config(config_path)
    out_dir = check_output(out or Path("runs") / config.name, kind="dir")
    if seed_demo_answers:
        from ..data.shipped_demo import seed_llm_cache
        from ..llm.cache import default_cache_path

        added = seed_llm_cache(config.llm_cache or default_cache_path())
        if added:
            console.print(f"  {added} shipped SmolLM2 answers copied into the LLM cache (--compute skips this)",
                          markup=False)
    outcome = run_experiment(config, out_dir, progress=progress, log=lambda s: console.print(s, markup=False))
    tables = [t for t in all_tables(outcome.results) if not t.name.startswith("tests-")]  # tests: files only
    if fmt == "json":
        typer.echo(json.dumps([json.loads(t.to_json()) for t in tables], indent=2))
    elif fmt == "table":
        print_tables([t.text_table() for t in tables], fmt)
    else:  # as the files in tables/ hold them
        typer.echo("\n".join(t.render(fmt) for t in tables))
    # what was done, on stdout beside a table, on stderr beside a file format (stdout stays parseable)
    say = (lambda s: typer.echo(s)) if fmt in ("table", "md") else (lambda s: typer.echo(s, err=True))
    tests = outcome.results.tests
    if tests:
        from ..experiments.comparisons import CORRECTION, SIGNIFICANT, significant

        say(f"paired tests: {len(tests)} in {out_dir / 'tables'}/tests-*.md, "
            f"{sum(map(significant, tests))} with {CORRECTION}-corrected p < {SIGNIFICANT}")
    total = outcome.results.timings.get("total", 0.0)
    say(f"stages: {len(outcome.executed)} computed, {len(outcome.reused)} reused; {outcome.llm_summary()}; "
        f"wall time {total:.1f} s")
    say(f"tables: {out_dir / 'tables'}")
    say(f"report: {outcome.report}")
    say(f"explorer: {outcome.explorer}")


@app.command("run")
def run_command(
    config: Path = typer.Argument(..., help="Experiment YAML (see `inferqa.experiments.config`)."),
    out: Optional[Path] = typer.Option(None, "--out", "-o", help="Experiment folder (default: runs/<name>)."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show per-stage progress bars."),
    table_format: str = format_flag("md"),
) -> None:
    """Run an experiment grid; stages already computed in the folder are reused."""
    _run(config, out, progress, chosen_format(table_format, False, default="md"))


@app.command("demo")
def demo_command(
    out: Path = typer.Option(Path("runs/demo"), "--out", "-o", help="Experiment folder."),
    config: str = typer.Option("demo", "--config", help="Shipped config to run: demo or ci."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Show per-stage progress bars."),
    compute: bool = typer.Option(False, "--compute", help="Ask SmolLM2 again instead of starting from the "
                                 "answers shipped with the demo (several minutes more on 2 cores)."),
    table_format: str = format_flag("md"),
) -> None:
    """Run the shipped demo experiment (experiments/configs/demo.yaml) on the demo benchmark
    (the one `inferqa build --demo` writes: 48 questions, 15 passages each, SmolLM2's labels):
    bm25 and clue (clue-level MiniLM) retrieval, llm-pointwise SmolLM2 reranking of the top 5,
    SmolLM2 reading (union_norm, union_freq; k = 1, 3, 5) and the three oracles, on the 38
    test questions; print the tables, the report and explorer paths."""
    from ..experiments.config import shipped_config

    _run(shipped_config(config), out, progress, chosen_format(table_format, False, default="md"),
         seed_demo_answers=not compute)


@app.command("explore")
def explore_command(
    runs: list[str] = typer.Argument(None, help="Runs (TREC, or Rankify JSON with --split), as PATH or NAME=PATH."),
    bench: Path = typer.Option(..., "--bench", help="Benchmark directory."),
    answers: list[str] = typer.Option([], "--answers", help="Reader ANSWERS.jsonl, as PATH or NAME=PATH; "
                                      "answers named like a run belong to that run. Repeatable."),
    out: Path = typer.Option(Path("explorer.html"), "--out", "-o", help="The page to write."),
    split: Optional[str] = typer.Option(None, "--split", help="Only the questions of this split."),
    depth: int = typer.Option(10, "--depth", help="Passages shown per run and question."),
    allow_partial: bool = allow_partial_opt,
) -> None:
    """Write explorer.html: one offline page to study runs and answers question by question."""
    from ..formats.benchmark import Benchmark
    from ..experiments.explorer import explorer_data, write_explorer
    from ..formats import Answers, open_run
    from ..io import check_output

    check_output(out)
    b = Benchmark(bench)
    loaded = []
    for item in runs or []:
        name, path = named_path(item)
        loaded.append((name, "run", open_run(path, b, split, allow_partial=allow_partial)))
    sets = []
    for item in answers:
        name, path = named_path(item)
        run_name = name if any(name == r[0] for r in loaded) else None
        sets.append((name, run_name, Answers.from_file(path, b, scored=True)))
    if not loaded and not sets:
        raise InputError("give at least one run or --answers file", field="runs")
    qids = b.split_qids(split) if split else None
    page = write_explorer(explorer_data(b, loaded, sets, qids=qids, depth=depth), out)
    typer.echo(f"explorer: {page} ({page.stat().st_size / 1e6:.2f} MB)")
