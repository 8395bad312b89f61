"""BM25 against MiniLM on the WikiHint test file: hit@1, hit@10 and MRR (the README's figures).

All 100 questions, query = the question text, QUIT labels (every passage of the question is
label 1). `--top-k 3` (default) keeps 15 passages per question (1,500 in all) so MiniLM
encodes them in about a minute on 2 cores; `--top-k 5` is the full 325 per question.

    python benchmarks/wikihint_retrieval.py [--top-k 3] [--file ../shared/data/wikihint/test.json]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

DEFAULT_FILE = Path(__file__).resolve().parents[2] / "shared" / "data" / "wikihint" / "test.json"
METRICS = ("hit@1", "hit@10", "mrr")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--file", type=Path, default=DEFAULT_FILE, help="WikiHint test.json")
    ap.add_argument("--top-k", type=int, default=3, help="hints kept per question")
    args = ap.parse_args(argv)
    from requirements import require

    require("wikihint_retrieval.py", ("sentence_transformers", "faiss", "bm25s"), "BM25 and MiniLM")
    if not args.file.exists():
        print(f"wikihint_retrieval.py: {args.file} not found (the shared WikiHint file; pass --file)")
        return 2
    from inferqa.formats.benchmark import Benchmark
    from inferqa.construct import build_benchmark
    from inferqa.data import load_questions
    from inferqa.evaluation import evaluate
    from inferqa.retrieve import get_retriever, question_queries

    with tempfile.TemporaryDirectory(prefix="wikihint-") as tmp:
        build_benchmark(load_questions(args.file), Path(tmp) / "wh", top_k=args.top_k)
        bench = Benchmark(Path(tmp) / "wh")
        queries = question_queries(bench)
        n_passages = sum(len(d) for d in bench.qrels.values())
        print(f"WikiHint {args.file.name}: {len(queries)} questions, top-k {args.top_k}, {n_passages:,} passages")
        print("\n| retriever | " + " | ".join(METRICS) + " |\n|---" * 1 + "|---" * len(METRICS) + "|")
        for name, opts in (("bm25", {"show_progress": False}), ("dense", {"model": "minilm", "batch_size": 128})):
            r = get_retriever(name, **opts)
            r.index(bench)
            res = evaluate(r.search(queries, 100), bench.qrels, list(METRICS))
            label = "BM25" if name == "bm25" else "MiniLM (dense)"
            print(f"| {label} | " + " | ".join(f"{100 * res[m]:.1f}" for m in METRICS) + " |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
