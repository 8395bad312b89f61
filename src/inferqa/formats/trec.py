"""TREC run files (`qid Q0 pid rank score tag`): run format `trec`, the default one."""

from __future__ import annotations

import math
import os
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..io import atomic_open, iter_lines
from ..records import Run, trec_scores
from ..registry import plugin
from .runs import TREC, Findings, RunFormat

if TYPE_CHECKING:
    from ..benchmark import Benchmark


def read_trec(path: str | os.PathLike, findings: Findings | None = None, *, allow_duplicates: bool = False) -> Run:
    """A TREC run. Duplicate passages of a question (unless `allow_duplicates`: the QUIT
    authors' metrics keep them), unsorted ranks and NaN scores are errors (or findings
    `duplicate_ids`, `unsorted_ranks`, `nan_scores`, the entries kept)."""
    findings = Findings() if findings is None else findings
    run = Run()
    seen: dict[str, set[str]] = {}
    last: dict[str, tuple[int, float]] = {}
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        where = {"file": path, "record": f"line {lineno}"}
        parts = line.split()
        if len(parts) != 6:
            if not line.endswith("\n"):
                raise InputError(f"truncated: the last line ends mid-way ({len(parts)} of 6 columns)", **where)
            raise InputError("expected 6 columns 'qid Q0 pid rank score tag'", **where)
        qid, _, pid, rank_s, score_s, tag = parts
        try:
            rank, score = int(rank_s), float(score_s)
        except ValueError:
            raise InputError("rank must be an integer and score a number", field="rank/score", **where) from None
        example = f"{qid} rank {rank}: {pid}"
        if math.isnan(score):
            findings.add("nan_scores", example, InputError("score is NaN", field="score", **where))
        if pid in seen.setdefault(qid, set()) and not allow_duplicates:
            findings.add("duplicate_ids", example, InputError(f"duplicate passage {pid} for question {qid}",
                                                              field="pid", **where))
        if qid in last and (rank <= last[qid][0] or score > last[qid][1]):
            findings.add("unsorted_ranks", example, InputError(
                f"unsorted run for question {qid}: ranks must increase and scores must not increase",
                field="rank", **where))
        seen[qid].add(pid)
        last[qid] = (rank, score)
        run.setdefault(qid, []).append((pid, score))
        run.tag = tag
    if not run:
        raise InputError("run file is empty", file=path)
    return run


def write_trec(run: Run, path: str | os.PathLike, tag: str | None = None) -> None:
    """A TREC run in list order, with scores that strictly decrease (`records.trec_scores`),
    so trec_eval, pytrec_eval and ir_measures, which sort by score, keep this order."""
    tag = tag or run.tag
    with atomic_open(path) as fh:
        for qid, ranked in run.items():
            for rank, (pid, score) in enumerate(zip((p for p, _ in ranked), trec_scores(ranked)), 1):
                fh.write(f"{qid} Q0 {pid} {rank} {score} {tag}\n")


@plugin("run-format", TREC, help="TREC run: qid Q0 pid rank score tag (any file no other format claims)")
class TrecRun(RunFormat):
    def read(self, path: str | os.PathLike, bench: "Benchmark | None", split: str | None, *, findings: Findings,
             allow_partial: bool = False, allow_duplicates: bool = False) -> tuple[Run, list[dict[str, Any]]]:
        return read_trec(path, findings, allow_duplicates=allow_duplicates), []

    def write(self, run: Run, path: str | os.PathLike, *, tag: str | None = None) -> None:
        write_trec(run, path, tag)
