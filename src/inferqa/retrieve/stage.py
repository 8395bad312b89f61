"""The entry points of `inferqa.stages.retrieve` (INDEX, RETRIEVE, ORACLE, FUSE): the command
line and the experiment runner call them with the stage's Settings."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .. import registry
from ..errors import InputError
from ..formats import Run
from ..formats.coerce import as_benchmark
from ..io import check_output
from ..models import check_model_kind
from ..stages.retrieve import SHORTCUTS
from ..stages.diversify import OPTIONS as DIVERSIFY_OPTIONS

if TYPE_CHECKING:
    from ..stages import Settings
    from .base import Retriever

# The kind of model each built-in retriever's `model` (and `query_model`) option names.
MODEL_KINDS = {"dense": "dense", "clue": "clue", "colbert": "colbert"}
_DIVERSIFY_FLAGS = tuple(o.cli_flags[0] for o in DIVERSIFY_OPTIONS)


def retriever_options(s: Settings) -> dict[str, Any]:
    """The retriever options given: the shortcut flags (None: not given) and --opt pairs, the
    model paths checked first (a file, an empty or missing folder fails before anything is
    imported or written); the retriever refuses an option it does not take."""
    options = {o.name: s[o.name] for o in SHORTCUTS if s[o.name] is not None}
    options.update(s.options or {})
    kind = MODEL_KINDS.get(s.retriever)
    for key in ("model", "query_model"):
        if kind is not None and isinstance(options.get(key), str):
            check_model_kind(options[key], kind, field=key)
    return options


def _retriever(s: Settings) -> Retriever:
    from . import get_retriever

    return get_retriever(s.retriever, **retriever_options(s))


def index_stage(s: Settings) -> Any:
    """Build (or resume, or reuse) the index; returns its directory."""
    from ..scale import Executor

    r = _retriever(s)  # its model paths checked before anything else
    executor = Executor(s.backend, ray_address=s.ray_address, num_actors=s.num_actors)
    bench = as_benchmark(s.bench)
    check_output(s.index_dir or r.default_index_dir(bench), kind="dir")
    return r.index(bench, s.index_dir, executor=executor)


def retrieve_stage(s: Settings) -> Run:
    """The run of `s.split`, written to `s.out` (diversified when asked)."""
    from .base import question_queries
    from .diversify import check_diversify, diversify

    check_output(s.out)
    per_group, grouping, margin, share = check_diversify(s.diversify, s.diversify_by, s.diversify_margin,
                                                         s.diversify_share, names=_DIVERSIFY_FLAGS)
    bench = as_benchmark(s.bench)
    r = _retriever(s)
    r.attach(bench, s.index_dir)
    r.load()  # a missing index fails before any query is encoded
    run = r.search(question_queries(bench, bench.split_qids(s.split)), s.depth)
    if per_group is not None:
        run = diversify(run, bench, per_group, grouping, margin, share)
    run.to_file(s.out, against=bench)
    return run


def oracle_stage(s: Settings) -> Run:
    """The oracle run of `s.kind`, written to `s.out`."""
    from ..formats import open_run
    from ..formats.oracles import check_min_label

    check_output(s.out)
    if s.kind not in registry.available("oracle"):
        raise InputError(f"unknown oracle kind {s.kind!r} (use {', '.join(registry.available('oracle'))})",
                         field="kind")
    oracle = registry.get("oracle", s.kind)
    bench = as_benchmark(s.bench)
    min_label = check_min_label(s.min_label, bench.qrels)
    if oracle.meta.get("needs_run"):
        if s.run is None:
            raise InputError(f"--kind {s.kind} needs --run RUN.trec", field="run")
        result = oracle.create()(bench, None, open_run(s.run, bench))
    else:
        if s.run is not None:
            raise InputError(f"--run applies to --kind reranker only, not {s.kind}", field="run")
        given = {k: v for k, v in {"seed": s.seed, "min_label": min_label}.items() if k in oracle.options}
        result = oracle.create(**given)(bench, bench.split_qids(s.split), None)
    result.to_file(s.out)
    return result


def fuse_stage(s: Settings) -> Run:
    """The fused run of `s.runs`, written to `s.out`."""
    from ..formats import as_run, check_same_questions
    from .fusion import check_weights, fuse, fusion_method

    check_output(s.out)
    if s.split is not None and s.bench is None:
        raise InputError("--split needs --bench DIR (the split's questions come from it)", field="split")
    weights = None if s.weights is None else check_weights(s.weights, len(s.runs))
    fusion_method(s.method, weights, rrf_k=s.rrf_k, norm=s.norm)  # option errors before any run is read
    bench = as_benchmark(s.bench) if s.bench is not None else None
    loaded = [as_run(r, bench, s.split, allow_partial=s.allow_partial) for r in s.runs]
    if not s.allow_partial:
        check_same_questions(loaded, s.runs)
    fused = fuse(loaded, s.method, weights=weights, rrf_k=s.rrf_k, norm=s.norm, k=s.depth, allow_partial=s.allow_partial)
    fused.to_file(s.out)
    return fused
