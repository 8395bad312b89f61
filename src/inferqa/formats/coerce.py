"""Stage inputs given as objects or as paths, so every stage function takes either.

- `open_run`: the one way a command reads a run: a run file of any run format (plain or
  compressed, `-` for stdin) or `optimal`, checked against the benchmark and cut to a split.
- `as_run`: a `Run`, a run file or `optimal` (read by `open_run`), a `{qid: {pid: score}}` dict
  (ranx, pytrec_eval), a `{qid: [(pid, score), ...]}` mapping, a `ranx.Run`, or a PyTerrier frame
  (columns qid, docno, score; ordered by its rank column where it has one). Every score must be a
  finite number; with a benchmark, an object is checked against it as a run file is and cut to `split`.
- `as_qrels`: `Qrels`, a `{qid: {pid: label}}` dict, a `ranx.Qrels`, a frame with columns qid,
  docno, label, a qrels file, or a benchmark (object or directory), which it also returns.
- `as_benchmark`: a `Benchmark`, or its directory.

ranx and pandas stay optional: their objects are recognised by their type's module.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Union

from ..defaults import MIN_LABEL
from ..errors import InputError
from .benchmark import Benchmark
from .findings import Findings
from .oracles import optimal
from .qrels import Qrels
from .runs import OPTIMAL, Run, score_problem, warn_if_benchmark_changed_since

BenchLike = Union[Benchmark, str, os.PathLike]
RunLike = Union[Run, str, os.PathLike, Mapping]
PATH_TYPES = (str, os.PathLike)


def _type_name(value: Any) -> str:
    """`value`'s type as errors name it and objects of ranx and pandas are told by: `dict`, `ranx.Run`."""
    kind = type(value)
    library = kind.__module__.split(".")[0]
    return kind.__qualname__ if library == "builtins" else f"{library}.{kind.__qualname__}"


def _type_error(argument: str, value: Any, wanted: str) -> InputError:
    return InputError(f"{argument} must be {wanted}, not {_type_name(value)}", field=argument)


RUN_FORMS = "a run file, a Run, a {qid: {pid: score}} dict, a ranx.Run or a frame with columns qid, docno, score"
QRELS_FORMS = ("Qrels, a {qid: {pid: label}} dict, a ranx.Qrels, a frame with columns qid, docno, label, a qrels "
               "file or a benchmark")


def _frame_rows(frame: Any, argument: str, columns: tuple[str, str, str]) -> Any:
    """The frame's rows of `columns` (a PyTerrier frame: qid, docno and score or label)."""
    lacking = [c for c in columns if c not in frame.columns]
    if lacking:
        raise InputError(f"a {argument} frame needs columns {', '.join(columns)}; it lacks {', '.join(lacking)}",
                         field=argument)
    if argument == "run" and "rank" in frame.columns:
        frame = frame.sort_values(["qid", "rank"], kind="stable")
    return zip(*(frame[c].tolist() for c in columns))


def _from_frame(frame: Any) -> dict[str, list[tuple[Any, Any]]]:
    rankings: dict[str, list[tuple[Any, Any]]] = {}
    for qid, pid, score in _frame_rows(frame, "run", ("qid", "docno", "score")):
        rankings.setdefault(str(qid), []).append((pid, score))
    if "rank" in frame.columns:
        return rankings
    return {q: sorted(r, key=lambda ps: (-_number(q, ps[1]), str(ps[0]))) for q, r in rankings.items()}


def as_benchmark(bench: BenchLike, argument: str = "bench") -> Benchmark:
    if isinstance(bench, Benchmark):
        return bench
    if not isinstance(bench, PATH_TYPES):
        raise _type_error(argument, bench, "a Benchmark or a benchmark directory")
    return Benchmark(bench)


def open_run(run: str | os.PathLike, bench: BenchLike | None = None, split: str | None = None, *,
             min_label: int = MIN_LABEL.default, strict: bool = True, allow_partial: bool = False,
             allow_duplicates: bool = False) -> Run:
    """The run every command reads: a file of any run format checked against `bench` and, with
    `split`, cut to its questions (none at all is an error: a run of another benchmark or split
    fails before any model loads); or `optimal`: every relevant passage sorted by label. With
    `strict=False` (the doctor) problems go to the run's `findings`; `allow_duplicates` keeps a
    passage listed twice (the paper protocol scores it so)."""
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
        raise _type_error("run", run, RUN_FORMS)
    loaded = Run.from_file(run, bench=b, split=split, allow_partial=allow_partial,
                           allow_duplicates=allow_duplicates, strict=strict)
    if b is None:
        return loaded
    for kind, examples in b.check(loaded, strict=strict, file=run).items():
        loaded.findings.setdefault(kind, []).extend(examples)
    if strict:
        loaded.checked_against = b.path
    loaded.bench_hash = warn_if_benchmark_changed_since(loaded.bench_hash, run, b) or loaded.bench_hash
    return _cut(loaded, b, split, run, strict)


def _cut(run: Run, bench: Benchmark, split: str | None, source: Any, strict: bool = True) -> Run:
    """`run` cut to the questions of `split` (None: kept whole); none of them is an error."""
    if split is None:
        return run
    wanted = set(bench.split_qids(split))
    qids = [q for q in run if q in wanted]
    if not qids and strict:
        where = {"file": source} if isinstance(source, PATH_TYPES) else {}
        raise InputError(f"the run has no question of split {split!r} of {bench.path}", field="split", **where)
    out = run.only(qids)
    out.qids = qids
    return out


def _number(qid: Any, score: Any) -> float:
    """A score as a float: a finite number (`score_problem`), else an InputError naming the question."""
    if problem := score_problem(score):
        shown = "" if problem != "is not a number" else f" {score!r}"
        raise InputError(f"score{shown} {problem}", record=str(qid), field="score")  # a run file's words
    return float(score)


def _ranked(qid: Any, ranking: Any, allow_duplicates: bool = False) -> list[tuple[str, float]]:
    if isinstance(ranking, Mapping):  # {pid: score}: best first, ties by passage id
        return sorted(((str(p), _number(qid, s)) for p, s in ranking.items()), key=lambda ps: (-ps[1], ps[0]))
    if isinstance(ranking, (str, bytes)) or not isinstance(ranking, Iterable) or any(
            isinstance(e, (str, bytes)) or not isinstance(e, Sequence) or len(e) != 2 for e in ranking):
        raise InputError(f"question {qid!r}: a ranking must be {{pid: score}} or [(pid, score), ...]",
                         record=str(qid), field="run")
    out = [(str(p), _number(qid, s)) for p, s in ranking]
    if not allow_duplicates:
        seen: set[str] = set()
        for rank, (pid, _) in enumerate(out, 1):
            if pid in seen:  # a run file's words (`formats.trec`)
                raise InputError(f"duplicate passage {pid} for question {qid}", record=f"{qid} rank {rank}",
                                 field="pid")
            seen.add(pid)
    return out


def _checked_run(run: Any, allow_duplicates: bool = False) -> Run:
    """A Run from an object (checked as `_ranked` checks each ranking; a Run is kept when it passes)."""
    if _type_name(run) == "ranx.Run":
        run = run.to_dict()
    elif _type_name(run) == "pandas.DataFrame":
        run = _from_frame(run)
    if not isinstance(run, Mapping):
        raise _type_error("run", run, RUN_FORMS)
    if not run:
        raise InputError("run is empty: it ranks no question", field="run")
    rankings = {str(q): _ranked(q, r, allow_duplicates) for q, r in run.items()}
    if isinstance(run, Run):
        return run if all(rankings[q] == r for q, r in run.items()) else run.derive(rankings)
    return Run(rankings)


def as_run_list(runs: Any, argument: str = "runs") -> list[Any]:
    """The runs a stage takes several of, as a list: any iterable of what `as_run` takes; one
    run alone (a path, a mapping, a frame) is an error, not a list of its keys or letters."""
    one = isinstance(runs, (*PATH_TYPES, bytes, Mapping)) or _type_name(runs) in ("pandas.DataFrame", "ranx.Run")
    if one or not isinstance(runs, Iterable):
        raise _type_error(argument, runs, "a list of runs")
    return list(runs)


def as_run(run: RunLike, bench: BenchLike | None = None, split: str | None = None, *,
           min_label: int = MIN_LABEL.default, allow_partial: bool = False, allow_duplicates: bool = False) -> Run:
    """A run from any of the module docstring's forms; a file is read by `open_run` (checked
    against `bench`, cut to `split`); an object given with `bench` and `split` is cut to it."""
    b = None if bench is None else as_benchmark(bench)
    if isinstance(run, PATH_TYPES):
        return open_run(run, b, split, min_label=min_label, allow_partial=allow_partial,
                        allow_duplicates=allow_duplicates)
    run = _checked_run(run, allow_duplicates)
    if b is None:
        return run
    if getattr(run, "checked_against", None) != b.path:
        b.check(run)
    return _cut(run, b, split, run)


def _labels(qid: Any, labels: Any) -> dict[str, int]:
    """{pid: label} of one question: whole-number labels (a float like 2.0 taken as 2)."""
    if not isinstance(labels, Mapping):
        raise InputError(f"question {qid!r}: qrels must map each passage id to a label", record=str(qid),
                         field="qrels")
    out = {}
    for pid, label in labels.items():
        whole = isinstance(label, (int, float)) and not isinstance(label, bool) and float(label).is_integer()
        if not whole:
            raise InputError(f"label {label!r} is not an integer", record=f"{qid} {pid}", field="label")
        out[str(pid)] = int(label)
    return out


def as_qrels(qrels: Any) -> tuple[Qrels, Benchmark | None]:
    """(qrels, its benchmark if given one) from any of the module docstring's forms."""
    if isinstance(qrels, Benchmark):
        return qrels.qrels, qrels
    if isinstance(qrels, Qrels):
        return qrels, None
    if _type_name(qrels) == "ranx.Qrels":
        qrels = qrels.to_dict()
    elif _type_name(qrels) == "pandas.DataFrame":
        frame, qrels = qrels, {}
        for qid, pid, label in _frame_rows(frame, "qrels", ("qid", "docno", "label")):
            qrels.setdefault(str(qid), {})[pid] = label
    if isinstance(qrels, Mapping):
        return Qrels({str(q): _labels(q, d) for q, d in qrels.items()}), None
    if not isinstance(qrels, PATH_TYPES):
        raise _type_error("qrels", qrels, QRELS_FORMS)
    if Path(qrels).is_dir():
        bench = Benchmark(qrels)
        return bench.qrels, bench
    return Qrels.from_file(qrels), None
