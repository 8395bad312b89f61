"""Counts of a benchmark directory, per split, streamed from qrels.tsv."""

from __future__ import annotations

import os
from collections import Counter, defaultdict

from ..benchmark import Benchmark
from ..errors import InputError
from ..io import iter_lines


def benchmark_stats(path: str | os.PathLike) -> dict:
    """{"splits": {name: {questions, passages, labels: {label: n}, hints_per_question}}, "build": meta counts}.
    Passages are counted from qrels.tsv (one line per passage of a question); "all" comes first."""
    bench = Benchmark(path)
    per_question: dict[str, Counter] = defaultdict(Counter)
    qrels_file = bench.path / "qrels.tsv"
    for lineno, line in iter_lines(qrels_file):
        parts = line.split()
        if not parts:
            continue
        if len(parts) != 4 or not parts[3].lstrip("-").isdigit():
            raise InputError("expected 'qid 0 pid label'", file=qrels_file, record=f"line {lineno}")
        per_question[parts[0]][int(parts[3])] += 1
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
