"""Passages per second of each reranker on this machine, and (with --quality) what each LLM
reranker does to BM25 and dense runs on the demo benchmark.

Throughput: the first --questions demo questions, --depth of their passages each drawn at
random (QUIT's mix: 1-5 hints, 4 on average), reranked with the LLM call cache off so
every call is computed. The cross-encoder is MiniLM-sized (the bundled all-MiniLM-L6-v2 encoder with an
untrained head, as the experiments engineer's fine-tuned one would be); MonoT5 is
T5-small/base-sized with random weights and MiniLM's WordPiece vocabulary: the cost of a
real MonoT5 of that size, not its quality.

    python benchmarks/rerank_throughput.py                          # all rerankers, 3 x depth 10
    python benchmarks/rerank_throughput.py --only llm-pointwise cross-encoder
    python benchmarks/rerank_throughput.py --quality --quality-depth 10   # demo test split
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_VERBOSITY", "error")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

LLM_RERANKERS = ("llm-pointwise", "llm-listwise", "upr")
# upr on the same SmolLM2 converted to float32 transformers weights (what `finetune upr` trains):
# 8 pairs a forward, and one pair a forward (the backend's earlier path)
TRANSFORMERS_UPR = {"upr-transformers": 8, "upr-transformers-unbatched": 1}
ALL = LLM_RERANKERS + tuple(TRANSFORMERS_UPR) + ("cross-encoder", "monot5-small", "monot5-base")


def build_demo(out: Path, n_questions: int | None):
    from inferqa.formats.benchmark import Benchmark
    from inferqa.construct import build_benchmark
    from inferqa.data import demo_path, load_questions

    questions = load_questions(demo_path())
    build_benchmark(questions[:n_questions] if n_questions else questions, out, top_k=5)
    return Benchmark(out)


def retrieve(bench, name: str, qids: list[str], depth: int):
    from inferqa.retrieve import get_retriever, question_queries

    retriever = get_retriever(name, **({"model": "minilm"} if name == "dense" else {}))
    retriever.index(bench)
    return retriever.search(question_queries(bench, qids), depth)


def sample_run(bench, depth: int, seed: int = 0):
    """`depth` passages per question drawn (seeded) from its 325: the corpus's mix of lengths
    (4 hints on average), unlike BM25's top ranks, which favour one-hint passages."""
    import random

    from inferqa.formats import Run

    run = Run(tag="sample")
    for qid in bench.questions:
        pids = sorted(bench.qrels[qid])
        random.Random(f"{seed}:{qid}").shuffle(pids)
        run[qid] = [(pid, float(-i)) for i, pid in enumerate(pids[:depth])]
    return run


def t5_sized(out: Path, size: str) -> Path:
    """A MonoT5-shaped model with random weights and MiniLM's tokenizer (has 'true'/'false')."""
    import torch
    from transformers import AutoTokenizer, T5Config, T5ForConditionalGeneration

    from inferqa.models import minilm_path

    dims = {"small": dict(d_model=512, d_ff=2048, num_layers=6, num_heads=8),
            "base": dict(d_model=768, d_ff=3072, num_layers=12, num_heads=12)}[size]
    tok = AutoTokenizer.from_pretrained(minilm_path())
    tok.save_pretrained(out)
    torch.manual_seed(0)
    cfg = T5Config(vocab_size=tok.vocab_size, d_kv=64, pad_token_id=tok.pad_token_id, eos_token_id=tok.sep_token_id,
                   decoder_start_token_id=tok.pad_token_id, **dims)
    T5ForConditionalGeneration(cfg).save_pretrained(out)
    return out


def make_reranker(name: str, tmp: Path, threads: int):
    from inferqa.llm import load_llm
    from inferqa.models import minilm_path
    from inferqa.reranking import get_reranker

    if name in LLM_RERANKERS:
        return get_reranker(name, llm=load_llm("smollm2", cache=None, n_threads=threads))
    if name in TRANSFORMERS_UPR:
        from inferqa.models import smollm2_transformers_path

        return get_reranker("upr", llm=load_llm(f"transformers:{smollm2_transformers_path()}", cache=None,
                                                n_threads=threads, batch_size=TRANSFORMERS_UPR[name]))
    if name == "cross-encoder":
        from sentence_transformers import CrossEncoder

        from inferqa.models import quiet_loading
        path = tmp / "minilm-ce"
        with quiet_loading():
            CrossEncoder(str(minilm_path()), num_labels=1).save_pretrained(str(path))
        return get_reranker("cross-encoder", model=str(path), batch_size=32)
    size = name.split("-")[1]
    return get_reranker("monot5", model=str(t5_sized(tmp / name, size)), batch_size=16)


def throughput(args) -> list[dict]:
    import torch

    torch.set_num_threads(args.threads)
    rows = []
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        bench = build_demo(tmp / "bench", args.questions)
        run = sample_run(bench, args.depth)
        n = sum(min(args.depth, len(r)) for r in run.values())
        tokens = sum(len(bench.passage_text(p).split()) for r in run.values() for p, _ in r[:args.depth])
        print(f"{len(run)} questions x depth {args.depth} = {n} passages, {tokens / n:.0f} words each on average",
              file=sys.stderr)
        for name in args.only or ALL:
            rr = make_reranker(name, tmp, args.threads)
            rr.rank(bench.questions[next(iter(run))].text, ["warm-up passage"])  # load weights, first call
            start, cpu = time.perf_counter(), time.process_time()
            rr.rerank(run, bench, depth=args.depth)
            seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
            rows.append({"reranker": name, "passages": n, "seconds": seconds, "cpu_seconds": cpu,
                         "passages_per_s": n / seconds, "passages_per_cpu_s": n / cpu})
            print(json.dumps(rows[-1]), file=sys.stderr)
            llm = getattr(rr, "_llm", None)
            if llm is not None:
                llm.close()
    # CPU seconds (all threads) say more than wall time on a machine shared with other jobs
    fastest = max(r["passages_per_cpu_s"] for r in rows)
    print(f"\nload average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; threads {args.threads}")
    print("| reranker | passages | wall s | passages/s | CPU s | passages/CPU-s | x CPU cost of cheapest |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['reranker']} | {r['passages']} | {r['seconds']:.1f} | {r['passages_per_s']:.2f} | "
              f"{r['cpu_seconds']:.1f} | {r['passages_per_cpu_s']:.2f} | {fastest / r['passages_per_cpu_s']:.1f} |")
    return rows


def quality(args) -> list[dict]:
    """hit@1 / mrr / ndcg@10 before and after each LLM reranker, and the oracle reranker.

    Relevance at two levels: label >= 1 (a passage of the question; ndcg gains 2^label - 1)
    and label 2 (answerable, as labelled by SmolLM2)."""
    from inferqa.evaluation import evaluate
    from inferqa.llm import load_llm
    from inferqa.reranking import get_reranker

    from inferqa.formats.benchmark import Benchmark
    from inferqa.label import label_benchmark

    llm = load_llm("smollm2", n_threads=args.threads)  # cached: a rerun repeats no call
    rows = []
    with tempfile.TemporaryDirectory() as tmpdir:
        bench = build_demo(Path(tmpdir) / "bench", None)
        qids = bench.split_qids(args.split)
        # answerability labels (2) for the split's passages: SmolLM2 answers from one ordering
        # per hint subset, exact match against the aliases; the only labeller offline here
        label_benchmark(bench.path, [llm], mode="subsets", qids=qids, progress=True)
        bench = Benchmark(bench.path)
        labels = {}
        for q in qids:
            for lab in bench.qrels[q].values():
                labels[lab] = labels.get(lab, 0) + 1
        print(f"demo split {args.split}: {len(qids)} questions; label counts {labels}", file=sys.stderr)
        for retriever in ("bm25", "dense"):
            run = retrieve(bench, retriever, qids, 100)
            oracle = get_reranker("oracle").rerank(run, bench, depth=args.quality_depth)
            settings = [("(none)", run), ("oracle reranker", oracle)]
            for name in args.only or LLM_RERANKERS:
                start = time.perf_counter()
                settings.append((name, get_reranker(name, llm=llm).rerank(run, bench, depth=args.quality_depth,
                                                                              progress=True)))
                print(f"{retriever} + {name}: {time.perf_counter() - start:.0f} s", file=sys.stderr)
            for name, r in settings:
                own = evaluate(r, bench.qrels, ("hit@1", "mrr", "ndcg@10"), min_label=1)
                answerable = evaluate(r, bench.qrels, ("hit@1", "mrr"), min_label=2)
                rows.append({"retriever": retriever, "reranker": name, **{f"{k} (>=1)": v for k, v in own.items()},
                             **{f"{k} (=2)": v for k, v in answerable.items()}})
    metrics = [k for k in rows[0] if k not in ("retriever", "reranker")]
    print(f"\n| retriever | reranker (top {args.quality_depth}) | " + " | ".join(metrics) + " |")
    print("|---|---|" + "---:|" * len(metrics))
    for r in rows:
        print(f"| {r['retriever']} | {r['reranker']} | " + " | ".join(f"{100 * r[m]:.1f}" for m in metrics) + " |")
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--questions", type=int, default=3, help="demo questions for the throughput runs")
    ap.add_argument("--depth", type=int, default=10, help="passages reranked per question (throughput)")
    ap.add_argument("--only", nargs="*", help=f"subset of: {', '.join(ALL)}")
    ap.add_argument("--quality", action="store_true", help="also the demo-benchmark quality table")
    ap.add_argument("--quality-only", action="store_true", help="only the quality table")
    ap.add_argument("--quality-depth", type=int, default=10)
    ap.add_argument("--split", default="test")
    ap.add_argument("--threads", type=int, default=1, help="llama.cpp and torch threads (1 is best on a busy machine)")
    ap.add_argument("--json", type=Path, help="write the rows here too")
    args = ap.parse_args()
    from requirements import require

    require("rerank_throughput.py", ("transformers", "sentence_transformers", "llama_cpp"), "the rerankers")
    out = {}
    if not args.quality_only:
        out["throughput"] = throughput(args)
    if args.quality or args.quality_only:
        out["quality"] = quality(args)
    if args.json:
        args.json.write_text(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
