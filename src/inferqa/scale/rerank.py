"""Per-question reranking through `imap_batches`: each worker or Ray actor builds the
reranker (loads its model) and opens the benchmark once, then reranks whole questions."""

from __future__ import annotations

import os
from typing import Any

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


def rerank_run(run: Run, bench_path: str | os.PathLike, name: str, *, depth: int = 100,
               options: dict[str, Any] | None = None, **map_options: Any) -> Run:
    """`get_reranker(name, **options).rerank(run, bench, depth)`, one question per item, on
    either backend (`map_options`: backend, num_actors, ray_address, batch_size, ...)."""
    from ..rerank import reranker_class

    map_options.setdefault("batch_size", 1)
    map_options.setdefault("desc", f"rerank {name}")
    qids = list(run)
    outs = imap_batches([(qid, run[qid]) for qid in qids], reranker_worker(name, bench_path, depth, options),
                        **map_options)
    out = Run(tag=f"{run.tag}+{reranker_class(name).name}")
    for qid, ranked in zip(qids, outs):
        out[qid] = [(pid, float(score)) for pid, score in ranked]
    return out
