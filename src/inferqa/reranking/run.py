"""Reranking a whole run: the one path for every reranker and both execution backends (here, or
Ray actors that each build the reranker once), with a checkpoint a rerun resumes from."""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Iterable

from .. import registry
from ..formats.benchmark import Benchmark
from ..parameters import RERANK_DEPTH, RERANK_REPRESENTATIVE, RERANK_WINDOW
from ..errors import InputError, warn
from ..formats.coerce import as_benchmark, as_run
from ..formats.checkpoints import RankingCheckpoint
from ..hints import GroupKey, groupings, hint_group_key
from ..formats import Run
from ..scale.backends import LOCAL, Executor
from ..text import did_you_mean


@dataclass
class RerankCounts:
    """What one `rerank_run` call did: questions taken whole from its checkpoint, passages its
    workers scored, and of the model calls they made, how many were computed and how many the
    LLM call cache answered (None: a reranker with no call cache, or workers on Ray)."""

    resumed: int = 0
    resumed_calls: int = 0  # the reranker calls behind the resumed questions
    scored: int = 0
    computed: int | None = None
    cached: int | None = None

    def line(self, seconds: float) -> str:
        """Where the scores came from: model calls computed (their rate: computed calls only) and
        answered by the LLM call cache, questions taken whole from the checkpoint."""
        # without a call cache, each passage scored is one computed call
        computed, cached = (self.scored, 0) if self.computed is None else (self.computed, self.cached or 0)
        source = f", {cached:,} from the LLM cache" if self.computed is not None else " (no call cache)"
        rate = f", {computed / max(seconds, 1e-9):.1f} computed calls/s" if computed else ", none computed: no rate"
        resumed = f"; {self.resumed:,} questions from the checkpoint" if self.resumed else ""
        return f"model calls: {computed:,} computed{source}{rate}{resumed}"


def rerank_run(run: Run | str | os.PathLike, bench: Benchmark | str | os.PathLike, reranker: Any, *,
               options: dict[str, Any] | None = None, depth: int = RERANK_DEPTH.default,
               window: str = RERANK_WINDOW.default, representative: str = RERANK_REPRESENTATIVE.default,
               qids: Iterable[str] | None = None,
               checkpoint: str | os.PathLike | None = None, executor: Executor | None = None,
               progress: bool = False, batch_size: int = 1, counts: RerankCounts | None = None) -> Run:
    """Rerank the top `depth` passages of each question of `run` (all, or `qids`), or with a distinct
    `window` (a hint-group: question, set, linked) `depth` representatives, one per group
    (`Reranker.rerank_question`; `representative`: which passage stands for a group): `depth` reranker
    calls per question, fewer (with one warning) where the run holds fewer groups. `run`, `bench`:
    objects or paths; `reranker`: a `Reranker` or a registry name (built from `options`, once per
    worker). The result holds the selected questions, each with exactly its passages in `run`. With
    `checkpoint`, a rerun with the same reranker, options, depth and input run resumes (delete it
    when done); `counts` is filled when given."""
    executor = executor or LOCAL
    bench = as_benchmark(bench)
    run = as_run(run, bench)
    depth = RERANK_DEPTH.check(depth, "depth")
    group = window_key(bench, window)
    representative = check_representative(representative, window)
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
        header = {"reranker": reranker, "options": json.dumps(options, sort_keys=True, default=_header_value)}
        if executor.is_local:
            reranker = built
    selected = list(run) if qids is None else list(dict.fromkeys(qids))
    for qid in selected:
        if qid not in run:
            raise InputError(f"question {qid} is not in the run", field="qid")
        if qid not in bench.questions:
            raise InputError(f"question {qid} of the run is not in the benchmark", file=bench.path, field="qid")
    header = {**header, "depth": depth, **({"window": window} if group else {}), "run": _digest(run, selected),
              **({"representative": representative} if representative != RERANK_REPRESENTATIVE.default else {})}
    saved = RankingCheckpoint(checkpoint, header) if checkpoint else None
    done = saved.read(_trusted(run)) if saved else {}
    todo = [q for q in selected if q not in done]
    calls = {q: _calls(run[q], depth, group) for q in selected}
    if group:
        _warn_if_shallow(run, calls, depth, window)
    worker = _worker(reranker, options, bench if executor.is_local else bench.path, depth, window, representative)
    calls_before = _call_stats(reranker)
    try:
        outs = executor.imap([(qid, run[qid]) for qid in todo], worker, batch_size=batch_size,
                             desc=f"rerank {name}", progress=progress)
        for qid, ranked in zip(todo, outs, strict=True):  # strict: runs `outs` to its end, closing its bar
            if saved and not saved.started:  # opened at the first answer: a failure before it leaves none
                saved.start(done)
            done[qid] = [(pid, float(score)) for pid, score in ranked]
            if saved:
                saved.append(qid, done[qid])
    finally:
        if saved:
            saved.close()
    if counts is not None:
        _count(counts, reranker, calls_before, calls, todo)
    return run.derive({qid: done[qid] for qid in selected}, tag=f"{run.tag}+{name}")


def _worker(reranker: Any, options: dict[str, Any], bench: Benchmark | str | os.PathLike, depth: int,
            window: str, representative: str):
    """A factory, called once per worker (here, or per Ray actor): reranker, benchmark and
    window grouping are built there once, then whole questions are reranked."""

    def make():
        b = bench if isinstance(bench, Benchmark) else Benchmark(bench)
        group = window_key(b, window)
        rr = registry.create("reranker", reranker, **options) if isinstance(reranker, str) else reranker
        if hasattr(rr, "load"):
            rr.load()  # before the progress bar: a model that cannot load fails alone
        return lambda batch: [rr.rerank_question(qid, ranked, b, depth, group, representative)
                              for qid, ranked in batch]

    return make


def check_window(window: object) -> str:
    """`window` if it names a window (plain, or a hint-group plugin), else an InputError naming them."""
    kinds = [RERANK_WINDOW.default, *groupings()]
    if window not in kinds:
        raise InputError(f"unknown window {window!r}{did_you_mean(window, kinds)}; the windows are {', '.join(kinds)}",
                         field="window")
    return str(window)


def check_representative(representative: object, window: str) -> str:
    """`representative` if it is one of RERANK_REPRESENTATIVE's and fits `window`, else an InputError."""
    chosen = RERANK_REPRESENTATIVE.check(representative, "rerank")
    if chosen == "all-hints" and window != "question":
        raise InputError(f"representative 'all-hints' needs --window question, not {window!r}: only a question "
                         "has one passage of all its hints", field="representative")
    return chosen


def window_key(bench: Benchmark, window: str) -> GroupKey | None:
    """None for the plain window, else the hint-group key of a distinct window."""
    return None if check_window(window) == RERANK_WINDOW.default else hint_group_key(bench, window)


def _calls(ranked: list, depth: int, group: GroupKey | None) -> int:
    """The reranker calls a window of `depth` makes on `ranked`: its first `depth` passages, or
    groups (counted only as far as the ranking must be read to find them)."""
    if group is None:
        return min(depth, len(ranked))
    seen: set = set()
    for pid, _ in ranked:
        seen.add(group(pid))
        if len(seen) == depth:
            break
    return len(seen)


def _warn_if_shallow(run: Run, calls: dict[str, int], depth: int, window: str) -> None:
    import math

    short = {q: n for q, n in calls.items() if n < depth}
    if not short:
        return
    worst = min(short, key=lambda q: short[q])
    have, held = short[worst], len(run[worst])
    needed = math.ceil(held * depth / max(have, 1))
    warn(f"{len(short):,} of {len(calls):,} questions hold fewer than {depth} distinct {window} groups "
                  f"(fewest: {have} in {held:,} passages, question {worst}); those rerank the groups they have; "
                  f"a first stage about {needed:,} deep would fill the window")


def _call_stats(reranker: Any) -> tuple[int, int] | None:
    """(computed, cached) calls of a local reranker's LLM call cache so far; None without one."""
    stats = reranker.call_stats() if hasattr(reranker, "call_stats") else None
    return None if stats is None else (stats.misses, stats.hits)


def _count(counts: RerankCounts, reranker: Any, before: tuple[int, int] | None, calls: dict[str, int],
           todo: list[str]) -> None:
    """Fill `counts`: `calls` per selected question, of which `todo` were reranked now."""
    after = _call_stats(reranker)
    counts.resumed, counts.scored = len(calls) - len(todo), sum(calls[q] for q in todo)
    counts.resumed_calls = sum(calls.values()) - counts.scored
    if after is not None:
        start = before or (0, 0)
        counts.computed, counts.cached = after[0] - start[0], after[1] - start[1]


def _digest(run: Run, qids: list[str]) -> str:
    """Identifies the input ranking, so a checkpoint is only reused for the same run."""
    h = hashlib.sha256()
    for qid in qids:
        h.update(qid.encode())
        for pid, _ in run[qid]:
            h.update(b" " + pid.encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def _header_value(value: Any) -> str:
    """An option value in a checkpoint header: a loaded LLM as its identity (as `config()` names
    it: the same model in another process), anything else as its repr."""
    identity = getattr(value, "identity", None)
    return f"llm {identity}" if isinstance(identity, str) else repr(value)


def _trusted(run: Run) -> Callable[[str, list], bool]:
    """A checkpoint row is only trusted if it reranks exactly the passages this run has for the question."""
    return lambda qid, ranked: qid in run and sorted(p for p, _ in ranked) == sorted(p for p, _ in run[qid])


def checkpoint_path(out: os.PathLike) -> Path:
    """Where `inferqa rerank --out OUT` keeps its finished questions until OUT is written."""
    out = Path(out)
    return out.with_name(f".{out.name}.rerank-checkpoint.jsonl")
