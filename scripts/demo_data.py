"""Recompute the files shipped with the demo: SmolLM2's labels and SmolLM2's answers.

    python scripts/demo_data.py labels    # build the demo benchmark, label every passage (full mode)
    python scripts/demo_data.py answers   # run the demo grid on the private cache, export its rows
    python scripts/demo_data.py all

Writes src/inferqa/data/demo/demo_labels.jsonl and demo_llm_cache.jsonl. Uses a private LLM
cache (--work, default /tmp/inferqa-demo-data), never the user's. `answers` needs the labels
in place (the demo benchmark is built with them). One llama.cpp thread by default: on a
shared machine that is the fastest (README, LLM backends).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from pathlib import Path

from inferqa.data import demo_path, load_questions
from inferqa.data.shipped_demo import DEMO_BUILD, cache_rows_path, export_labels, export_llm_cache, labels_path

REPO_DEMO = Path(__file__).resolve().parents[1] / "src" / "inferqa" / "data" / "demo"


def labels(work: Path, threads: int) -> None:
    from inferqa.construct import build_benchmark
    from inferqa.label import label_benchmark
    from inferqa.llm import load_llm

    bench = work / "bench"
    build_benchmark(load_questions(demo_path()), bench, **DEMO_BUILD)
    llm = load_llm("smollm2", cache=work / "llm.sqlite", n_threads=threads)
    t0 = time.perf_counter()
    record = label_benchmark(bench, [llm], mode="full")
    print(f"labelled {record['passages_asked']} passages in {time.perf_counter() - t0:.0f} s "
          f"({llm.stats.misses} model calls)")
    n = export_labels(bench, REPO_DEMO / labels_path().name)
    print(f"{n} rows -> {REPO_DEMO / labels_path().name}")


def answers(work: Path, threads: int) -> None:
    from inferqa.experiments.config import load_config, shipped_config
    from inferqa.experiments.runner import run_experiment

    cfg = load_config(shipped_config("demo"))
    spec = f"smollm2?n_threads={threads}"  # same cache identity as plain smollm2: the thread count shapes no answer
    cfg = dataclasses.replace(
        cfg, llm_cache=work / "llm.sqlite",
        readers=[dataclasses.replace(r, llm=spec) for r in cfg.readers],
        rerankers=[dataclasses.replace(r, options={**r.options, "llm": spec}) if "llm" in r.options else r
                   for r in cfg.rerankers])
    outcome = run_experiment(cfg, work / "run")
    print(f"{outcome.llm_calls} model calls, {outcome.results.timings.get('total', 0):.0f} s")
    n = export_llm_cache(work / "llm.sqlite", REPO_DEMO / cache_rows_path().name)
    print(f"{n} cache rows -> {REPO_DEMO / cache_rows_path().name}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("step", choices=("labels", "answers", "all"))
    ap.add_argument("--work", type=Path, default=Path("/tmp/inferqa-demo-data"))
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.step in ("labels", "all"):
        labels(args.work, args.threads)
    if args.step in ("answers", "all"):
        answers(args.work, args.threads)


if __name__ == "__main__":
    main()
