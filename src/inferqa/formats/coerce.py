"""Stage inputs given as objects or as paths, so every stage function takes either.

- `open_run`: the one way a command reads a run: a run file of any run format (plain or
  compressed, `-` for stdin) or `optimal`, checked against the benchmark and cut to a split.
- `as_run`: a `Run` (or `open_run`'s result), a run file or `optimal` (read by `open_run`),
  a `{qid: {pid: score}}` dict (ranx, pytrec_eval) or a `{qid: [(pid, score), ...]}` mapping.
- `as_qrels`: `Qrels`, a `{qid: {pid: label}}` dict, a qrels file, or a benchmark (object or
  directory), whose qrels.tsv it is; also returns that benchmark, if any.
- `as_benchmark`: a `Benchmark`, or its directory.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Union

from ..defaults import MIN_LABEL
from ..errors import InputError
from .benchmark import Benchmark
from .findings import Findings
from .oracles import optimal
from .qrels import Qrels
from .runs import OPTIMAL, Run

BenchLike = Union[Benchmark, str, os.PathLike]
RunLike = Union[Run, str, os.PathLike, Mapping]
PATH_TYPES = (str, os.PathLike)


def _type_error(argument: str, value: Any, wanted: str) -> InputError:
    return InputError(f"{argument} must be {wanted}, not {type(value).__name__}", field=argument)


def as_benchmark(bench: BenchLike, argument: str = "bench") -> Benchmark:
    if isinstance(bench, Benchmark):
        return bench
    if not isinstance(bench, PATH_TYPES):
        raise _type_error(argument, bench, "a Benchmark or a benchmark directory")
    return Benchmark(bench)


def open_run(run: str | os.PathLike, bench: BenchLike | None = None, split: str | None = None, *,
             min_label: int = MIN_LABEL.default, strict: bool = True, allow_partial: bool = False,
             allow_duplicates: bool = False) -> Run:
    """The run every command reads: a file of any run format (`Run.from_file`), checked
    against `bench` (`Benchmark.check`: ids, questions) and, with `split`, cut to that split's
    questions (none at all is an error, so a run of another benchmark or split fails here,
    before any model loads); or `optimal`: every relevant passage sorted by label. Its `qids`
    are the questions to work on. With `strict=False` (the doctor) problems are collected in
    the run's `findings` (kind -> examples); `allow_duplicates` keeps a passage listed twice
    (the paper protocol scores it so)."""
    b = None if bench is None else as_benchmark(bench)
    if str(run) == OPTIMAL:
        if b is None:
            raise InputError("the run 'optimal' is made from a benchmark's labels: give --bench DIR", field="run")
        qids = b.split_qids(split)
        if not qids:
            raise InputError(f"split {split!r} has no question", file=b.path, field="split")
        out = optimal(b, qids, min_label=min_label)
        out.format, out.info, out.findings, out.qids = OPTIMAL, [], Findings(strict), qids
        return out
    if not isinstance(run, PATH_TYPES):
        raise _type_error("run", run, "a run file, a Run or a {qid: {pid: score}} dict")
    loaded = Run.from_file(run, bench=b, split=split, allow_partial=allow_partial,
                           allow_duplicates=allow_duplicates, strict=strict)
    if b is None:
        return loaded
    for kind, examples in b.check(loaded, strict=strict, file=run).items():
        loaded.findings.setdefault(kind, []).extend(examples)
    if split is None:
        return loaded
    wanted = set(b.split_qids(split))
    qids = [q for q in loaded if q in wanted]
    if not qids and strict:
        raise InputError(f"the run has no question of split {split!r} of {b.path}", file=run, field="split")
    out = loaded.only(qids)
    out.qids = qids
    return out


def _ranked(qid: Any, ranking: Any) -> list[tuple[str, float]]:
    if isinstance(ranking, Mapping):  # {pid: score}: best first, ties by passage id
        return sorted(((str(p), float(s)) for p, s in ranking.items()), key=lambda ps: (-ps[1], ps[0]))
    try:
        return [(str(p), float(s)) for p, s in ranking]
    except (TypeError, ValueError):
        raise InputError(f"question {qid!r}: a ranking must be {{pid: score}} or [(pid, score), ...]",
                         field="run") from None


def as_run(run: RunLike, bench: BenchLike | None = None, split: str | None = None, *,
           min_label: int = MIN_LABEL.default, allow_partial: bool = False, allow_duplicates: bool = False) -> Run:
    """A run from any of the module docstring's forms; a file is read by `open_run` (checked
    against `bench`, cut to `split`); an object given with `bench` and `split` is cut to it."""
    b = None if bench is None else as_benchmark(bench)
    if isinstance(run, PATH_TYPES):
        return open_run(run, b, split, min_label=min_label, allow_partial=allow_partial,
                        allow_duplicates=allow_duplicates)
    if not isinstance(run, Run):
        if not isinstance(run, Mapping):
            raise _type_error("run", run, "a run file, a Run or a {qid: {pid: score}} dict")
        run = Run({str(q): _ranked(q, r) for q, r in run.items()})
    if b is not None and split is not None:
        wanted = set(b.split_qids(split))
        return run.only([q for q in run if q in wanted])
    return run


def as_qrels(qrels: Any) -> tuple[Qrels, Benchmark | None]:
    """(qrels, its benchmark if given one) from `Qrels`, a `{qid: {pid: label}}` dict, a
    qrels file, or a benchmark (object or directory)."""
    if isinstance(qrels, Benchmark):
        return qrels.qrels, qrels
    if isinstance(qrels, Mapping):
        return (qrels if isinstance(qrels, Qrels) else Qrels({str(q): dict(d) for q, d in qrels.items()})), None
    if not isinstance(qrels, PATH_TYPES):
        raise _type_error("qrels", qrels, "Qrels, a {qid: {pid: label}} dict, a qrels file or a benchmark")
    if Path(qrels).is_dir():
        bench = Benchmark(qrels)
        return bench.qrels, bench
    return Qrels.from_file(qrels), None
