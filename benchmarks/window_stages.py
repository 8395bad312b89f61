"""Phase 1 of `rerank_window.py`: the benchmarks, the trained models (the clue encoder and
fine-tuned dense, and the cached-training helpers its rerankers share) and each first stage's
top K for the dev and test queries."""

from __future__ import annotations

import time
from pathlib import Path

from cache_keys import key, questions_digest  # (shared with inferential_hard.py, inferential_budget.py)
import cache_keys
import inferential_hard as hard_protocol
from window_protocol import log


# -- phase 1: first stages ----------------------------------------------------------------------
def benchmarks(args) -> dict:
    return hard_protocol.benchmarks(args.out, args.questions, "full")


def model_dir(args, kind: str, train, opts, **inputs) -> Path:
    """Where the `kind` model trained on `train` with `opts` (and any other `inputs`) lives."""
    return cache_keys.model_dir(args.out, kind, train, opts, **inputs)


def trained(folder: Path, train, opts, trainer, what: str, model: str = "minilm") -> Path:
    """`folder`'s model, trained there by `trainer` from `model` unless it is already (and said so)."""
    if (folder / "training.json").exists():
        log(f"reused: {what} {folder.name}")
    else:
        log(f"training {what}")
        trainer(train, folder, model=model, options=opts)
    return folder


def clue_model(args, train) -> Path:
    from inferqa.experiments.finetune import finetune_clue

    opts = hard_protocol.clue_options(max_steps=args.max_steps)
    return trained(model_dir(args, "clue", train, opts), train, opts, finetune_clue, "the clue encoder")


def dense_dir(args, train) -> tuple:
    opts = hard_protocol.clue_options(max_length=256, negatives_from="bm25", max_steps=args.max_steps)
    return opts, model_dir(args, "dense", train, opts)


def dense_model(args, train) -> Path:
    """Fine-tuned dense, trained fairly: at the 256 tokens it encodes, with BM25's negatives."""
    from inferqa.experiments.finetune import finetune_retriever

    opts, d = dense_dir(args, train)
    return trained(d, train, opts, finetune_retriever, "fine-tuned dense (256 tokens, BM25 negatives)")


def first_stage_runs(args, benches: dict, models: dict) -> dict:
    """name -> {split: TREC path} of each first stage's top K for the dev and test queries."""
    from inferqa.retrieve import get_retriever, question_queries

    hard = benches["hard"]
    specs = {"bm25": ("bm25", {}), "clue": ("clue", {"model": str(models["clue"])})}
    if "dense" in models:
        specs["dense"] = ("dense", {"model": str(models["dense"]), "chunk_size": 512})
    out = {}
    for name, (retriever, options) in specs.items():
        r = get_retriever(retriever, show_progress=True, **options).attach(hard)
        if not r.is_indexed():
            log(f"indexing {name} on {hard.path.name}")
            r.index(hard)
        runs = {}
        for split in ("dev", "test"):
            path = args.out / "runs" / f"{name}-{split}-{key(index=r.index_dir.name, k=args.depth, q=questions_digest(hard, split))}.trec"
            if path.exists():
                log(f"reused: {path.name}")
            else:
                t0 = time.perf_counter()
                run = r.search(question_queries(hard, hard.split_qids(split)), args.depth)
                path.parent.mkdir(parents=True, exist_ok=True)
                run.to_file(path, against=hard)
                log(f"{name} {split}: {len(run)} queries in {time.perf_counter() - t0:.1f} s")
            runs[split] = path
        out[name] = runs
    return out


def prepare(args, build_dense: bool = True) -> dict:
    """The first stages; fine-tuned dense built only with `build_dense` (else used when its
    index is finished: another process may be encoding it)."""
    import torch

    from inferqa.retrieve import get_retriever

    torch.set_num_threads(args.threads)
    benches = benchmarks(args)
    models = {"clue": clue_model(args, benches["train"])}
    stages = first_stage_runs(args, benches, models)  # BM25 and clue first: cheap
    if args.skip_dense:
        return {**benches, "models": models, "stages": stages}
    if build_dense:
        models["dense"] = dense_model(args, benches["train"])
        hard_protocol.encode_at(models["dense"], 256)
    else:
        found = sorted((args.out / "models").glob("dense-*/training.json"))
        ready = [f.parent for f in found if get_retriever("dense", model=str(f.parent), chunk_size=512,
                                                         show_progress=False).attach(benches["hard"]).is_indexed()]
        if not ready:
            log("fine-tuned dense is not indexed yet: left out")
            return {**benches, "models": models, "stages": stages}
        models["dense"] = dense_dir(args, benches["train"])[1]
        if models["dense"] not in ready:
            log(f"fine-tuned dense {models.pop('dense').name} is not indexed yet: left out")
            return {**benches, "models": models, "stages": stages}
    stages = first_stage_runs(args, benches, models)
    return {**benches, "models": models, "stages": stages}
