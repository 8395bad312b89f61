"""`inferqa index`, `inferqa retrieve` and `inferqa oracle`: TREC run files from a benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from .. import registry
from ..formats.benchmark import Benchmark
from ..defaults import NUM_ACTORS, RETRIEVE_DEPTH
from ..errors import InputError
from ..formats.oracles import ORACLE_SEED
from ..defaults import MIN_LABEL
from ..options import parse_key_values
from .app import app
from ..retrieve.diversify import FLAGS as DIVERSIFY_FLAGS, GROUPING as DIVERSIFY_BY, MARGIN as DIVERSIFY_MARGIN
from ..retrieve.diversify import SHARE as DIVERSIFY_SHARE
from ..retrieve.diversify import PER_GROUP as DIVERSIFY_N
from .flags import declared_flag, declared_help, option_flag

RETRIEVER_HELP = " | ".join(registry.available("retriever")) + " (`inferqa plugins retriever NAME`: its options)."
INDEX_DIR_HELP = "Index directory (default: BENCH/indexes/<retriever>-<hash of options>/)."
FUSION_WEIGHTED = ", ".join(p.name for p in registry.plugins("fusion") if p.meta.get("weights"))
OPT_HELP = "Extra retriever option KEY=VALUE (repeatable), e.g. --opt hnsw_m=48."


def _retriever(name: str, opts: list[str], **flags):
    """The retriever NAME with the flags the user gave (None: not given) and --opt pairs; the
    retriever itself refuses an option it does not take."""
    from ..retrieve import get_retriever

    options = {key: value for key, value in flags.items() if value is not None}
    options.update(parse_key_values(opts, "opt"))
    return get_retriever(name, **options)


def _flags(model, no_dedup, k1, b, query_prefix, passage_prefix, batch_size, index_type) -> dict:
    return {"model": model, "dedup": None if no_dedup is None else not no_dedup, "k1": k1, "b": b,
            "query_prefix": query_prefix, "passage_prefix": passage_prefix, "batch_size": batch_size,
            "index_type": index_type}


# Shared options of `index` and `retrieve` (the same options find the same index).
_retr = typer.Option("bm25", "--retriever", "-r", help=RETRIEVER_HELP)
# Shortcuts for common retriever options, help from their declarations; unset ones take the
# retriever's default, and one the chosen retriever does not take is an error (as with --opt).
_model = declared_flag("retriever", "model", "--model")
_no_dedup = typer.Option(None, "--no-dedup", help="Sets dedup to false; " + declared_help("retriever", "dedup"))
_k1 = declared_flag("retriever", "k1", "--k1")
_b = declared_flag("retriever", "b", "--b")
_qp = declared_flag("retriever", "query_prefix", "--query-prefix")
_pp = declared_flag("retriever", "passage_prefix", "--passage-prefix")
_bs = declared_flag("retriever", "batch_size", "--batch-size")
_it = declared_flag("retriever", "index_type", "--index-type")
_opt = typer.Option(None, "--opt", help=OPT_HELP)
_idx = typer.Option(None, "--index-dir", help=INDEX_DIR_HELP)



@app.command("index")
def index_cmd(
    bench_dir: Path = typer.Argument(..., help="Benchmark directory written by `inferqa build`."),
    retriever: str = _retr, model: Optional[str] = _model, no_dedup: Optional[bool] = _no_dedup,
    k1: Optional[float] = _k1, b: Optional[float] = _b, query_prefix: Optional[str] = _qp,
    passage_prefix: Optional[str] = _pp, batch_size: Optional[int] = _bs, index_type: Optional[str] = _it,
    opt: Optional[List[str]] = _opt, index_dir: Optional[Path] = _idx,
    backend: str = typer.Option("local", "--backend", help="Dense: local, or ray: passages encoded on a pool "
                                "of Ray actors (docs/scaling.md)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster: auto, ray://HEAD:10001."),
    num_actors: int = option_flag(NUM_ACTORS, "--num-actors", filled=True, note="dense: encoder actors"),
) -> None:
    """Build (or resume, or reuse) a retriever's index of the benchmark's corpus."""
    from ..io import check_output
    from ..scale import Executor

    executor = Executor(backend, ray_address=ray_address, num_actors=num_actors)
    r = _retriever(retriever, opt or [], **_flags(model, no_dedup, k1, b, query_prefix, passage_prefix,
                                                  batch_size, index_type))
    bench = Benchmark(bench_dir)
    check_output(index_dir or r.default_index_dir(bench), kind="dir")
    out = r.index(bench, index_dir, executor=executor)
    typer.echo(f"index written: {out}")


@app.command("retrieve")
def retrieve_cmd(
    bench_dir: Path = typer.Argument(..., help="Benchmark directory written by `inferqa build`."),
    out: Path = typer.Option(..., "--out", "-o", help="TREC run file to write (qid Q0 pid rank score tag)."),
    split: str = typer.Option("test", "--split", help="Questions to retrieve for: train | dev | test | all."),
    depth: int = option_flag(RETRIEVE_DEPTH, "--depth", filled=True),
    retriever: str = _retr, model: Optional[str] = _model, no_dedup: Optional[bool] = _no_dedup,
    k1: Optional[float] = _k1, b: Optional[float] = _b, query_prefix: Optional[str] = _qp,
    passage_prefix: Optional[str] = _pp, batch_size: Optional[int] = _bs, index_type: Optional[str] = _it,
    opt: Optional[List[str]] = _opt, index_dir: Optional[Path] = _idx,
    diversify: Optional[int] = option_flag(DIVERSIFY_N, "--diversify"),
    diversify_by: Optional[str] = option_flag(DIVERSIFY_BY, "--diversify-by"),
    diversify_margin: Optional[float] = option_flag(DIVERSIFY_MARGIN, "--diversify-margin",
                                                    note="needs --diversify; `inferqa tune-diversify` chooses it"),
    diversify_share: Optional[float] = option_flag(DIVERSIFY_SHARE, "--diversify-share",
                                                   note="needs --diversify; not with --diversify-margin; "
                                                        "`inferqa tune-diversify` chooses it"),
) -> None:
    """Retrieve the top k passages for each question of a split (needs `inferqa index` first)."""
    from ..io import check_output
    from ..retrieve.diversify import check_diversify, diversify as diversify_run
    from ..retrieve import question_queries

    check_output(out)
    per_group, grouping, margin, share = check_diversify(diversify, diversify_by, diversify_margin,
                                                         diversify_share, names=DIVERSIFY_FLAGS)
    bench = Benchmark(bench_dir)
    r = _retriever(retriever, opt or [], **_flags(model, no_dedup, k1, b, query_prefix, passage_prefix,
                                                  batch_size, index_type))
    r.attach(bench, index_dir)
    r.load()  # a missing index fails before any query is encoded
    run = r.search(question_queries(bench, bench.split_qids(split)), depth)
    if per_group is not None:
        run = diversify_run(run, bench, per_group, grouping, margin, share)
    run.to_file(out, against=bench)
    typer.echo(f"{len(run)} questions × up to {depth} passages → {out}")


@app.command("oracle")
def oracle_cmd(
    bench_dir: Path = typer.Argument(..., help="Benchmark directory written by `inferqa build`."),
    kind: str = typer.Option(..., "--kind", help="retriever, reranker (needs --run) or optimal: `inferqa plugins "
                             "oracle` says what each writes."),
    out: Path = typer.Option(..., "--out", "-o", help="TREC run file to write."),
    run_file: Optional[Path] = typer.Option(None, "--run", help="Run to rerank (--kind reranker)."),
    split: str = typer.Option("test", "--split", help="Questions: train | dev | test | all (retriever, optimal)."),
    seed: Optional[int] = option_flag(ORACLE_SEED, "--seed"),
    min_label: Optional[int] = option_flag(MIN_LABEL, "--min-label", note="at most the largest label"),
) -> None:
    """Write an oracle run: the upper bounds of retrieval and reranking."""
    from ..evaluate import check_min_label
    from ..formats import open_run
    from ..io import check_output

    check_output(out)
    if kind not in registry.available("oracle"):
        raise InputError(f"unknown oracle kind {kind!r} (use {', '.join(registry.available('oracle'))})", field="kind")
    oracle = registry.get("oracle", kind)
    bench = Benchmark(bench_dir)
    min_label = check_min_label(min_label, bench.qrels)
    if oracle.meta.get("needs_run"):
        if run_file is None:
            raise InputError(f"--kind {kind} needs --run RUN.trec", field="run")
        result = oracle.create()(bench, None, open_run(run_file, bench))
    else:
        if run_file is not None:
            raise InputError(f"--run applies to --kind reranker only, not {kind}", field="run")
        given = {k: v for k, v in {"seed": seed, "min_label": min_label}.items() if k in oracle.options}
        result = oracle.create(**given)(bench, bench.split_qids(split), None)
    result.to_file(out)
    typer.echo(f"{kind} oracle: {len(result)} questions → {out}")


@app.command("fuse")
def fuse_cmd(
    runs: List[Path] = typer.Argument(..., metavar="RUN...", help="Two or more TREC runs of the same questions."),
    allow_partial: bool = typer.Option(False, "--allow-partial", help="Fuse runs over different questions (each "
                                       "question from the runs that have it); refused by default."),
    out: Path = typer.Option(..., "--out", "-o", help="Fused TREC run to write."),
    bench_dir: Optional[Path] = typer.Option(None, "--bench", help="Benchmark directory: the runs' question and "
                                             "passage ids are checked against it."),
    split: Optional[str] = typer.Option(None, "--split", help="Fuse only the questions of this split (needs --bench)."),
    method: str = typer.Option("rrf", "--method", help=" | ".join(registry.available("fusion")) +
                               " (`inferqa plugins fusion`: what each computes)."),
    weights: Optional[str] = typer.Option(None, "--weights", help="Comma-separated weight ≥ 0 per run (default 1 "
                                          f"each): {FUSION_WEIGHTED}."),
    rrf_k: Optional[float] = declared_flag("fusion", "rrf_k", "--rrf-k"),
    norm: Optional[str] = declared_flag("fusion", "norm", "--norm"),
    depth: int = option_flag(RETRIEVE_DEPTH, "--depth", filled=True, note="of the fused run"),
) -> None:
    """Fuse runs: reciprocal rank, inverse square rank, CombSUM, CombMNZ, CombMAX or a weighted sum."""
    from ..formats import check_same_questions
    from ..formats import as_run
    from ..io import check_output
    from ..retrieve.fusion import check_weights, fuse, fusion_method

    check_output(out)
    if split is not None and bench_dir is None:
        raise InputError("--split needs --bench DIR (the split's questions come from it)", field="split")
    ws = None if weights is None else check_weights(weights.split(","), len(runs))
    fusion_method(method, ws, rrf_k=rrf_k, norm=norm)  # option errors before any run is read
    bench = Benchmark(bench_dir) if bench_dir is not None else None
    loaded = [as_run(r, bench, split, allow_partial=allow_partial) for r in runs]
    if not allow_partial:
        check_same_questions(loaded, runs)
    fused = fuse(loaded, method, weights=ws, rrf_k=rrf_k, norm=norm, k=depth)
    fused.to_file(out)
    typer.echo(f"{len(runs)} runs fused ({method}): {len(fused)} questions → {out}")
