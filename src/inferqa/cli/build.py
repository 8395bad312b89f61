"""`inferqa build` (hints → benchmark directory) and `inferqa stats` (what is in one)."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..errors import InputError
from ..stage_options import LABEL_MATCH, LABELER, LEAK_LLM, LEAK_THRESHOLD, SEED, SPLIT, TOP_K
from ..stages import Settings
from ..stages.build import STATS
from .app import app
from .flags import option_flag
from .output import print_tables
from .stage_command import stage_command

LEAK_POLICY_HELP = ("drop-hint: remove leaking hints, keep the question; drop-question: drop it (the paper's "
                    "choice); none: no filter (data already filtered, e.g. the QUIT release).")


def _check_out_dir(out: Path, overwrite: bool) -> None:
    """Refuse, before any work, a folder that is not a benchmark, or one that is without --overwrite."""
    from ..formats.bench_write import refuse_existing
    from ..io import check_output

    check_output(out, kind="dir")
    refuse_existing(out, overwrite)


@app.command("build")
def build_cmd(
    sources: Optional[List[Path]] = typer.Argument(None, help="Source files: WikiHint/TriviaHG/QUIT JSON, JSONL or CSV.",
                                                   show_default=False),
    out: Path = typer.Option(..., "--out", "-o", help="Benchmark directory to write (replaced atomically)."),
    overwrite: bool = typer.Option(False, "--overwrite", help="Replace an existing benchmark's files (what else its "
                                   "folder holds, such as indexes and runs, stays)."),
    fmt: str = typer.Option("auto", "--format", "-f",
                            help="auto | wikihint | triviahg | quit | jsonl | csv (applies to every SOURCE)."),
    demo: bool = typer.Option(False, "--demo", help="The demo benchmark `inferqa demo` runs on: the 48 embedded "
                              "questions, 3 hints each (15 passages), split 6,4,38, SmolLM2's shipped labels. "
                              "With SOURCE files: add the demo questions to them (default options)."),
    top_k: Optional[int] = option_flag(TOP_K, "--top-k", note="3 with --demo alone"),
    leak_policy: str = typer.Option("drop-hint", "--leak-policy", help=LEAK_POLICY_HELP),
    leak_judge: str = typer.Option("string", "--leak-judge", help="string (word-boundary rule) | embedding (best "
                                   "hint-span cosine to the answer) | llm (asks --leak-llm); the string rule "
                                   "always runs first."),
    leak_threshold: Optional[float] = option_flag(LEAK_THRESHOLD, "--leak-threshold", owner="embedding leak judge"),
    leak_llm: Optional[str] = option_flag(LEAK_LLM, "--leak-llm", owner="llm leak judge"),
    split: Optional[str] = option_flag(SPLIT, "--split", note="6,4,38 with --demo alone"),
    seed: Optional[int] = option_flag(SEED, "--seed"),
    strict: bool = typer.Option(False, "--strict", help="Fail on a question with fewer than --top-k usable hints "
                                                        "instead of skipping it."),
    label: bool = typer.Option(False, "--label", help="Label passages with LLMs: 2 if a labeller answers correctly "
                                                      "from the passage, else 1; answers kept in labels.jsonl."),
    labeler: Optional[List[str]] = option_flag(LABELER, "--labeler"),
    label_mode: str = typer.Option("full", "--label-mode", help="full: every ordering; subsets: one ordering per "
                                   "subset, label copied to the others (an approximation)."),
    stop_at_first_correct: bool = typer.Option(False, "--labellers-stop-at-first-correct", help="With --label: ask "
                                               "the labellers in turn and stop at the first that is right (same "
                                               "labels; skipped labellers recorded as not asked)."),
    label_match: str = option_flag(LABEL_MATCH, "--label-match", filled=True),
    parametric: bool = typer.Option(False, "--parametric", help="Ask each labeller every question with no context; "
                                    "write parametric.jsonl."),
    split_by: Optional[str] = typer.Option(None, "--split-by", help="parametric: parametric questions to train, the "
                                           "rest to dev/test (in --split's dev:test ratio)."),
    convergence: Optional[str] = typer.Option(None, "--convergence", help="LLM spec that computes hint convergence "
                                              "for sources without it (before hints are ranked)."),
) -> None:
    """Build a QUIT-style benchmark: leakage filter, top-k hints, every ordering of every subset as a passage."""
    from rich.console import Console

    from ..construct import build_benchmark
    from ..construct.leak_judges import leak_judge as make_leak_judge
    from ..data import demo_path, load_sources
    from ..data.shipped_demo import DEMO_BUILD, demo_build_options

    _check_out_dir(out, overwrite)
    paths = list(sources or [])
    demo_only = demo and not paths
    if demo:
        paths.insert(0, demo_path())
    if not paths:
        raise InputError("give SOURCE files or --demo")
    top_k = top_k if top_k is not None else (DEMO_BUILD["top_k"] if demo_only else TOP_K.default)
    split_spec = split if split is not None else (DEMO_BUILD["split"] if demo_only else SPLIT.default)
    seed = seed if seed is not None else (DEMO_BUILD["seed"] if demo_only else SEED.default)
    questions = load_sources(paths, fmt)
    from ..label.hook import convergence_step, make_post_build
    post_build = make_post_build(label=label, labelers=labeler or [], mode=label_mode, parametric=parametric,
                                 split_by=split_by, split=split_spec, seed=seed,
                                 stop_at_first_correct=stop_at_first_correct)
    # the shipped labels are keyed by question and hint order: they fit the demo's own hints only
    shipped = (demo_only and post_build is None and not convergence and leak_judge == "string"
               and top_k == DEMO_BUILD["top_k"])
    if shipped:
        post_build = demo_build_options()["post_build"]
    questions = convergence_step(questions, convergence)
    meta = build_benchmark(questions, out, top_k=top_k, leak_policy=leak_policy, leak_judge=make_leak_judge(leak_judge, threshold=leak_threshold, llm=leak_llm),
                           split=split_spec, seed=seed, strict=strict, post_build=post_build,
                           sources=[{"path": str(p), "format": fmt} for p in paths], show_progress=True,
                           label_match=label_match, overwrite=overwrite)
    c = meta["counts"]
    Console().print(f"[bold]{out}[/]: {c['questions']:,} questions, {c['passages']:,} passages "
                    f"({c['leak_hints_dropped']} leaking hints dropped, {c['leak_questions_dropped']} questions "
                    f"dropped for leaks, {c['questions_skipped_few_hints']} with fewer than {top_k} hints skipped); "
                    + ", ".join(f"{k} {v:,}" for k, v in meta["splits"].items()))
    if demo_only:
        Console().print("labels: SmolLM2's, shipped with the demo (the benchmark `inferqa demo` runs on)" if shipped
                        else "labels: 1 for every passage of its question (the shipped SmolLM2 labels fit the "
                        f"demo's own build only: --top-k {DEMO_BUILD['top_k']}, string leak judge, no --label)")


def show_stats(stats: dict, settings: Settings, fmt: str | None) -> None:
    from ..construct.stats import build_rows
    from ..tabular import TextTable

    labels = sorted({lab for row in stats["splits"].values() for lab in row["labels"]})
    rows = [(name, f"{row['questions']:,}", f"{row['passages']:,}",
             *[f"{row['labels'].get(lab, 0):,}" for lab in labels], f"{row['hints_per_question']:.2f}")
            for name, row in stats["splits"].items()]
    tables = [TextTable(f"{settings.bench}", ("split", "questions", "passages", *[f"label {lab}" for lab in labels],
                                              "hints/question"), tuple(rows))]
    if stats["build"]:
        tables.append(TextTable("how it was built", ("step", "count"),
                                tuple((name, f"{value:,}" if isinstance(value, int) else str(value))
                                      for name, value in build_rows(stats["build"]))))
    print_tables(tables, fmt, stats)


stage_command(STATS, show_stats, tables=True)
