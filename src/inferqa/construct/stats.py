"""Counts of a benchmark directory, per split, streamed from qrels.tsv."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING
from collections import Counter, defaultdict

from ..formats.benchmark import Benchmark
from ..formats.qrels import iter_qrels

if TYPE_CHECKING:
    from ..tabular import TextTable


def benchmark_stats(path: str | os.PathLike) -> dict:
    """{"splits": {name: {questions, passages, labels: {label: n}, hints_per_question}}, "build": meta counts}.
    Passages are counted from qrels.tsv (one line per passage of a question); "all" comes first."""
    bench = Benchmark(path)
    per_question: dict[str, Counter] = defaultdict(Counter)
    for qid, _, label in iter_qrels(bench.file("qrels.tsv")):
        per_question[qid][label] += 1
    splits = {"all": list(bench.questions), **{k: v for k, v in bench.splits.items() if k != "all"}}
    out = {}
    for name, qids in splits.items():
        labels = Counter()
        for qid in qids:
            labels.update(per_question.get(qid, {}))
        n_hints = sum(len(bench.questions[q].hints) for q in qids if q in bench.questions)
        out[name] = {"questions": len(qids), "passages": sum(labels.values()),
                     "labels": dict(sorted(labels.items())),
                     "hints_per_question": n_hints / len(qids) if qids else 0.0}
    return {"splits": out, "build": dict(bench.meta.get("counts", {}))}


# meta.json's build counts, in the order a build applies them, as a reader would name them.
BUILD_COUNTS = (
    ("questions_in", "questions read"),
    ("hints_in", "hints read"),
    ("leak_hints_dropped", "leaking hints dropped"),
    ("leak_questions_with_leaks", "questions with a leaking hint"),
    ("leak_questions_dropped", "questions dropped for leaks"),
    ("questions_skipped_few_hints", "questions skipped (too few hints)"),
    ("questions", "questions kept"),
    ("passages_per_question", "passages per question"),
    ("passages", "passages"),
)


def build_rows(counts: dict) -> list[tuple[str, object]]:
    """(name, value) per build count, known counts first and named; others as spelled."""
    named = dict(BUILD_COUNTS)
    rows = [(named[k], counts[k]) for k, _ in BUILD_COUNTS if k in counts]
    return rows + [(k.replace("_", " "), v) for k, v in counts.items() if k not in named]


def stats_tables(stats: dict, title: str) -> list["TextTable"]:
    """`benchmark_stats` as `inferqa stats` prints it: a row per split, then how it was built."""
    from ..tabular import TextTable

    labels = sorted({lab for row in stats["splits"].values() for lab in row["labels"]})
    rows = [(name, f"{row['questions']:,}", f"{row['passages']:,}",
             *[f"{row['labels'].get(lab, 0):,}" for lab in labels], f"{row['hints_per_question']:.2f}")
            for name, row in stats["splits"].items()]
    tables = [TextTable(title, ("split", "questions", "passages", *[f"label {lab}" for lab in labels],
                                "hints/question"), tuple(rows))]
    if stats["build"]:
        tables.append(TextTable("how it was built", ("step", "count"),
                                tuple((name, f"{value:,}" if isinstance(value, int) else str(value))
                                      for name, value in build_rows(stats["build"]))))
    return tables
