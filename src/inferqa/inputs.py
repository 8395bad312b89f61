"""Stage inputs given as objects or as paths, so every stage function takes either.

- `as_benchmark`: a `Benchmark`, or its directory.
- `as_run`: a `Run`, or a run file or `optimal` read by `inferqa.formats.open_run` (TREC
  or Rankify JSON, its ids checked against `bench` when given; `min_label`,
  `allow_partial` and `allow_duplicates` passed to it); with `bench` and `split`, cut to
  that split's questions.
- `as_qrels`: `Qrels` (or a plain dict), a qrels file, or a benchmark (object or
  directory), whose qrels.tsv it is; also returns that benchmark, if any.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Union

from .benchmark import Benchmark
from .formats import open_qrels, open_run
from .records import MIN_LABEL, Qrels, Run

BenchLike = Union[Benchmark, str, os.PathLike]
RunLike = Union[Run, str, os.PathLike]


def as_benchmark(bench: BenchLike) -> Benchmark:
    return bench if isinstance(bench, Benchmark) else Benchmark(bench)


def as_run(run: RunLike, bench: BenchLike | None = None, split: str | None = None, *,
           min_label: int = MIN_LABEL.default, allow_partial: bool = False, allow_duplicates: bool = False) -> Run:
    b = as_benchmark(bench) if bench is not None else None
    if not isinstance(run, Run):
        loaded, qids = open_run(run, b, split, min_label=min_label, allow_partial=allow_partial,
                                allow_duplicates=allow_duplicates)
        return loaded if b is None or split is None else loaded.only(qids)
    if b is not None and split is not None:
        wanted = set(b.split_qids(split))
        return Run({q: r for q, r in run.items() if q in wanted}, tag=run.tag)
    return run


def as_qrels(qrels: Any) -> tuple[Qrels, Benchmark | None]:
    if isinstance(qrels, Benchmark):
        return qrels.qrels, qrels
    if isinstance(qrels, dict):
        return (qrels if isinstance(qrels, Qrels) else Qrels(qrels)), None
    if Path(qrels).is_dir():
        bench = Benchmark(qrels)
        return bench.qrels, bench
    return open_qrels(qrels), None
