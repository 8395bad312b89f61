"""Reranking a whole run: the one path for every reranker and both execution backends.

`rerank_run` checks the run against the benchmark, then hands questions to an
`inferqa.scale.Executor` (here, or Ray actors that each build the reranker once). Each
finished question is appended to the checkpoint as it arrives, in one format:
a first line `{"config": header}`, then `{"qid": ..., "ranked": [[pid, score], ...]}` lines.
A rerun with the same header resumes where it stopped; a torn last line is dropped.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

from .. import registry
from ..formats.benchmark import Benchmark
from ..defaults import RERANK_DEPTH
from ..errors import InputError
from ..formats.coerce import as_benchmark, as_run
from ..io import atomic_open
from ..formats import Run
from ..scale.backends import LOCAL, Executor


def rerank_run(run: Run | str | os.PathLike, bench: Benchmark | str | os.PathLike, reranker: Any, *,
               options: dict[str, Any] | None = None, depth: int = RERANK_DEPTH.default,
               qids: Iterable[str] | None = None,
               checkpoint: str | os.PathLike | None = None, executor: Executor | None = None,
               progress: bool = False, batch_size: int = 1) -> Run:
    """Rerank the top `depth` passages of each question of `run` (all, or `qids`).

    `run` and `bench` are objects or paths (a run file is read with the benchmark).
    `reranker` is a `Reranker` or a registry name (built from `options`, once per worker).
    The returned run holds the selected questions only, each with exactly the passages it
    had in `run`; see `Reranker.rerank_question` for the scores. With `checkpoint`, a rerun
    with the same reranker, options, depth and input run resumes (delete it when done).
    """
    executor = executor or LOCAL
    bench = as_benchmark(bench)
    run = as_run(run, bench)
    if depth < 1:
        raise InputError(f"depth must be at least 1, got {depth}", field="depth")
    options = {k: v for k, v in (options or {}).items() if v is not None}
    if not isinstance(reranker, str):
        if options:
            raise InputError("options apply to a reranker given by name", field="options")
        name, header = reranker.name, reranker.config()
    else:
        # built here first, so a bad option or a missing model folder fails before any work
        # (constructors load no model); on Ray each actor builds its own from the name
        built = registry.create("reranker", reranker, **options)
        name = built.name
        header = {"reranker": reranker, "options": json.dumps(options, sort_keys=True, default=repr)}
        if executor.is_local:
            reranker = built
    selected = list(run) if qids is None else list(dict.fromkeys(qids))
    for qid in selected:
        if qid not in run:
            raise InputError(f"question {qid} is not in the run", field="qid")
        if qid not in bench.questions:
            raise InputError(f"question {qid} of the run is not in the benchmark", file=bench.path, field="qid")
    header = {**header, "depth": depth, "run": _digest(run, selected)}
    done = _read_checkpoint(Path(checkpoint), header, run) if checkpoint else {}
    todo = [q for q in selected if q not in done]
    worker = _worker(reranker, options, bench if executor.is_local else bench.path, depth)
    sink = None
    try:
        outs = executor.imap([(qid, run[qid]) for qid in todo], worker, batch_size=batch_size,
                             desc=f"rerank {name}", progress=progress)
        for qid, ranked in zip(todo, outs, strict=True):  # strict: runs `outs` to its end, closing its bar
            if checkpoint and sink is None:  # opened at the first answer: a failure before it leaves none
                sink = _open_checkpoint(Path(checkpoint), header, done)
            done[qid] = [(pid, float(score)) for pid, score in ranked]
            if sink:
                sink.write(json.dumps({"qid": qid, "ranked": done[qid]}) + "\n")
                sink.flush()
    finally:
        if sink:
            sink.close()
    return Run({qid: done[qid] for qid in selected}, tag=f"{run.tag}+{name}")


def _worker(reranker: Any, options: dict[str, Any], bench: Benchmark | str | os.PathLike, depth: int):
    """A factory, called once per worker (here, or per Ray actor): reranker and benchmark are
    built there once, then whole questions are reranked."""

    def make():
        b = bench if isinstance(bench, Benchmark) else Benchmark(bench)
        rr = registry.create("reranker", reranker, **options) if isinstance(reranker, str) else reranker
        if hasattr(rr, "load"):
            rr.load()  # before the progress bar: a model that cannot load fails alone
        return lambda batch: [rr.rerank_question(qid, ranked, b, depth) for qid, ranked in batch]

    return make


def _digest(run: Run, qids: list[str]) -> str:
    """Identifies the input ranking, so a checkpoint is only reused for the same run."""
    h = hashlib.sha256()
    for qid in qids:
        h.update(qid.encode())
        for pid, _ in run[qid]:
            h.update(b" " + pid.encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def _read_checkpoint(path: Path, header: dict, run: Run) -> dict[str, list]:
    """Questions already reranked under the same header; a torn last line ends the read."""
    if not path.exists():
        return {}
    done: dict[str, list] = {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        try:
            if json.loads(fh.readline() or "null") != {"config": json.loads(json.dumps(header))}:
                return {}  # another reranker, options, depth or run wrote it: start again
            for line in fh:
                row = json.loads(line)
                qid, ranked = row["qid"], [tuple(x) for x in row["ranked"]]
                # only trust it if it reranks exactly the passages this run has for the question
                if qid in run and sorted(p for p, _ in ranked) == sorted(p for p, _ in run[qid]):
                    done[qid] = ranked
        except (json.JSONDecodeError, KeyError, TypeError, ValueError):
            pass  # interrupted mid-write: keep what was read before it
    return done


def _open_checkpoint(path: Path, header: dict, done: dict[str, list]):
    """Rewrite the checkpoint with what is kept (dropping any torn line), then append."""
    with atomic_open(path) as fh:
        fh.write(json.dumps({"config": header}) + "\n")
        fh.writelines(json.dumps({"qid": q, "ranked": r}) + "\n" for q, r in done.items())
    return open(path, "a", encoding="utf-8")
