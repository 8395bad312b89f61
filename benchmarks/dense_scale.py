"""Dense retrieval at QUIT size: MiniLM encoding speed, exact FAISS search over 2.4M × 384,
and what reusing finished embeddings saves.

Encoding all 2,405,325 passages with MiniLM on 2 CPU cores takes most of a day, so:
- encoding speed is measured on a real sample (passages drawn evenly from the synthetic
  QUIT-size benchmark, so their lengths follow its 1-to-5-hint mix), local and optionally
  through the Ray backend, and extrapolated to the full corpus;
- search speed and memory are measured on RANDOM UNIT VECTORS of the right shape
  (2,405,325 × 384 float32, written as the dense retriever's own index files), searched
  by `inferqa.retrieve.get_retriever("dense")` with the 1,728 real test questions encoded by
  MiniLM. The rankings are meaningless; the time and peak RSS are those of the real code.

Each phase runs in its own child process so its peak RSS (ru_maxrss) is its own.

    python benchmarks/dense_scale.py                   # sample 512, k = 100 and 1,000
    python benchmarks/dense_scale.py --sample 256 --ray
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_synthetic import DEFAULT_OUT, ensure_synthetic  # noqa: E402

DIM = 384
RANDOM_INDEX = "dense-random-unit"


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def sample_texts(bench_dir: Path, n: int, seed: int = 0) -> list[str]:
    """`n` passages spread evenly over the corpus (every question, every passage length)."""
    import random

    from inferqa.formats.benchmark import Benchmark
    from inferqa.construct import iter_orders
    from inferqa.records import passage_id

    bench = Benchmark(bench_dir)
    rng = random.Random(seed)
    qids, orders = list(bench.questions), list(iter_orders(5))
    pids = [passage_id(qids[i * len(qids) // n], rng.choice(orders), 5) for i in range(n)]
    return [bench.passage_text(p) for p in pids]


def phase_encode(bench_dir: Path, n: int, backend: str) -> dict:
    import numpy as np

    from inferqa.retrieve.encoding import embedding_worker, encode_texts

    texts = sample_texts(bench_dir, n)
    if backend == "local":
        encode = embedding_worker("minilm")()  # model loaded and warmed up outside the timing
        encode(texts[:16])
        start = time.perf_counter()
        vecs = np.stack([v for i in range(0, n, 64) for v in encode(texts[i:i + 64])])
    else:  # timed whole: actor start-up and model loading are part of the Ray cost
        start = time.perf_counter()
        vecs = encode_texts(texts, "minilm", backend=backend, batch_size=64, num_actors=2, progress=False)
    secs = time.perf_counter() - start
    assert vecs.shape == (n, DIM)
    return {"phase": f"encode ({backend})", "passages": n, "seconds": secs, "passages_per_s": n / secs,
            "words_per_passage": sum(len(t.split()) for t in texts) / n, "peak_rss_mb": peak_mb()}


def write_random_index(bench_dir: Path, seed: int = 0) -> Path:
    """pids.npy (the real ids) + embeddings.npy (random unit rows) + retriever.json."""
    import numpy as np

    from inferqa.formats.benchmark import Benchmark
    from inferqa.io import atomic_open, write_json
    from inferqa.formats import corpus_ids
    from inferqa.retrieve.dense import EMBEDDINGS
    from inferqa.arrays import write_npy_rows

    out = bench_dir / "indexes" / RANDOM_INDEX
    if (out / "retriever.json").exists():
        return out
    out.mkdir(parents=True, exist_ok=True)
    ids = corpus_ids(Benchmark(bench_dir))
    with atomic_open(out / "pids.npy", "wb") as fh:
        np.save(fh, ids)
    rng = np.random.default_rng(seed)
    tmp = out / f".{EMBEDDINGS}.tmp"
    header_only = np.lib.format.open_memmap(tmp, mode="w+", dtype=np.float32, shape=(len(ids), DIM))
    del header_only  # rows go in with file writes, so this process never holds the 3.7 GB
    for s in range(0, len(ids), 1 << 18):
        block = rng.standard_normal((min(1 << 18, len(ids) - s), DIM), dtype=np.float32)
        write_npy_rows(tmp, s, block / np.linalg.norm(block, axis=1, keepdims=True))
    tmp.replace(out / EMBEDDINGS)
    write_json(out / "retriever.json", {"retriever": "dense", "options": {"model": "minilm", "passage_prefix": ""},
                                        "benchmark": str(bench_dir), "passages": int(len(ids)), "dim": DIM,
                                        "note": "random unit vectors for speed/memory benchmarks"})
    return out


def phase_search(bench_dir: Path, k: int) -> dict:
    from inferqa.formats.benchmark import Benchmark
    from inferqa.retrieve import get_retriever, question_queries

    bench = Benchmark(bench_dir)
    queries = question_queries(bench, bench.split_qids("test"))
    retriever = get_retriever("dense", model="minilm", show_progress=False)
    retriever.attach(bench, bench_dir / "indexes" / RANDOM_INDEX)
    start = time.perf_counter()
    retriever.encode(list(queries.values()), "")  # loads MiniLM: timed apart from the search
    encode_s = time.perf_counter() - start
    rss_model = peak_mb()
    start = time.perf_counter()
    run = retriever.search(queries, k)
    secs = time.perf_counter() - start
    assert len(run) == len(queries) and all(len(r) == k for r in run.values())
    return {"phase": f"search k={k}", "queries": len(queries), "seconds": secs, "load_and_encode_s": encode_s,
            "rss_after_model_mb": rss_model, "peak_rss_mb": peak_mb()}


def phase_reuse(bench_dir: Path) -> dict:
    """`index()` again with embeddings.npy present: only the id check runs."""
    from inferqa.formats.benchmark import Benchmark
    from inferqa.retrieve import get_retriever

    bench = Benchmark(bench_dir)
    retriever = get_retriever("dense", model="minilm", show_progress=False)
    start = time.perf_counter()
    retriever.index(bench, bench_dir / "indexes" / RANDOM_INDEX)
    return {"phase": "index (embeddings reused)", "seconds": time.perf_counter() - start, "peak_rss_mb": peak_mb()}


def in_child(bench_dir: Path, *args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, "--bench", str(bench_dir), "--child", *args],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"child {' '.join(args)} failed:\n{out.stderr[-3000:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=str(DEFAULT_OUT), help="synthetic benchmark directory (built if absent)")
    ap.add_argument("--questions", type=int, default=None,
                    help="build a synthetic benchmark of this many questions if --bench has none (default: QUIT's 7,401)")
    ap.add_argument("--sample", type=int, default=512, help="passages encoded for the speed figure")
    ap.add_argument("--ks", type=int, nargs="+", default=[100, 1000])
    ap.add_argument("--ray", action="store_true", help="also encode the sample through the Ray backend")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    from requirements import require

    require("dense_scale.py", ("sentence_transformers", "faiss") + (("ray",) if args.ray else ()), "dense encoding and search")
    bench_dir = Path(args.bench)
    if args.child:
        phase, *rest = args.child
        result = {"encode": lambda: phase_encode(bench_dir, int(rest[0]), rest[1]),
                  "search": lambda: phase_search(bench_dir, int(rest[0])),
                  "reuse": lambda: phase_reuse(bench_dir),
                  "prepare": lambda: {"index": str(write_random_index(bench_dir))}}[phase]()
        result["load_average"] = os.getloadavg()[0]
        print(json.dumps(result))
        return 0

    ensure_synthetic(bench_dir, args.questions, progress=False)
    rows = [in_child(bench_dir, "encode", str(args.sample), "local")]
    if args.ray:
        rows.append(in_child(bench_dir, "encode", str(args.sample), "ray"))
    start = time.perf_counter()
    in_child(bench_dir, "prepare")  # a child: a parent's peak RSS is inherited by the children it forks
    write_s = time.perf_counter() - start
    rows += [in_child(bench_dir, "search", str(k)) for k in args.ks]
    rows.append(in_child(bench_dir, "reuse"))

    from inferqa.formats.benchmark import Benchmark

    from inferqa.io import iter_lines

    n = sum(1 for _ in iter_lines(bench_dir / "qrels.tsv"))
    enc = rows[0]
    full_h = n / enc["passages_per_s"] / 3600
    print(f"dense retrieval over {n:,} passages × {DIM} (search over random unit vectors, written in {write_s:.0f} s); "
          f"{len(Benchmark(bench_dir).split_qids('test')):,} test queries")
    print("| phase | seconds | rate | peak RSS MB | note (load average during the phase) |")
    print("|---|---:|---:|---:|---|")
    for r in rows:
        if r["phase"].startswith("encode"):
            print(f"| {r['phase']}, {r['passages']} real passages | {r['seconds']:.1f} | {r['passages_per_s']:.1f} psg/s | "
                  f"{r['peak_rss_mb']:.0f} | {r['words_per_passage']:.0f} words/passage; "
                  f"{n / r['passages_per_s'] / 3600:.1f} h for the corpus (load {r['load_average']:.1f}) |")
        elif r["phase"].startswith("search"):
            print(f"| {r['phase']}, {r['queries']:,} queries | {r['seconds']:.1f} | {r['queries'] / r['seconds']:.0f} q/s | "
                  f"{r['peak_rss_mb']:.0f} | + {r['load_and_encode_s']:.1f} s model load and query encoding; "
                  f"{r['rss_after_model_mb']:.0f} MB before searching (load {r['load_average']:.1f}) |")
        else:
            print(f"| {r['phase']} | {r['seconds']:.1f} | – | {r['peak_rss_mb']:.0f} | "
                  f"{full_h * 3600 / r['seconds']:,.0f}× faster than encoding again ({full_h:.1f} h) (load {r['load_average']:.1f}) |")
    if args.ray and len(rows) > 1:
        print(f"Ray/local encoding speed: {rows[1]['passages_per_s'] / enc['passages_per_s']:.2f}× "
              f"(2 actors on the same {__import__('os').cpu_count()} cores)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
