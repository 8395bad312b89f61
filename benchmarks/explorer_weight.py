"""Page weight of explorer.html for a QUIT-size test split (1,728 questions).

Runs and answers are synthetic but of the real shape: the synthetic QUIT benchmark
(`make_synthetic.py`, real hint texts, 325 passages per question), 8 ranked runs of depth
100 (as an `inferqa run` with 2 retrievers, 1 reranker and the oracle settings has), a
reader setting per run with 2 strategies × k 1/3/5, and 3 labellers' answers for every
passage a run shows. Prints the page size, the share of each part of the embedded data,
the time to write it and, where headless Chromium is installed, the time until the page
has rendered its question list.

    python benchmarks/explorer_weight.py                   # 1,728 test questions (QUIT size)
    python benchmarks/explorer_weight.py --questions 500   # a smaller synthetic benchmark
"""

from __future__ import annotations

import argparse
import json
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from make_synthetic import DEFAULT_OUT, QUIT_QUESTIONS, ensure_synthetic  # noqa: E402

from inferqa.formats.benchmark import Benchmark  # noqa: E402
from inferqa.experiments.explorer import explorer_data, render_explorer  # noqa: E402
from inferqa.io import write_jsonl  # noqa: E402
from inferqa.formats import Run  # noqa: E402

RUNS = ("bm25", "dense", "bm25 → rr", "dense → rr", "bm25 → oracle reranker", "dense → oracle reranker",
        "oracle retriever → rr", "optimal")
LABELLERS = ("gemma-3-1b", "qwen-3-4b", "llama-31-8b")


def synthetic_runs(bench: Benchmark, qids: list[str], depth: int, seed: int) -> list[tuple[str, str, Run]]:
    rng = random.Random(seed)
    others = list(bench.questions)
    own = {q: list(bench.qrels[q]) for q in qids}
    runs = []
    for name in RUNS:
        run = Run(tag=name)
        for q in qids:
            share = 1.0 if "oracle" in name or name == "optimal" else rng.random()
            ranked = []
            for r in range(depth):
                if rng.random() < share:
                    ranked.append(rng.choice(own[q]))
                else:
                    ranked.append(rng.choice(list(bench.qrels[rng.choice(others)])))
            ranked = list(dict.fromkeys(ranked))
            run[q] = [(p, float(depth - i)) for i, p in enumerate(ranked)]
        runs.append((name, "pipeline", run))
    return runs


def synthetic_answers(bench: Benchmark, runs, qids: list[str], seed: int):
    rng = random.Random(seed)
    sets = []
    for name, _, run in runs:
        rows = []
        for q in qids:
            gold = bench.questions[q].answers
            for strategy in ("union_norm", "union_freq"):
                for k in (1, 3, 5):
                    right = rng.random() < 0.3
                    pred = gold[0] if right else rng.choice(["NO ANSWER", "Paris", "the Beatles", "1969"])
                    rows.append({"qid": q, "strategy": strategy, "k": k, "pids": [p for p, _ in run[q][:k]],
                                 "prediction": pred, "raw": pred if rng.random() < 0.7 else f"I think it is {pred}.",
                                 "em": float(right)})
        sets.append((f"{name} / reader", name, rows))
    return sets


def shown_labels(bench: Benchmark, runs, qids: list[str], depth: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    rows = {}
    for _, _, run in runs:
        for q in qids:
            for pid, _ in run[q][:depth]:
                owner = pid.rsplit("_", 2)[0]
                if pid in rows or owner != q:
                    continue
                gold = bench.questions[q].answers[0]
                answers = {who: gold if rng.random() < 0.3 else "NO ANSWER" for who in LABELLERS}
                rows[pid] = {"pid": pid, "qid": q, "label": bench.qrels[q][pid], "answers": answers,
                             "correct": {w: a == gold for w, a in answers.items()}, "copied_from": None}
    return list(rows.values())


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", type=int, default=QUIT_QUESTIONS, help="synthetic benchmark size (QUIT: 7,401)")
    ap.add_argument("--bench", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--depth", type=int, default=10, help="passages per run and question in the page")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--out", type=Path, default=None, help="keep the page here")
    args = ap.parse_args()

    src = ensure_synthetic(args.bench, args.questions)
    with tempfile.TemporaryDirectory() as tmp:
        bench_dir = Path(tmp) / "bench"
        bench_dir.mkdir()
        for name in ("questions.jsonl", "qrels.tsv", "splits.json", "meta.json"):
            shutil.copy(Path(src) / name, bench_dir / name)
        bench = Benchmark(bench_dir)
        qids = bench.splits["test"]
        runs = synthetic_runs(bench, qids, 100, args.seed)
        write_jsonl(bench_dir / "labels.jsonl", shown_labels(bench, runs, qids, args.depth, args.seed))
        answers = synthetic_answers(bench, runs, qids, args.seed)
        bench = Benchmark(bench_dir)
        t0 = time.perf_counter()
        data = explorer_data(bench, runs, answers, qids=qids, depth=args.depth)
        html = render_explorer(data)
        seconds = time.perf_counter() - t0
        out = args.out or Path(tmp) / "explorer.html"
        out.write_text(html, encoding="utf-8")
        size = out.stat().st_size
        parts = {key: len(json.dumps(data[key], ensure_ascii=False, separators=(",", ":")).encode())
                 for key in ("questions", "foreign", "runs", "sets", "labels")}
        print(f"questions: {len(qids)}, runs: {len(runs)}, reader settings: {len(answers)} × 6, depth {args.depth}")
        print("| part | MB | share |\n|---|---:|---:|")
        for key, n in parts.items():
            print(f"| {key} | {n / 1e6:.2f} | {100 * n / size:.0f} % |")
        print(f"| page (explorer.html) | {size / 1e6:.2f} | 100 % |")
        print(f"built and rendered to HTML in {seconds:.1f} s")
        print(f"browser: {browser_load_seconds(out, Path(tmp))}")


def browser_load_seconds(page: Path, tmp: Path) -> str:
    chromium, driver_bin = shutil.which("chromium"), shutil.which("chromedriver")
    if not chromium or not driver_bin:
        return "skipped (no chromium/chromedriver)"
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        return "skipped (selenium not installed)"
    opts = webdriver.ChromeOptions()
    opts.binary_location = chromium
    for flag in ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                 f"--user-data-dir={tmp / 'profile'}"):
        opts.add_argument(flag)
    driver = webdriver.Chrome(service=Service(driver_bin), options=opts)
    try:
        t0 = time.perf_counter()
        driver.get(page.as_uri())
        rows = driver.execute_script("return document.querySelectorAll('#qtable tbody tr').length")
        load = time.perf_counter() - t0
        t1 = time.perf_counter()
        driver.execute_script("document.querySelector('#qtable tbody tr').click()")
        opened = driver.execute_script("return !!document.getElementById('qtitle')")
        return f"list of {rows} rows after {load:.1f} s; a question opened in {time.perf_counter() - t1:.2f} s ({opened})"
    finally:
        driver.quit()


if __name__ == "__main__":
    main()
