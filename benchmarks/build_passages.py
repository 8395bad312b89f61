"""Time and peak memory of `build_benchmark` at QUIT size: 7,401 questions × 325 = 2,405,325 passages.

Questions come from the real WikiHint and TriviaHG hints in ../shared/data, repeated with
their hints shuffled (seeded) and fresh ids until there are enough. Each size runs in its
own child process, so the peak RSS (resource.getrusage) is that build's alone; a flat
memory profile shows as a ratio near 1 while passages grow 10×.

    python benchmarks/build_passages.py                 # 740 and 7,401 questions
    python benchmarks/build_passages.py --sizes 7401
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from hint_data import SHARED  # noqa: E402  (benchmarks/ is the script's folder)
SOURCES = (SHARED / "data" / "wikihint" / "test.json", SHARED / "data" / "triviahg" / "validation.json")


def make_questions(n: int, seed: int = 0):
    from inferqa.data import load_questions

    base = [q for src in SOURCES for q in load_questions(src)]
    rng = random.Random(seed)
    out = []
    for i in range(n):
        q = base[i % len(base)]
        hints = list(q.hints)
        if i >= len(base):
            rng.shuffle(hints)
        out.append(replace(q, id=f"syn_{i}", hints=hints))
    return out


def child(n: int) -> None:
    from inferqa.construct import build_benchmark

    questions = make_questions(n)
    rss_loaded = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with tempfile.TemporaryDirectory(dir=os.environ.get("TMPDIR")) as tmp:
        start = time.perf_counter()
        meta = build_benchmark(questions, Path(tmp) / "bench", split=(4811, 862, 1728) if n >= 7401 else (0.7, 0.1, 0.2))
        seconds = time.perf_counter() - start
        size = sum(f.stat().st_size for f in (Path(tmp) / "bench").iterdir())
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"questions": meta["counts"]["questions"], "passages": meta["counts"]["passages"],
                      "seconds": seconds, "rss_loaded_mb": rss_loaded / 1024, "peak_rss_mb": peak / 1024,
                      "output_mb": size / 2**20}))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="740,7401", help="question counts, comma-separated")
    ap.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.child)
    missing = [str(s) for s in SOURCES if not s.exists()]
    if missing:
        sys.exit(f"shared data absent: {', '.join(missing)}")
    rows = []
    for n in (int(x) for x in args.sizes.split(",")):
        res = subprocess.run([sys.executable, __file__, "--child", str(n)], capture_output=True, text=True, check=True)
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
    head = f"{'questions':>9} {'passages':>10} {'seconds':>8} {'passages/s':>11} {'RSS loaded MB':>14} " \
           f"{'peak RSS MB':>12} {'output MB':>10}"
    print(head)
    for r in rows:
        print(f"{r['questions']:>9,} {r['passages']:>10,} {r['seconds']:>8.1f} {r['passages'] / r['seconds']:>11,.0f} "
              f"{r['rss_loaded_mb']:>14.1f} {r['peak_rss_mb']:>12.1f} {r['output_mb']:>10.1f}")
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        print(f"ratio last/first: passages {b['passages'] / a['passages']:.2f}x, seconds "
              f"{b['seconds'] / a['seconds']:.2f}x, peak RSS {b['peak_rss_mb'] / a['peak_rss_mb']:.2f}x, "
              f"build-only RSS growth {(b['peak_rss_mb'] - b['rss_loaded_mb']):.1f} MB vs "
              f"{(a['peak_rss_mb'] - a['rss_loaded_mb']):.1f} MB")


if __name__ == "__main__":
    main()
