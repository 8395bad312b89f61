"""Vanilla vs fine-tuned MiniLM retrieval on TriviaHG (validation file, 1,000 questions).

    python benchmarks/finetune_triviahg.py --data ../shared/data/triviahg/validation.json --out runs/ft-triviahg

1. builds the file into a benchmark (top-5 hints, 325 passages per question, split 0.7/0.1/0.2);
2. fine-tunes the bundled MiniLM on the train split (n positives + n BM25 hard negatives per
   question, in-batch negatives, 1 epoch by default);
3. evaluates BM25, vanilla MiniLM and the fine-tuned model on a corpus made of the first
   `--eval-questions` test questions (all their passages), and prints one table.

Labels are the unlabelled build's (every passage of its own question is label 1), so the
metrics measure finding the question's own passages among other questions'.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path, default=Path(__file__).resolve().parents[2] / "shared/data/triviahg/validation.json")
    ap.add_argument("--out", type=Path, default=Path("runs/ft-triviahg"))
    ap.add_argument("--train-questions", type=int, default=400)
    ap.add_argument("--positives", type=int, default=2)
    ap.add_argument("--negatives", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--eval-questions", type=int, default=80)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    from requirements import require

    require("finetune_triviahg.py", ("sentence_transformers", "faiss"), "fine-tuning and dense retrieval")

    from inferqa.benchmark import Benchmark
    from inferqa.build import build_benchmark
    from inferqa.data import load_questions
    from inferqa.evaluate import DEFAULT_METRICS, evaluate
    from inferqa.experiments.finetune import FinetuneOptions, finetune_retriever
    from inferqa.models import minilm_path
    from inferqa.retrieve import get_retriever, question_queries

    out = args.out
    timings: dict[str, float] = {}
    questions = load_questions(args.data)
    full = out / "bench"
    if not (full / "questions.jsonl").exists():
        t = time.perf_counter()
        build_benchmark(questions, full, split=(0.7, 0.1, 0.2), seed=args.seed)
        timings["build"] = time.perf_counter() - t
    bench = Benchmark(full)
    test_ids = bench.split_qids("test")[:args.eval_questions]
    eval_dir = out / "eval-bench"
    if not (eval_dir / "questions.jsonl").exists():
        by_id = {q.id: q for q in bench.questions.values()}
        build_benchmark([by_id[q] for q in test_ids], eval_dir, split=(0.0, 0.0, 1.0), seed=args.seed)
    ev = Benchmark(eval_dir)
    print(f"benchmark: {len(bench.questions)} questions (train {len(bench.split_qids('train'))}, "
          f"test {len(bench.split_qids('test'))}); eval corpus: {len(ev.questions)} test questions")

    model_dir = out / "minilm-ft"
    opts = FinetuneOptions(split="train", positives=args.positives, negatives=args.negatives, negatives_from="bm25",
                           epochs=args.epochs, batch_size=args.batch_size, lr=args.lr,
                           max_questions=args.train_questions, seed=args.seed)
    if not (model_dir / "training.json").exists():
        t = time.perf_counter()
        finetune_retriever(bench, model_dir, model=str(minilm_path()), options=opts)
        timings["finetune"] = time.perf_counter() - t
    info = json.loads((model_dir / "training.json").read_text())

    queries = question_queries(ev, list(ev.questions))
    rows = {}
    for label, name, options in (("bm25", "bm25", {}), ("minilm (vanilla)", "dense", {"model": "minilm"}),
                                 ("minilm (fine-tuned)", "dense", {"model": str(model_dir)})):
        r = get_retriever(name, **options)
        t = time.perf_counter()
        index_dir = out / "indexes" / f"{name}-{r.options_hash()}"
        r.ensure_index(ev, index_dir)
        timings[f"index {label}"] = time.perf_counter() - t
        run = r.search(queries, 100)
        rows[label] = evaluate(run, ev.qrels, DEFAULT_METRICS)

    metrics = list(DEFAULT_METRICS)
    print(f"\ntraining: {info['questions']} questions, {info['examples']} examples "
          f"({opts.positives} pos + {opts.negatives} BM25 hard neg per question), {info['steps']} steps, "
          f"batch {opts.batch_size}, lr {opts.lr}, loss {info['first_loss']:.3f} -> {info['last_loss']:.3f}, "
          f"{info['seconds']:.0f} s")
    print("\n| retriever | " + " | ".join(metrics) + " |")
    print("|---|" + "---:|" * len(metrics))
    for label, m in rows.items():
        print(f"| {label} | " + " | ".join(f"{100 * m[k]:.2f}" for k in metrics) + " |")
    van, ft = rows["minilm (vanilla)"], rows["minilm (fine-tuned)"]
    print("| ratio fine-tuned / vanilla | " + " | ".join(
        f"{ft[k] / van[k]:.2f}" if van[k] else "–" for k in metrics) + " |")
    print("\ntimings (s): " + ", ".join(f"{k} {v:.0f}" for k, v in timings.items()))
    (out / "results.json").write_text(json.dumps({"metrics": rows, "training": info, "timings": timings}, indent=2))


if __name__ == "__main__":
    main()
