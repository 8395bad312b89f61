"""`inferqa index`, `inferqa retrieve` and `inferqa oracle`: TREC run files from a benchmark."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from ..errors import InputError
from ..options import parse_key_values
from .app import app

RETRIEVER_HELP = "bm25 | dense | any registered retriever."
INDEX_DIR_HELP = "Index directory (default: BENCH/indexes/<retriever>-<hash of options>/)."
OPT_HELP = "Extra retriever option KEY=VALUE (repeatable), e.g. --opt hnsw_m=48."


def _retriever(name: str, model: str, no_dedup: bool, k1: float, b: float, query_prefix: str,
               passage_prefix: str, batch_size: int, index_type: str, opts: list[str]):
    from ..retrieve import get_retriever

    options: dict = {}
    if name == "bm25":
        options = {"k1": k1, "b": b, "dedup": not no_dedup}
    elif name == "dense":
        options = {"model": model, "query_prefix": query_prefix, "passage_prefix": passage_prefix,
                   "batch_size": batch_size, "index_type": index_type}
    options.update(parse_key_values(opts, "opt"))
    return get_retriever(name, **options)


def _bench(path: Path):
    from ..benchmark import Benchmark

    return Benchmark(path)


# Shared options of `index` and `retrieve` (the same options find the same index).
_retr = typer.Option("bm25", "--retriever", "-r", help=RETRIEVER_HELP)
_model = typer.Option("minilm", "--model", help="Dense: Hugging Face id, local path, or 'minilm' (bundled).")
_no_dedup = typer.Option(False, "--no-dedup", help="BM25: index the expanded corpus with plain bm25s.")
_k1 = typer.Option(1.5, "--k1", help="BM25 k1.")
_b = typer.Option(0.75, "--b", help="BM25 b.")
_qp = typer.Option("", "--query-prefix", help="Dense: text put before each query (e.g. 'query: ').")
_pp = typer.Option("", "--passage-prefix", help="Dense: text put before each passage (e.g. 'passage: ').")
_bs = typer.Option(64, "--batch-size", help="Dense: encoding batch size.")
_it = typer.Option("flat", "--index-type", help="Dense: flat (exact inner product) or hnsw.")
_opt = typer.Option(None, "--opt", help=OPT_HELP)
_idx = typer.Option(None, "--index-dir", help=INDEX_DIR_HELP)


@app.command("index")
def index_cmd(
    bench_dir: Path = typer.Argument(..., help="Benchmark directory written by `inferqa build`."),
    retriever: str = _retr, model: str = _model, no_dedup: bool = _no_dedup, k1: float = _k1, b: float = _b,
    query_prefix: str = _qp, passage_prefix: str = _pp, batch_size: int = _bs, index_type: str = _it,
    opt: Optional[List[str]] = _opt, index_dir: Optional[Path] = _idx,
    backend: str = typer.Option("local", "--backend", help="Dense: local, or ray: passages encoded on a pool "
                                "of Ray actors (README: Scaling)."),
    ray_address: Optional[str] = typer.Option(None, "--ray-address", help="Ray cluster: auto, ray://HEAD:10001."),
    num_actors: int = typer.Option(2, "--num-actors", help="Dense with --backend ray: encoder actors."),
) -> None:
    """Build (or resume, or reuse) a retriever's index of the benchmark's corpus."""
    scale = []
    if backend != "local":
        from ..scale import check_backend

        check_backend(backend)
        if retriever != "dense":
            raise InputError(f"--backend {backend} encodes dense indexes; {retriever} builds here", field="backend")
        scale = [f"backend={backend}", f"num_actors={num_actors}"] + ([f"ray_address={ray_address}"] if ray_address else [])
    r = _retriever(retriever, model, no_dedup, k1, b, query_prefix, passage_prefix, batch_size, index_type,
                   (opt or []) + scale)
    out = r.index(_bench(bench_dir), index_dir)
    typer.echo(f"index written: {out}")


@app.command("retrieve")
def retrieve_cmd(
    bench_dir: Path = typer.Argument(..., help="Benchmark directory written by `inferqa build`."),
    out: Path = typer.Option(..., "--out", "-o", help="TREC run file to write (qid Q0 pid rank score tag)."),
    split: str = typer.Option("test", "--split", help="Questions to retrieve for: train | dev | test | all."),
    k: int = typer.Option(1000, "--k", help="Passages per question."),
    retriever: str = _retr, model: str = _model, no_dedup: bool = _no_dedup, k1: float = _k1, b: float = _b,
    query_prefix: str = _qp, passage_prefix: str = _pp, batch_size: int = _bs, index_type: str = _it,
    opt: Optional[List[str]] = _opt, index_dir: Optional[Path] = _idx,
) -> None:
    """Retrieve the top k passages for each question of a split (needs `inferqa index` first)."""
    from ..retrieve import question_queries

    bench = _bench(bench_dir)
    r = _retriever(retriever, model, no_dedup, k1, b, query_prefix, passage_prefix, batch_size, index_type,
                   opt or [])
    r.attach(bench, index_dir)
    r.load()  # a missing index fails before any query is encoded
    run = r.search(question_queries(bench, bench.split_qids(split)), k)
    run.save(out)
    typer.echo(f"{len(run)} questions × up to {k} passages → {out}")


@app.command("oracle")
def oracle_cmd(
    bench_dir: Path = typer.Argument(..., help="Benchmark directory written by `inferqa build`."),
    kind: str = typer.Option(..., "--kind", help="retriever: every relevant passage in a seeded random order; "
                             "reranker: --run's passages sorted by label; optimal: every relevant passage "
                             "sorted by label."),
    out: Path = typer.Option(..., "--out", "-o", help="TREC run file to write."),
    run_file: Optional[Path] = typer.Option(None, "--run", help="Run to rerank (--kind reranker)."),
    split: str = typer.Option("test", "--split", help="Questions: train | dev | test | all (retriever, optimal)."),
    seed: int = typer.Option(0, "--seed", help="Shuffle seed of the oracle retriever."),
    min_label: int = typer.Option(1, "--min-label", help="Lowest label that counts as relevant."),
) -> None:
    """Write an oracle run: the upper bounds of retrieval and reranking."""
    from ..evaluate import check_run_ids, optimal, oracle_reranker, oracle_retriever
    from ..records import Run

    bench = _bench(bench_dir)
    if kind == "reranker":
        if run_file is None:
            raise InputError("--kind reranker needs --run RUN.trec", field="run")
        run = Run.load(run_file, bench, split)
        check_run_ids(run, bench, run_file)
        result = oracle_reranker(run, bench.qrels)
    elif kind in ("retriever", "optimal"):
        if run_file is not None:
            raise InputError(f"--run applies to --kind reranker only, not {kind}", field="run")
        qids = bench.split_qids(split)
        result = (oracle_retriever(bench, qids, seed, min_label) if kind == "retriever"
                  else optimal(bench, qids, min_label))
    else:
        raise InputError(f"unknown oracle kind {kind!r} (retriever, reranker or optimal)", field="kind")
    result.save(out)
    typer.echo(f"{kind} oracle: {len(result)} questions → {out}")
