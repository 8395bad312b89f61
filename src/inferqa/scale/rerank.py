"""Per-question reranking through `imap_batches`: each worker or Ray actor builds the
reranker (loads its model) and opens the benchmark once, then reranks whole questions."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from ..errors import InputError
from ..records import Run
from .backends import imap_batches


def reranker_worker(name: str, bench_path: str | os.PathLike, depth: int, options: dict[str, Any] | None = None):
    """A factory for `[(qid, ranked)] -> [reranked]`, reusing `Reranker.rerank` per question."""
    bench_path = os.fspath(bench_path)
    options = dict(options or {})

    def make():
        from ..benchmark import Benchmark
        from ..rerank import get_reranker

        bench = Benchmark(bench_path)
        reranker = get_reranker(name, **options)

        def rerank(batch: list[tuple[str, list]]) -> list[list[tuple[str, float]]]:
            return [reranker.rerank(Run({qid: ranked}), bench, depth)[qid] for qid, ranked in batch]

        return rerank

    return make


def _checkpoint_header(name: str, depth: int, options: dict[str, Any]) -> dict:
    return {"reranker": name, "depth": depth, "options": json.dumps(options, sort_keys=True, default=repr)}


def _done_questions(path: Path, header: dict, run: Run) -> dict[str, list]:
    """Questions a previous run with the same reranker, options and depth finished."""
    if not path.exists():
        return {}
    done: dict[str, list] = {}
    with open(path, encoding="utf-8") as fh:
        try:
            if json.loads(fh.readline() or "null") != {"config": header}:
                return {}
            for line in fh:
                row = json.loads(line)
                if row["qid"] in run and sorted(p for p, _ in row["ranked"]) == sorted(p for p, _ in run[row["qid"]]):
                    done[row["qid"]] = [tuple(x) for x in row["ranked"]]
        except (json.JSONDecodeError, KeyError, TypeError):
            pass  # a torn last line: keep what was read before it
    return done


def rerank_run(run: Run, bench_path: str | os.PathLike, name: str, *, depth: int = 100,
               options: dict[str, Any] | None = None, qids: Iterable[str] | None = None,
               checkpoint: str | os.PathLike | None = None, **map_options: Any) -> Run:
    """`get_reranker(name, **options).rerank(run, bench, depth)`, one question per item, on
    either backend (`map_options`: backend, num_actors, ray_address, batch_size, ...).

    With `checkpoint`, each finished question is appended there as it arrives and a rerun
    with the same reranker, options and depth skips them (delete the file when done).
    """
    from ..rerank import reranker_class

    options = {k: v for k, v in (options or {}).items() if v is not None}
    map_options.setdefault("batch_size", 1)
    map_options.setdefault("desc", f"rerank {name}")
    wanted = list(dict.fromkeys(qids)) if qids is not None else list(run)
    missing = [q for q in wanted if q not in run]
    if missing:
        raise InputError(f"question {missing[0]} is not in the run", field="qid")
    header = _checkpoint_header(name, depth, options)
    done = _done_questions(Path(checkpoint), header, run) if checkpoint else {}
    todo = [q for q in wanted if q not in done]
    sink = None
    if checkpoint:
        path = Path(checkpoint)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        with open(tmp, "w", encoding="utf-8") as fh:  # rewrite what is kept, dropping any torn line
            fh.write(json.dumps({"config": header}) + "\n")
            fh.writelines(json.dumps({"qid": q, "ranked": r}) + "\n" for q, r in done.items())
        os.replace(tmp, path)
        sink = open(path, "a", encoding="utf-8")
    try:
        outs = imap_batches([(qid, run[qid]) for qid in todo], reranker_worker(name, bench_path, depth, options),
                            **map_options)
        for qid, ranked in zip(todo, outs):
            done[qid] = [(pid, float(score)) for pid, score in ranked]
            if sink:
                sink.write(json.dumps({"qid": qid, "ranked": done[qid]}) + "\n")
                sink.flush()
    finally:
        if sink:
            sink.close()
    return Run({qid: done[qid] for qid in wanted}, tag=f"{run.tag}+{reranker_class(name).name}")
