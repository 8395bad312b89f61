"""`export_sheet`: the distinct answers of a labelled benchmark that a person should verify."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError
from ..formats import Benchmark, Labels
from .candidates import collect_candidates
from ..parameters import MIN_F1
from ..formats.sheets import guess_format, write_sheet
from .sheet import sheet_rows
from .state import VerificationState


@dataclass(frozen=True)
class ExportSummary:
    path: Path
    questions: int
    rows: int
    judged_correct: int
    contested: int
    passages: int  # label-bearing passages the exported answers appear in

    def line(self) -> str:
        return (f"wrote {self.rows} answers to review ({self.judged_correct} judged correct, "
                f"{self.contested} contested) for {self.questions} questions, covering {self.passages} "
                f"passages, to {self.path}")


def export_sheet(bench_dir: str | os.PathLike, out: str | os.PathLike, *, split: str | None = None,
                 fmt: str | None = None, min_f1: float | None = None) -> ExportSummary:
    """Write the review sheet for `split` (all questions when None); csv unless `fmt`/suffix says jsonl.
    `min_f1` as MIN_F1 declares it (None: its default)."""
    min_f1 = MIN_F1.check(min_f1, "annotate export")
    bench = Benchmark(bench_dir)
    state = VerificationState.from_meta(bench.meta)
    qids = bench.split_qids(split)
    labels = Labels.from_file(bench.path / "labels.jsonl")
    wanted = set(qids)
    if not any(r.answers for r in labels if r.qid in wanted):  # e.g. only a release's reader answers
        raise InputError(f"no labeller answers for split {split or 'all'!r}: label the benchmark first "
                         "(inferqa label)", file=bench.path / "labels.jsonl", field="answers")
    cands = collect_candidates(labels, bench.questions, state, qids=qids, min_f1=min_f1)
    order = {qid: i for i, qid in enumerate(qids)}
    chosen = sorted((c for c in cands.values() if c.exportable),
                    key=lambda c: (order[c.qid], -len(c.decides), -len(c.passages), c.key))
    questions = bench.questions
    n = write_sheet(out, sheet_rows(chosen, {q: questions[q].text for q in qids if q in questions},
                                    {q: questions[q].answers for q in qids if q in questions}),
                    guess_format(out, fmt))
    return ExportSummary(path=Path(out), questions=len({c.qid for c in chosen}), rows=n,
                         judged_correct=sum(c.judged_correct > 0 for c in chosen),
                         contested=sum(c.contested for c in chosen),
                         passages=len(set().union(*(c.passages for c in chosen))) if chosen else 0)
