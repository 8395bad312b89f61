"""Train a ColBERT from the bundled MiniLM on TriviaHG and compare it with vanilla MiniLM dense.

    nice python benchmarks/train_colbert.py --out runs/colbert-triviahg

1. builds the TriviaHG validation file into a benchmark (top-5 hints, 325 passages per
   question, split 0.7/0.1/0.2, seed 13: the split of benchmarks/finetune_triviahg.py);
2. trains `inferqa.experiments.finetune.finetune_colbert` on the train split (n positives and
   n BM25 hard negatives per question, in-batch negatives, MaxSim) into OUT/model, the
   `colbert` retriever's default model folder when run from the repository root;
3. evaluates on a corpus of the first `--eval-questions` test questions (all their passages;
   label = own question): BM25, vanilla MiniLM dense, the trained ColBERT full-passage and
   clue-level, and the untrained one (MiniLM plus the orthogonal projection it starts from)
   clue-level (full-passage encoding costs ~2 min per 1,000 passages here);
4. evaluates clue-level ColBERT and BM25 on a corpus of every test question (encoding hints
   only is cheap enough for that; full-passage encoding is not, at ~60 passages/s here).

Prints the tables and writes OUT/results.json. Each stage is reused when its output exists.
The defaults are the README's run (training: 30 steps of batch 16, 24.5 min wall at load 15-20 on 2 cores).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
METRICS = ("hit@1", "hit@5", "hit@10", "hit@100", "mrr", "ndcg@10")


def subset_bench(bench, qids, out: Path, seed: int):
    from inferqa.benchmark import Benchmark
    from inferqa.build import build_benchmark

    if not (out / "questions.jsonl").exists():
        build_benchmark([bench.questions[q] for q in qids], out, split=(0.0, 0.0, 1.0), seed=seed)
    return Benchmark(out)


def evaluate_rows(bench, rows, out: Path) -> dict:
    from inferqa.evaluate import evaluate
    from inferqa.retrieve import get_retriever, question_queries

    queries = question_queries(bench, list(bench.questions))
    results = {}
    for label, name, options in rows:
        r = get_retriever(name, **options)
        index_dir = out / f"{name}-{r.options_hash()}"
        t = time.perf_counter()
        r.ensure_index(bench, index_dir)
        build = time.perf_counter() - t
        manifest = json.loads((index_dir / "retriever.json").read_text())
        t = time.perf_counter()
        run = r.search(queries, 100)
        results[label] = {**evaluate(run, bench.qrels, METRICS), "search_s": time.perf_counter() - t,
                          "index_s": manifest.get("build_seconds", build),
                          "encoded": manifest.get("texts", manifest.get("passages"))}
    return results


def print_table(title: str, results: dict, n_questions: int, n_passages: int) -> None:
    print(f"\n{title}: {n_questions} questions, {n_passages} passages (one question = {100 / n_questions:.2f} points)")
    print("| retriever | " + " | ".join(METRICS) + " | texts encoded | index s |")
    print("|---|" + "---:|" * (len(METRICS) + 2))
    for label, m in results.items():
        cells = " | ".join(f"{100 * m[k]:.2f}" for k in METRICS)
        encoded = f"{m['encoded']:,}" if label != "bm25" else "–"
        print(f"| {label} | {cells} | {encoded} | {m['index_s']:.0f} |")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", type=Path,
                    default=Path(__file__).resolve().parents[2] / "shared/data/triviahg/validation.json")
    ap.add_argument("--out", type=Path, default=Path("runs/colbert-triviahg"))
    ap.add_argument("--train-questions", type=int, default=700)
    ap.add_argument("--positives", type=int, default=2)
    ap.add_argument("--negatives", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-4)
    ap.add_argument("--max-length", type=int, default=256, help="document tokens (queries: 32)")
    ap.add_argument("--max-steps", type=int, default=30)
    ap.add_argument("--eval-questions", type=int, default=24)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()

    from inferqa.benchmark import Benchmark
    from inferqa.build import build_benchmark
    from inferqa.data import load_questions
    from inferqa.experiments.finetune import FinetuneOptions, finetune_colbert
    from inferqa.models import minilm_path
    from inferqa.retrieve.colbert_model import init_colbert

    out = args.out
    full = out / "bench"
    if not (full / "questions.jsonl").exists():
        build_benchmark(load_questions(args.data), full, split=(0.7, 0.1, 0.2), seed=args.seed)
    bench = Benchmark(full)

    model_dir = out / "model"
    opts = FinetuneOptions(split="train", positives=args.positives, negatives=args.negatives, negatives_from="bm25",
                           epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, max_length=args.max_length,
                           max_questions=args.train_questions, max_steps=args.max_steps, seed=args.seed)
    if not (model_dir / "training.json").exists():
        finetune_colbert(bench, model_dir, model=str(minilm_path()), options=opts)
    info = json.loads((model_dir / "training.json").read_text())
    untrained = out / "untrained"
    if not (untrained / "modules.json").exists():
        init_colbert(minilm_path(), untrained, document_length=args.max_length, seed=args.seed)

    test = bench.split_qids("test")
    small = subset_bench(bench, test[:args.eval_questions], out / "eval-bench", args.seed)
    everything = subset_bench(bench, test, out / "eval-bench-all-test", args.seed)
    trained, zero = {"model": str(model_dir)}, {"model": str(untrained)}
    small_rows = [("bm25", "bm25", {}), ("minilm dense (vanilla)", "dense", {"model": "minilm"}),
                  ("colbert trained, full", "colbert", trained),
                  ("colbert untrained, clue", "colbert", {**zero, "mode": "clue"}),
                  ("colbert trained, clue", "colbert", {**trained, "mode": "clue"})]
    small_results = evaluate_rows(small, small_rows, out / "indexes-eval")
    all_results = evaluate_rows(everything, [("bm25", "bm25", {}),
                                             ("colbert trained, clue", "colbert", {**trained, "mode": "clue"})],
                                out / "indexes-all-test")

    print(f"training: {info['questions']} questions, {info['examples']} examples ({opts.positives} pos + "
          f"{opts.negatives} BM25 hard neg per question), {info['steps']} steps of batch {opts.batch_size}, "
          f"lr {opts.lr}, loss {info['first_loss']:.3f} -> {info['last_loss']:.3f}, {info['seconds']:.0f} s")
    print_table("first test questions", small_results, len(small.questions), small.meta["counts"]["passages"])
    van, col = small_results["minilm dense (vanilla)"], small_results["colbert trained, full"]
    print("ratio colbert trained full / minilm dense: " + ", ".join(
        f"{k} {col[k] / van[k]:.3f}" for k in METRICS if van[k]))
    print_table("all test questions", all_results, len(everything.questions), everything.meta["counts"]["passages"])
    (out / "results.json").write_text(json.dumps({"training": info, "first_test_questions": small_results,
                                                  "all_test_questions": all_results}, indent=2))


if __name__ == "__main__":
    main()
