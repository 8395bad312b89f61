"""TREC run files (`qid Q0 pid rank score tag`): run format `trec`, the default one."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

from ..errors import InputError
from ..io import atomic_open, iter_lines
from ..registry import plugin
from .runs import TREC, Findings, Run, RunFormat, score_problem

if TYPE_CHECKING:
    from .benchmark import Benchmark


def trec_scores(ranked: Sequence[tuple[str, float]]) -> list[str]:
    """The score column of one ranked list, strictly decreasing even as 32-bit floats: trec_eval
    (and so pytrec_eval and ir_measures) sorts by C float scores, equal ones by descending passage
    id. A score is written with 6 decimals where that lies below the line above as a float32; else
    (a tie, a gap below float32 precision) as the next float32 below it, in 9 significant digits."""
    import numpy as np

    texts = [f"{score:.6f}" for _, score in ranked]
    if len(texts) < 2:
        return texts
    f32 = np.clip(np.array(texts, dtype=np.float64), -3.4028234e38, 3.4028234e38).astype(np.float32)
    # float32s as integers in the same order, one apart per float32 step (-0.0 and 0.0 equal)
    bits = f32.view(np.int32).astype(np.int64)
    keys = np.where(bits >= 0, bits, -(bits & 0x7FFFFFFF))
    idx = np.arange(len(keys))
    fixed = np.minimum.accumulate(keys + idx) - idx  # each at most one step below the one above
    moved = np.flatnonzero(fixed != keys)
    if moved.size:
        back = np.where(fixed[moved] >= 0, fixed[moved], (-fixed[moved]) | 0x80000000)
        values = back.astype(np.uint32).view(np.float32).tolist()
        for i, v in zip(moved.tolist(), values):
            texts[i] = f"{v:.9g}"
    return texts


def write_trec(run: Run, path: str | os.PathLike, tag: str | None = None) -> None:
    """A TREC run in list order, with scores that strictly decrease (`trec_scores`)."""
    tag = tag or run.tag
    with atomic_open(path) as fh:
        for qid, ranked in run.items():
            for rank, (pid, score) in enumerate(zip((p for p, _ in ranked), trec_scores(ranked)), 1):
                fh.write(f"{qid} Q0 {pid} {rank} {score} {tag}\n")


@plugin("run-format", TREC, help="TREC run: qid Q0 pid rank score tag (any file no other format claims)")
class TrecRun(RunFormat):
    def read(self, path: str | os.PathLike, bench: "Benchmark | None", split: str | None, *, findings: Findings,
             allow_partial: bool = False, allow_duplicates: bool = False) -> tuple[Run, list[dict[str, Any]]]:
        """A TREC run. Duplicate passages of a question (unless `allow_duplicates`: the QUIT authors'
        metrics keep them), unsorted ranks and NaN or infinite scores are findings (the entries kept)."""
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
                raise InputError(f"expected 6 columns 'qid Q0 pid rank score tag', found {len(parts)}", **where)
            qid, _, pid, rank_s, score_s, tag = parts
            try:
                rank, score = int(rank_s), float(score_s)
            except ValueError:
                raise InputError("rank must be an integer and score a number", field="rank/score", **where) from None
            example = f"{qid} rank {rank}: {pid}"
            if problem := score_problem(score):
                findings.add("nan_scores", example, InputError(f"score {problem}", field="score", **where))
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
        return run, []

    def write(self, run: Run, path: str | os.PathLike, *, tag: str | None = None) -> None:
        write_trec(run, path, tag)
