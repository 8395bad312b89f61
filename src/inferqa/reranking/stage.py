"""`inferqa rerank`: a run in, the top DEPTH passages of each question reranked (by
`rerank_run`), diversified when asked (`inferqa.diversification`), a run out."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from ..parameters import (ALLOW_PARTIAL, BACKEND, CACHE, DIVERSIFY, NUM_ACTORS, OVERWRITE, PROGRESS, RAY_ADDRESS,
                          RERANK_DEPTH, RERANK_REPRESENTATIVE, RERANK_WINDOW, USE_CACHE)
from ..errors import InputError
from ..stage import Opt, stage

if TYPE_CHECKING:
    from ..formats import Benchmark, Run
    from ..llm.base import LLM
    from .run import RerankCounts

_DIV = {o.name: o for o in DIVERSIFY}


@dataclass
class Reranked:
    """What `rerank` did: the run it wrote, the reranker calls behind it (one per passage
    scored: the window's candidates, resumed questions' included), the seconds reranking took
    and where the scores came from."""

    run: "Run"
    scored: int
    seconds: float
    counts: "RerankCounts"


@stage("rerank")
def rerank(run: Annotated["Path | Run", Opt("TREC run to rerank (e.g. from `inferqa retrieve`; in Python also a Run)",
                                            metavar="RUN")], *,
           bench: Annotated["Path | Benchmark", Opt("benchmark directory the run was made on (in Python also a "
                                                    "Benchmark)", flags=("--bench", "-b"))],
           reranker: Annotated[str, Opt("llm-pointwise | llm-listwise | upr | cross-encoder | monot5 | rankt5 | lit5 | "
                                        "oracle (`inferqa plugins reranker` lists them with their options)",
                                        flags=("--reranker", "-r"))],
           out: Annotated[Path, Opt("reranked TREC run to write (atomically)", flags=("--out", "-o"))],
           llm: Annotated["str | LLM | None", Opt("LLM rerankers: LLM spec (smollm2, gemma3-270m, llama-cpp:/x.gguf, "
                                                  "openai:MODEL, transformers:ID; in Python also a loaded LLM); "
                                                  "default: the reranker's own (`inferqa plugins reranker`)")] = None,
           model: Annotated["str | None", Opt("cross-encoder and the T5 family: HF id or local folder of the "
                                              "weights; default: the reranker's own", flags=("--model", "-m"))] = None,
           depth: Annotated[int, RERANK_DEPTH] = RERANK_DEPTH.default,
           window: Annotated[str, RERANK_WINDOW] = RERANK_WINDOW.default,
           representative: Annotated[str, RERANK_REPRESENTATIVE] = RERANK_REPRESENTATIVE.default,
           batch_size: Annotated["int | None", Opt("batch size (cross-encoder, T5 family)", min=1)] = None,
           split: Annotated["str | None", Opt("only the questions of this split (the output holds only them)")] = None,
           options: Annotated["dict | None", Opt("extra reranker option KEY=VALUE, repeatable (e.g. window=10, "
                                                 "reduction=mean)", flags=("--option",))] = None,
           cache: Annotated["Path | None", CACHE] = None,
           use_cache: Annotated[bool, USE_CACHE] = USE_CACHE.default,
           backend: Annotated[str, BACKEND] = BACKEND.default,
           ray_address: Annotated["str | None", RAY_ADDRESS] = None,
           num_actors: Annotated[int, NUM_ACTORS] = NUM_ACTORS.default,
           diversify: Annotated["int | None", _DIV["diversify"]] = None,
           diversify_by: Annotated["str | None", _DIV["diversify_by"]] = None,
           diversify_margin: Annotated["float | None", _DIV["diversify_margin"]] = None,
           diversify_share: Annotated["float | None", _DIV["diversify_share"]] = None,
           allow_partial: Annotated[bool, ALLOW_PARTIAL] = False,
           progress: Annotated[bool, PROGRESS] = PROGRESS.default,
           overwrite: Annotated[bool, OVERWRITE] = False) -> Reranked:
    """Rerank the top --depth passages (or --depth distinct questions, --window question) of every
    question of RUN; the passage set is kept.

    Resumable: finished questions go to a checkpoint beside --out, LLM calls to the call cache."""
    import time

    from .. import registry
    from ..formats.coerce import as_benchmark, as_run
    from ..io import check_output
    from ..diversification import FLAGS, check_diversify, diversify as diversified
    from ..scale.backends import Executor
    from .run import RerankCounts, check_representative, check_window, checkpoint_path, rerank_run

    check_output(out)
    check_representative(representative, check_window(window))
    if cache is not None and use_cache:
        check_output(cache)
    given = {k: v for k, v in {"llm": llm, "model": model, "batch_size": batch_size}.items() if v is not None}
    chosen: dict[str, Any] = {**given, **(options or {})}
    plugin = registry.get("reranker", reranker)
    if "llm_options" in plugin.options:
        chosen.setdefault("llm_options", {"cache": None} if not use_cache else {"cache": str(cache)} if cache else {})
    plugin.settings(chosen)  # the reranker's options checked before the run is read
    executor = Executor(backend, ray_address=ray_address, num_actors=num_actors)
    if not isinstance(llm, (str, type(None))) and not executor.is_local:
        raise InputError("a loaded LLM reranks here only: give its spec with --backend ray", field="llm")
    per_group, grouping, margin, share = check_diversify(diversify, diversify_by, diversify_margin, diversify_share,
                                                         names=FLAGS)
    bench = as_benchmark(bench)
    ranked = as_run(run, bench, split, allow_partial=allow_partial)
    ckpt, counts, t0 = checkpoint_path(out), RerankCounts(), time.perf_counter()
    result = rerank_run(ranked, bench, reranker, options=chosen, depth=depth, window=window,
                        representative=representative, qids=ranked.qids,
                        checkpoint=ckpt, progress=progress, executor=executor, counts=counts)
    seconds = time.perf_counter() - t0
    if per_group is not None:
        result = diversified(result, bench, per_group, grouping, margin, share)
    result.to_file(out, against=bench)
    ckpt.unlink(missing_ok=True)
    return Reranked(result, counts.resumed_calls + counts.scored, seconds, counts)
