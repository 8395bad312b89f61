"""`inferqa build` (hints → benchmark directory) and `inferqa stats` (what is in one)."""

from __future__ import annotations

from typing import Any

from ..stages import Settings
from ..stages.build import BUILD, BUILD_FLAG_WORDS, DEMO_BUILD, STATS
from .output import print_tables
from .stage_command import stage_command


def show_build(result: Any, settings: Settings, _fmt: str | None) -> None:
    from rich.console import Console

    c, meta, out = result.meta["counts"], result.meta, settings.out
    Console().print(f"[bold]{out}[/]: {c['questions']:,} questions, {c['passages']:,} passages "
                    f"({c['leak_hints_dropped']} leaking hints dropped, {c['leak_questions_dropped']} questions "
                    f"dropped for leaks, {c['questions_skipped_few_hints']} with fewer than {result.top_k} hints "
                    "skipped); " + ", ".join(f"{k} {v:,}" for k, v in meta["splits"].items()))
    if result.demo_only:
        Console().print("labels: SmolLM2's, shipped with the demo (the benchmark `inferqa demo` runs on)"
                        if result.shipped_labels else "labels: 1 for every passage of its question (the shipped "
                        f"SmolLM2 labels fit the demo's own build only: --top-k {DEMO_BUILD['top_k']}, string leak "
                        "judge, no --label)")


stage_command(BUILD, show_build, words=BUILD_FLAG_WORDS)


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
