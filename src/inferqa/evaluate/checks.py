"""Checks of a run against a benchmark: every passage id must name a passage of its corpus."""

from __future__ import annotations

import os

from ..benchmark import Benchmark
from ..errors import InputError
from ..records import Run, hint_mask, parse_passage_id, split_passage_id


def check_run_ids(run: Run, bench: Benchmark, file: str | os.PathLike | None = None) -> None:
    """Raise InputError on the first passage id that is malformed, of an unknown question, or
    names a hint the question does not keep (the corpus holds every ordering of kept hints)."""
    questions = bench.questions
    n_hints = {qid: len(q.hints) for qid, q in questions.items()}
    one_reading = bench.mask_bits
    seen_ok: set[str] = set()
    for qid, ranked in run.items():
        if qid not in questions:
            raise InputError(f"question {qid!r} is not in the benchmark {bench.path} (a run made on another "
                             "benchmark?)", file=file, record=f"{qid} rank 1", field="qid")
        for rank, (pid, _) in enumerate(ranked, 1):
            if pid in seen_ok:
                continue
            try:
                pq, order = parse_passage_id(pid)
            except ValueError as exc:
                raise InputError(f"unknown passage id: {exc}", file=file, record=f"{qid} rank {rank}",
                                 field="pid") from None
            n = n_hints.get(pq)
            mask = split_passage_id(pid)[1]
            if n is None or len(mask) != n or (one_reading and mask != hint_mask(order, n, one_reading)):
                raise InputError(f"unknown passage id {pid!r} (not in the corpus of {bench.path})",
                                 file=file, record=f"{qid} rank {rank}", field="pid")
            seen_ok.add(pid)


OPTIMAL = "optimal"


def open_run(run: str | os.PathLike, bench: Benchmark, split: str | None = None,
             min_label: int = 1) -> tuple[Run, list[str]]:
    """(run, question ids to work on) for a stage that reads a run: a TREC file checked against
    `bench` (ids, questions), or `optimal` for every relevant passage sorted by label.

    With `split`, only the run's questions of that split; none at all is an error, so a run
    of another benchmark or split fails here, before any model loads."""
    if str(run) == OPTIMAL:
        from .oracles import optimal

        qids = bench.split_qids(split)
        if not qids:
            raise InputError(f"split {split!r} has no question", file=bench.path, field="split")
        return optimal(bench, qids, min_label=min_label), qids
    loaded = Run.load(run, bench, split)
    check_run_ids(loaded, bench, run)
    if split is None:
        return loaded, list(loaded)
    wanted = set(bench.split_qids(split))
    qids = [q for q in loaded if q in wanted]
    if not qids:
        raise InputError(f"the run has no question of split {split!r} of {bench.path}", file=run, field="split")
    return loaded, qids
