"""Fine-tune on TriviaHG (validation file, 1,000 questions) and compare with vanilla MiniLM.

    python benchmarks/finetune_triviahg.py --kind retriever --out runs/ft-triviahg
    nice python benchmarks/finetune_triviahg.py --kind colbert --out runs/colbert-triviahg

Both kinds:
1. build the file into a benchmark (top-5 hints, 325 passages per question, split 0.7/0.1/0.2,
   seed 13);
2. train on the train split (n positives + n BM25 hard negatives per question, in-batch
   negatives) with `inferqa.experiments.finetune`;
3. evaluate on a corpus made of the first `--eval-questions` test questions (all their
   passages; label = own question, so the metrics measure finding the question's own
   passages among other questions'), one table.

`--kind retriever` trains the bundled MiniLM bi-encoder into OUT/minilm-ft and compares BM25,
vanilla MiniLM and the fine-tuned model.

`--kind colbert` trains a ColBERT from MiniLM (MaxSim) into `--model-dir`, by default the
`colbert` retriever's default model folder ($INFERQA_CACHE/models/colbert-triviahg). It
compares BM25, vanilla MiniLM dense, the trained ColBERT full-passage and clue-level, and the
untrained one (MiniLM plus the orthogonal projection it starts from) clue-level (full-passage
encoding costs ~2 min per 1,000 passages here); then clue-level ColBERT and BM25 on a corpus of
every test question (encoding hints only is cheap enough for that). The defaults are the
docs' run (training: 30 steps of batch 16, 24.5 min wall at load 15-20 on 2 cores).

Prints the tables and writes OUT/results.json. Each stage is reused when its output exists;
indexes live in each benchmark's indexes/ folder (the one scheme of `inferqa index`).
"""

from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

from inferqa.tabular import MISSING  # the mark of a missing value in a table

os.environ.setdefault("HF_HUB_OFFLINE", "1")

# Per kind: the defaults of the runs the docs report.
DEFAULTS = {
    "retriever": {"train_questions": 400, "batch_size": 32, "lr": 5e-5, "max_length": 128, "max_steps": None,
                  "eval_questions": 80},
    "colbert": {"train_questions": 700, "batch_size": 16, "lr": 1e-4, "max_length": 256, "max_steps": 30,
                "eval_questions": 24},
}
COLBERT_METRICS = ("hit@1", "hit@5", "hit@10", "hit@100", "mrr", "ndcg@10")


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--kind", choices=sorted(DEFAULTS), required=True)
    ap.add_argument("--data", type=Path,
                    default=Path(__file__).resolve().parents[2] / "shared/data/triviahg/validation.json")
    ap.add_argument("--out", type=Path, help="default: runs/ft-triviahg (retriever), runs/colbert-triviahg (colbert)")
    ap.add_argument("--model-dir", type=Path, help="where the trained model goes (default: OUT/minilm-ft; "
                                                    "colbert: the colbert retriever's default folder)")
    ap.add_argument("--train-questions", type=int)
    ap.add_argument("--positives", type=int, default=2)
    ap.add_argument("--negatives", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int)
    ap.add_argument("--lr", type=float)
    ap.add_argument("--max-length", type=int, help="document tokens (colbert queries: 32)")
    ap.add_argument("--max-steps", type=int)
    ap.add_argument("--eval-questions", type=int)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()
    for key, value in DEFAULTS[args.kind].items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    if args.out is None:
        args.out = Path("runs/ft-triviahg" if args.kind == "retriever" else "runs/colbert-triviahg")
    if args.model_dir is None:
        from inferqa.models import colbert_path

        args.model_dir = args.out / "minilm-ft" if args.kind == "retriever" else colbert_path()
    return args


def subset_bench(bench, qids, out: Path, seed: int):
    """A benchmark of `qids` only (all their passages, all test)."""
    from inferqa.formats.benchmark import Benchmark
    from inferqa.construct import build_benchmark

    if not (out / "questions.jsonl").exists():
        build_benchmark([bench.questions[q] for q in qids], out, split=(0.0, 0.0, 1.0), seed=seed)
    return Benchmark(out)


def evaluate_rows(bench, rows, metrics) -> tuple[dict, dict]:
    """Metrics per row label, and the seconds each index took (built or reused)."""
    from inferqa.evaluation import evaluate
    from inferqa.io import read_json
    from inferqa.retrieve import get_retriever, question_queries

    queries = question_queries(bench, list(bench.questions))
    results, timings = {}, {}
    for label, name, options in rows:
        r = get_retriever(name, **options)
        t = time.perf_counter()
        r.ensure_index(bench)
        timings[f"index {label}"] = time.perf_counter() - t
        manifest = read_json(r.index_dir / "retriever.json")
        t = time.perf_counter()
        run = r.search(queries, 100)
        results[label] = {**evaluate(run, bench.qrels, metrics), "search_s": time.perf_counter() - t,
                          "index_s": manifest.get("build_seconds", timings[f"index {label}"]),
                          "encoded": manifest.get("texts", manifest.get("passages"))}
    return results, timings


def print_table(title: str, results: dict, metrics, n_questions: int, n_passages: int) -> None:
    print(f"\n{title}: {n_questions} questions, {n_passages} passages "
          f"(one question = {100 / n_questions:.2f} points)")
    print("| retriever | " + " | ".join(metrics) + " | texts encoded | index s |")
    print("|---|" + "---:|" * (len(metrics) + 2))
    for label, m in results.items():
        encoded = f"{m['encoded']:,}" if label != "bm25" and m["encoded"] is not None else MISSING
        print(f"| {label} | " + " | ".join(f"{100 * m[k]:.2f}" for k in metrics) + f" | {encoded} | "
              f"{m['index_s']:.0f} |")


def print_ratio(label: str, ours: dict, base: dict, metrics) -> None:
    print(f"ratio {label}: " + ", ".join(f"{k} {ours[k] / base[k]:.3f}" if base[k] else f"{k} –" for k in metrics))


def main() -> None:
    args = parse_args()
    from requirements import require

    require("finetune_triviahg.py", ("sentence_transformers", "faiss"), "fine-tuning and dense retrieval")

    from inferqa.formats.benchmark import Benchmark
    from inferqa.construct import build_benchmark
    from inferqa.data import load_questions
    from inferqa.evaluation import DEFAULT_METRICS
    from inferqa.experiments.finetune import FinetuneOptions, finetune_colbert, finetune_retriever
    from inferqa.models import minilm_path

    out = args.out
    timings: dict[str, float] = {}
    full = out / "bench"
    if not (full / "questions.jsonl").exists():
        t = time.perf_counter()
        build_benchmark(load_questions(args.data), full, split=(0.7, 0.1, 0.2), seed=args.seed)
        timings["build"] = time.perf_counter() - t
    bench = Benchmark(full)
    test = bench.split_qids("test")
    ev = subset_bench(bench, test[:args.eval_questions], out / "eval-bench", args.seed)
    print(f"benchmark: {len(bench.questions)} questions (train {len(bench.split_qids('train'))}, "
          f"test {len(test)}); eval corpus: {len(ev.questions)} test questions")

    opts = FinetuneOptions(split="train", positives=args.positives, negatives=args.negatives, negatives_from="bm25",
                           epochs=args.epochs, batch_size=args.batch_size, lr=args.lr, max_length=args.max_length,
                           max_questions=args.train_questions, max_steps=args.max_steps, seed=args.seed)
    model_dir = args.model_dir
    if not (model_dir / "training.json").exists():
        train = finetune_retriever if args.kind == "retriever" else finetune_colbert
        t = time.perf_counter()
        train(bench, model_dir, model=str(minilm_path()), options=opts)
        timings["finetune"] = time.perf_counter() - t
    from inferqa.io import read_json

    info = read_json(model_dir / "training.json")
    print(f"training: {info['questions']} questions, {info['examples']} examples ({opts.positives} pos + "
          f"{opts.negatives} BM25 hard neg per question), {info['steps']} steps of batch {opts.batch_size}, "
          f"lr {opts.lr}, loss {info['first_loss']:.3f} -> {info['last_loss']:.3f}, {info['seconds']:.0f} s; "
          f"model: {model_dir}")

    if args.kind == "retriever":
        metrics = list(DEFAULT_METRICS)
        rows = [("bm25", "bm25", {}), ("minilm (vanilla)", "dense", {"model": "minilm"}),
                ("minilm (fine-tuned)", "dense", {"model": str(model_dir)})]
        results, t = evaluate_rows(ev, rows, metrics)
        timings.update(t)
        print_table("first test questions", results, metrics, len(ev.questions), ev.meta["counts"]["passages"])
        print_ratio("fine-tuned / vanilla", results["minilm (fine-tuned)"], results["minilm (vanilla)"], metrics)
        payload = {"metrics": results, "training": info, "timings": timings}
    else:
        from inferqa.retrieve.colbert_model import init_colbert

        metrics = list(COLBERT_METRICS)
        untrained = out / "untrained"
        if not (untrained / "modules.json").exists():
            init_colbert(minilm_path(), untrained, document_length=args.max_length, seed=args.seed)
        trained, zero = {"model": str(model_dir)}, {"model": str(untrained)}
        vanilla = ("minilm dense (vanilla)", "dense", {"model": "minilm"})
        rows = [("bm25", "bm25", {}), vanilla, ("colbert trained, full", "colbert", trained),
                ("colbert untrained, clue", "colbert", {**zero, "mode": "clue"}),
                ("colbert trained, clue", "colbert", {**trained, "mode": "clue"})]
        results, t = evaluate_rows(ev, rows, metrics)
        timings.update(t)
        everything = subset_bench(bench, test, out / "eval-bench-all-test", args.seed)
        all_results, t = evaluate_rows(everything, [rows[0], rows[-1]], metrics)
        timings.update({f"{k} (all test)": v for k, v in t.items()})
        print_table("first test questions", results, metrics, len(ev.questions), ev.meta["counts"]["passages"])
        print_ratio("colbert trained full / minilm dense", results["colbert trained, full"], results[vanilla[0]],
                    metrics)
        print_table("all test questions", all_results, metrics, len(everything.questions),
                    everything.meta["counts"]["passages"])
        payload = {"training": info, "first_test_questions": results, "all_test_questions": all_results,
                   "timings": timings}
    print("\ntimings (s): " + ", ".join(f"{k} {v:.0f}" for k, v in timings.items()))
    (out / "results.json").write_text(json.dumps(payload, indent=2))


if __name__ == "__main__":
    main()
