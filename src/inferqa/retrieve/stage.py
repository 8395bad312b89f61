"""`inferqa index`, `retrieve`, `oracle` and `fuse`: TREC run files from a benchmark.

`index` and `retrieve` take the same retriever options (the same options find the same index).
The shortcut parameters (model, k1, ...) are the retrievers' own options, each declared by the
retriever plugins that take it (their help and default: `inferqa plugins retriever NAME`); one
the chosen retriever does not take is an error, as with `options`.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

from .. import registry
from ..errors import InputError
from ..models import check_model_kind
from ..parameters import (BACKEND, BENCH, DEPTH, DIVERSIFY, FUSION_METHOD, NUM_ACTORS, ORACLE_SEED, OVERWRITE, RETRIEVE_SPLIT, RETRIEVER,
                          SHORTCUTS, MIN_LABEL)
from ..stage import Opt, stage

if TYPE_CHECKING:
    from ..formats import Benchmark, Run

# The kind of model each built-in retriever's `model` (and `query_model`) option names.
MODEL_KINDS = {"dense": "dense", "clue": "clue", "colbert": "colbert"}
_SHORT = {o.name: o for o in SHORTCUTS}
_DIV = {o.name: o for o in DIVERSIFY}

Bench = Annotated["Path | Benchmark", BENCH]
Out = Annotated[Path, Opt("TREC run file to write (qid Q0 pid rank score tag)", flags=("--out", "-o"))]
Overwrite = Annotated[bool, OVERWRITE]
Retriever = Annotated[str, RETRIEVER]
Model = Annotated["str | None", _SHORT["model"]]
Dedup = Annotated["bool | None", _SHORT["dedup"]]
K1 = Annotated["float | None", _SHORT["k1"]]
B = Annotated["float | None", _SHORT["b"]]
QueryPrefix = Annotated["str | None", _SHORT["query_prefix"]]
PassagePrefix = Annotated["str | None", _SHORT["passage_prefix"]]
BatchSize = Annotated["int | None", _SHORT["batch_size"]]
IndexType = Annotated["str | None", _SHORT["index_type"]]
Options = Annotated["dict | None", Opt("extra retriever option KEY=VALUE (repeatable), e.g. --opt hnsw_m=48",
                                       flags=("--opt",))]
IndexDir = Annotated["Path | None", Opt("index directory (default: BENCH/indexes/<retriever>-<hash of options>/)")]


def _retriever(name: str, options: dict | None, **shortcuts: Any) -> Any:
    """Retriever NAME from the shortcuts given (None: not given) and `options`, its model paths
    checked first (a file, an empty or missing folder fails before anything is imported or
    written); the retriever refuses an option it does not take."""
    from . import get_retriever

    chosen = {key: value for key, value in shortcuts.items() if value is not None}
    chosen.update(options or {})
    kind = MODEL_KINDS.get(name)
    for key in ("model", "query_model"):
        if kind is not None and isinstance(chosen.get(key), str):
            check_model_kind(chosen[key], kind, field=key)
    return get_retriever(name, **chosen)


@stage("index")
def index(bench: Bench, *, retriever: Retriever = RETRIEVER.default, model: Model = None, dedup: Dedup = None,
          k1: K1 = None, b: B = None, query_prefix: QueryPrefix = None, passage_prefix: PassagePrefix = None,
          batch_size: BatchSize = None, index_type: IndexType = None, options: Options = None,
          index_dir: IndexDir = None,
          backend: Annotated[str, Opt("dense: local, or ray: passages encoded on a pool of Ray actors "
                                      "(docs/scaling.md)")] = BACKEND.default,
          ray_address: Annotated["str | None", Opt("Ray cluster: auto, ray://HEAD:10001")] = None,
          num_actors: Annotated[int, NUM_ACTORS] = NUM_ACTORS.default) -> Path:
    """Build (or resume, or reuse) a retriever's index of the benchmark's corpus; returns its folder."""
    from ..formats.coerce import as_benchmark
    from ..io import check_output
    from ..scale import Executor
    r = _retriever(retriever, options, model=model, dedup=dedup, k1=k1, b=b, query_prefix=query_prefix,
                   passage_prefix=passage_prefix, batch_size=batch_size, index_type=index_type)  # paths checked first
    executor = Executor(backend, ray_address=ray_address, num_actors=num_actors)
    bench = as_benchmark(bench)
    check_output(index_dir or r.default_index_dir(bench), kind="dir")
    return r.index(bench, index_dir, executor=executor)


@stage("retrieve")
def retrieve(bench: Bench, *, out: Out, split: Annotated[str, RETRIEVE_SPLIT] = RETRIEVE_SPLIT.default,
             depth: Annotated[int, DEPTH] = DEPTH.default, retriever: Retriever = RETRIEVER.default,
             model: Model = None, dedup: Dedup = None, k1: K1 = None, b: B = None, query_prefix: QueryPrefix = None,
             passage_prefix: PassagePrefix = None, batch_size: BatchSize = None, index_type: IndexType = None,
             options: Options = None, index_dir: IndexDir = None,
             diversify: Annotated["int | None", _DIV["diversify"]] = None,
             diversify_by: Annotated["str | None", _DIV["diversify_by"]] = None,
             diversify_margin: Annotated["float | None", _DIV["diversify_margin"]] = None,
             diversify_share: Annotated["float | None", _DIV["diversify_share"]] = None,
             overwrite: Overwrite = False) -> Run:
    """Retrieve the top k passages for each question of a split (needs `inferqa index` first)."""
    from ..formats.coerce import as_benchmark
    from ..io import check_output
    from .base import question_queries
    from ..diversification import check_diversify, diversify as diversified

    check_output(out)
    per_group, grouping, margin, share = check_diversify(diversify, diversify_by, diversify_margin, diversify_share,
                                                         names=tuple(o.cli_flags[0] for o in DIVERSIFY))
    bench = as_benchmark(bench)
    r = _retriever(retriever, options, model=model, dedup=dedup, k1=k1, b=b, query_prefix=query_prefix,
                   passage_prefix=passage_prefix, batch_size=batch_size, index_type=index_type)
    r.attach(bench, index_dir)
    r.load()  # a missing index fails before any query is encoded
    run = r.search(question_queries(bench, bench.split_qids(split)), depth)
    if per_group is not None:
        run = diversified(run, bench, per_group, grouping, margin, share)
    run.to_file(out, against=bench)
    return run


@stage("oracle")
def oracle(bench: Bench, *,
           kind: Annotated[str, Opt("retriever, reranker (needs --run) or optimal: `inferqa plugins oracle` says "
                                    "what each writes")],
           out: Annotated[Path, Opt("TREC run file to write", flags=("--out", "-o"))],
           run: Annotated["Path | None", Opt("run to rerank (--kind reranker)")] = None,
           split: Annotated[str, Opt("questions: train | dev | test | all (retriever, optimal)")]
           = RETRIEVE_SPLIT.default,
           seed: Annotated[int, ORACLE_SEED] = ORACLE_SEED.default,
           min_label: Annotated[int, Opt(f"{MIN_LABEL.help}; at most the largest label", min=1)] = MIN_LABEL.default,
           overwrite: Overwrite = False) -> Run:
    """Write an oracle run: the upper bounds of retrieval and reranking."""
    from ..formats import open_run
    from ..formats.coerce import as_benchmark
    from ..formats.oracles import check_min_label
    from ..io import check_output

    check_output(out)
    if kind not in registry.available("oracle"):
        raise InputError(f"unknown oracle kind {kind!r} (use {', '.join(registry.available('oracle'))})",
                         field="kind")
    plugin = registry.get("oracle", kind)
    bench = as_benchmark(bench)
    min_label = check_min_label(min_label, bench.qrels)
    if plugin.meta.get("needs_run"):
        if run is None:
            raise InputError(f"--kind {kind} needs --run RUN.trec", field="run")
        result = plugin.create()(bench, None, open_run(run, bench))
    else:
        if run is not None:
            raise InputError(f"--run applies to --kind reranker only, not {kind}", field="run")
        given = {k: v for k, v in {"seed": seed, "min_label": min_label}.items() if k in plugin.options}
        result = plugin.create(**given)(bench, bench.split_qids(split), None)
    result.to_file(out)
    return result


@stage("fuse")
def fuse(runs: Annotated[list[Path], Opt("two or more TREC runs of the same questions (in Python also Run objects)",
                                         metavar="RUN...")], *,
         out: Annotated[Path, Opt("fused TREC run to write", flags=("--out", "-o"))],
         allow_partial: Annotated[bool, Opt("fuse runs over different questions (each question from the runs that "
                                            "have it); refused by default")] = False,
         bench: Annotated["Path | Benchmark | None", Opt("benchmark directory (in Python also a Benchmark): the "
                                                         "runs' question and passage ids are checked against it",
                                                         flags=("--bench",))] = None,
         split: Annotated["str | None", Opt("fuse only the questions of this split (needs --bench)")] = None,
         method: Annotated[str, FUSION_METHOD] = FUSION_METHOD.default,
         weights: Annotated["list[float] | None", Opt("comma-separated weight ≥ 0 per run (default 1 each)")] = None,
         rrf_k: Annotated["float | None", Opt("rrf: constant k in w / (k + rank)")] = None,
         norm: Annotated["str | None", Opt("per-question score normalisation of each run")] = None,
         depth: Annotated[int, Opt(f"{DEPTH.help}; of the fused run", min=1)] = DEPTH.default,
         overwrite: Overwrite = False) -> Run:
    """Fuse runs: reciprocal rank, inverse square rank, CombSUM, CombMNZ, CombMAX or a weighted sum."""
    from ..io import check_output
    from .fusion import fuse as fused

    check_output(out)
    options = {k: v for k, v in {"rrf_k": rrf_k, "norm": norm}.items() if v is not None}
    result = fused(runs, method, weights=weights, depth=depth, bench=bench, split=split, allow_partial=allow_partial,
                   **options)
    result.to_file(out)
    return result
