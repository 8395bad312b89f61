"""The entry point of the rerank stage (`inferqa.stages.rerank`): a run reranked by
`inferqa.reranking.rerank_run`, then diversified when asked (`inferqa.retrieve.diversify`, which
the rerank package does not import), written atomically."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .. import registry
from ..formats import Run
from ..formats.benchmark import Benchmark
from ..reranking.run import RerankCounts, checkpoint_path, rerank_run
from ..scale.backends import Executor
from ..stages import Settings


@dataclass
class Reranked:
    """What `rerank_stage` did: the run it wrote, the reranker calls behind it (one per passage
    scored: the window's candidates, resumed questions' included), the seconds reranking took
    and where the scores came from."""

    run: Run
    scored: int
    seconds: float
    counts: RerankCounts


def _reranker_options(s: "Settings") -> dict[str, Any]:
    """The reranker's options from the settings (--llm, --model, --batch-size, --option, the LLM
    call cache), checked by its declaration before the run is read."""
    given = {k: s[k] for k in ("llm", "model", "batch_size") if s[k] is not None}
    options = {**given, **(s.options or {})}
    plugin = registry.get("reranker", s.reranker)
    if "llm_options" in plugin.options:
        cache = {"cache": None} if not s.use_cache else ({"cache": str(s.cache)} if s.cache else {})
        options.setdefault("llm_options", cache)
    plugin.settings(options)
    return options


def rerank_stage(s: "Settings") -> Reranked:
    """The entry point of `RERANK` (`inferqa rerank`): the run reranked, diversified when asked,
    written atomically; resumable from the checkpoint beside the output."""
    import time

    from ..formats import open_run
    from ..io import check_output
    from ..retrieve.diversify import FLAGS, check_diversify, diversify

    check_output(s.out)
    if s.cache is not None and s.use_cache:
        check_output(s.cache)
    options = _reranker_options(s)
    executor = Executor(s.backend, ray_address=s.ray_address, num_actors=s.num_actors)
    per_group, grouping, margin, share = check_diversify(s.diversify, s.diversify_by, s.diversify_margin,
                                                         s.diversify_share, names=FLAGS)
    bench = Benchmark(s.bench)
    run = open_run(s.run, bench, s.split, allow_partial=s.allow_partial)
    ckpt, counts, t0 = checkpoint_path(s.out), RerankCounts(), time.perf_counter()
    reranked = rerank_run(run, bench, s.reranker, options=options, depth=s.depth, window=s.window, qids=run.qids,
                          checkpoint=ckpt, progress=True, executor=executor, counts=counts)
    seconds = time.perf_counter() - t0
    if per_group is not None:
        reranked = diversify(reranked, bench, per_group, grouping, margin, share)
    reranked.to_file(s.out, against=bench)
    ckpt.unlink(missing_ok=True)
    return Reranked(reranked, counts.resumed_calls + counts.scored, seconds, counts)
