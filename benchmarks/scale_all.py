"""Run every stage's benchmark on the synthetic QUIT-size benchmark, one after the other,
and write benchmarks/RESULTS.md: machine, versions, date, a summary of wall time and peak
RSS per script against the memory targets, and each script's own table.

Each script runs as a child process; its peak RSS is the largest resident set of any
process it ran (os.wait4's ru_maxrss), which is what the "under 4 GB" target is about.

    python benchmarks/scale_all.py                        # everything, writes RESULTS.md
    python benchmarks/scale_all.py --only dense bm25 --out /tmp/RESULTS.md
"""

from __future__ import annotations

import argparse
import json
import importlib.metadata as md
import os
import platform
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from inferqa.tabular import MISSING  # the mark of a missing value in a table

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from make_synthetic import DEFAULT_OUT, ensure_synthetic  # noqa: E402

GB = 1024
PACKAGES = ("inferqa", "numpy", "torch", "sentence-transformers", "faiss-cpu", "bm25s", "numba", "PyStemmer",
            "llama_cpp_python", "ir-measures", "ray", "transformers")


@dataclass
class Bench:
    key: str
    script: str
    args: tuple[str, ...]
    what: str
    rss_target_mb: float | None = 4 * GB
    timeout_s: int = 900
    stage_row: str | None = None  # first cell of the table row holding the stage's own peak RSS (last column)
    stage_rss_col: int = -1


def table_cell(output: str, first_cell: str, col: int) -> float | None:
    """A number from the markdown row of `output` whose first cell is `first_cell`."""
    for line in output.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if cells and cells[0].startswith(first_cell):
            try:
                return float(cells[col].replace(",", ""))
            except (ValueError, IndexError):
                return None
    return None


def benches(bench_dir: Path) -> list[Bench]:
    b = str(bench_dir)
    return [
        Bench("build", "build_passages.py", ("--sizes", "740,7401"), "build: 2.4M passages written"),
        Bench("bm25", "bm25_scale.py", ("--bench", b), "BM25 dedup vs no-dedup, k = 100 and 1,000",
              rss_target_mb=1.5 * GB, stage_row="dedup"),
        Bench("dense", "dense_scale.py", ("--bench", b, "--sample", "256", "--ks", "1000"),
              "dense: MiniLM passages/s, flat search 2.4M × 384", stage_row="search k=1000", stage_rss_col=3),
        Bench("eval", "eval_speed.py", (), "evaluation: inferqa vs ir_measures, 1,728 × 1,000"),
        Bench("reader", "reader_throughput.py", ("--n", "16"), "reader: prompts/s with and without prefix reuse"),
        Bench("rerank", "rerank_throughput.py", (), "rerankers: passages/s"),
        Bench("label", "scale_all.py", ("--probe-label", "150,600"),
              "labelling bookkeeping: memory per passage (instant fake LLM)", rss_target_mb=None),
    ]


def probe_label(sizes: list[int]) -> None:
    """label_benchmark's own memory, without model cost: an LLM that answers instantly, on
    synthetic benchmarks of growing size (each in a child); the growth per passage,
    extrapolated linearly, is what the 2.4M-passage labelling holds besides its models."""
    import tempfile

    if len(sizes) == 1:
        from inferqa.label.labelling import label_benchmark
        from inferqa.llm.base import LLM, GenerationParams
        from make_synthetic import make_synthetic

        class Instant(LLM):
            backend, model, mode = "fake", "instant", "chat"

            def complete(self, prompts, params=GenerationParams()):
                return ["Paris"] * len(prompts)

            def chat(self, conversations, params=GenerationParams()):
                return ["Paris"] * len(conversations)

            def logprob(self, prompt, continuation):
                return 0.0

        with tempfile.TemporaryDirectory() as tmp:
            make_synthetic(Path(tmp) / "b", sizes[0], progress=False)
            base = resource_mb()
            start = time.perf_counter()
            rec = label_benchmark(Path(tmp) / "b", [Instant()], "full", progress=False)
            print(json.dumps({"passages": rec["passages_labelled"], "seconds": time.perf_counter() - start,
                              "base_mb": base, "peak_mb": resource_mb()}))
        return
    rows = []
    for n in sizes:
        out = subprocess.run([sys.executable, __file__, "--probe-label", str(n)], capture_output=True, text=True,
                             check=True)
        rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
    print("| passages | seconds | passages/s | RSS before MB | peak RSS MB |")
    print("|---:|---:|---:|---:|---:|")
    for r in rows:
        print(f"| {r['passages']:,} | {r['seconds']:.1f} | {r['passages'] / r['seconds']:,.0f} | {r['base_mb']:.0f} | "
              f"{r['peak_mb']:.0f} |")
    a, b = rows[0], rows[-1]
    per = (b["peak_mb"] - a["peak_mb"]) / (b["passages"] - a["passages"])
    print(f"\ngrowth {per * 1024:.2f} KB per passage; extrapolated to 2,405,325 passages: "
          f"{a['peak_mb'] + per * (2_405_325 - a['passages']):,.0f} MB peak "
          f"(src/inferqa/label/labelling.py keeps every passage's answers, verdicts and row in memory)")


def resource_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def machine() -> dict[str, str]:
    mem_kb = next((int(line.split()[1]) for line in open("/proc/meminfo") if line.startswith("MemTotal")), 0)
    cpu = next((line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name")),
               platform.processor() or "unknown")
    return {"cpus (nproc)": str(os.cpu_count()), "RAM": f"{mem_kb / 2**20:.1f} GiB", "CPU": cpu,
            "OS": f"{platform.system()} {platform.release()}", "Python": platform.python_version(),
            "load average when written": f"{os.getloadavg()[0]:.1f}"}


def versions() -> dict[str, str]:
    out = {}
    for name in PACKAGES:
        try:
            out[name] = md.version(name)
        except md.PackageNotFoundError:
            out[name] = "not installed"
    return out


def measured(b: Bench) -> dict:
    """Run `b` in a runner child that reports the script's own peak RSS via os.wait4."""
    code = ("import json,os,subprocess,sys\n"
            "p=subprocess.Popen(sys.argv[1:]);_,st,ru=os.wait4(p.pid,0)\n"
            "print(json.dumps({'rc':os.waitstatus_to_exitcode(st),'rss_kb':ru.ru_maxrss}),file=sys.stderr)")
    path = HERE / b.script
    if not path.exists():
        return {"status": "missing", "seconds": 0.0, "rss_mb": 0.0, "output": f"{b.script} does not exist yet"}
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", code, sys.executable, str(path), *b.args], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=HERE.parent)
    try:
        stdout, stderr = proc.communicate(timeout=b.timeout_s)
    except subprocess.TimeoutExpired:
        proc.kill()
        stdout, stderr = proc.communicate()
        return {"status": f"timed out after {b.timeout_s} s", "seconds": time.perf_counter() - start,
                "rss_mb": 0.0, "output": stdout + "\n" + stderr[-2000:]}
    seconds = time.perf_counter() - start
    last = stderr.strip().splitlines()[-1] if stderr.strip() else "{}"
    try:
        info = json.loads(last)
    except json.JSONDecodeError:
        info = {"rc": proc.returncode, "rss_kb": 0}
    ok = info.get("rc") == 0
    return {"status": "ok" if ok else f"exit {info.get('rc')}", "seconds": seconds,
            "rss_mb": info.get("rss_kb", 0) / 1024, "output": stdout if ok else stdout + "\n" + stderr[-3000:]}


def stage_rss(b: Bench, r: dict) -> float | None:
    """The stage's own peak (not its peers' in the same script), else the script's."""
    if r["status"] != "ok":
        return None
    if b.stage_row:
        return table_cell(r["output"], b.stage_row, b.stage_rss_col)
    return r["rss_mb"]


def verdict(b: Bench, r: dict) -> str:
    rss = stage_rss(b, r)
    if rss is None or b.rss_target_mb is None:
        return MISSING
    return "within target" if rss <= b.rss_target_mb else "OVER target"


def render(results: list[tuple[Bench, dict]], syn: dict, total_s: float) -> str:
    lines = ["# Benchmark results", "",
             f"Written by `python benchmarks/scale_all.py` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC; "
             f"the scripts ran {total_s / 60:.1f} minutes in total. All figures are absolute measurements on this machine; "
             "ratios compare rows of the same table.", "", "## Machine", "", "| | |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in machine().items()]
    lines += ["", "## Versions", "", "| package | version |", "|---|---|"]
    lines += [f"| {k} | {v} |" for k, v in versions().items()]
    lines += ["", "## Synthetic QUIT-size benchmark", "",
              f"`benchmarks/make_synthetic.py`: {syn['counts']['questions']:,} questions × 325 = "
              f"{syn['counts']['passages']:,} passages from real WikiHint/TriviaHG hints, splits "
              + " / ".join(f"{k} {v:,}" for k, v in syn["splits"].items())
              + f", synthetic labels (label 2: {int(syn['labels'].get('2', 0)):,}).", "",
              "## Summary", "",
              "Script peak: the largest process the script ran, peers included (bm25s next to our BM25). "
              "Stage peak: the stage's own row in the script's table where it has peers or phases.", "",
              "| stage | script | status | wall s | load avg | script peak RSS MB | stage peak RSS MB | target MB | memory |",
              "|---|---|---|---:|---:|---:|---:|---:|---|"]
    for b, r in results:
        target = f"{b.rss_target_mb:,.0f}" if b.rss_target_mb else MISSING
        own = stage_rss(b, r)
        load = f"{r['load']:.1f}" if "load" in r else "?"
        lines.append(f"| {b.what} | `{b.script}` | {r['status']} | {r['seconds']:.0f} | {load} | {r['rss_mb']:,.0f} | "
                     f"{MISSING if own is None else f'{own:,.0f}'} | {target} | {verdict(b, r)} |")
    for b, r in results:
        lines += ["", f"## {b.what}", "", f"`python benchmarks/{b.script} {' '.join(b.args)}`".replace(" `", "`")
                  + f" (run {r.get('when', '?')})", ""]
        out = r["output"].strip() or "(no output)"
        lines += [out] if "|---" in out else ["```", out, "```"]
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=str(DEFAULT_OUT), help="synthetic benchmark directory (built if absent)")
    ap.add_argument("--questions", type=int, default=None,
                    help="build a synthetic benchmark of this many questions if --bench has none (default: QUIT's 7,401)")
    ap.add_argument("--only", nargs="*", help="keys to run: build bm25 dense eval reader rerank label "
                    "(--only with no key re-renders the stored results)")
    ap.add_argument("--out", default=str(HERE / "RESULTS.md"))
    ap.add_argument("--probe-label", help=argparse.SUPPRESS)
    ap.add_argument("--store", default=str(HERE.parent / "runs" / "scale_all.json"),
                    help="raw results; with --only, the other stages' latest results are taken from here")
    args = ap.parse_args(argv)
    if args.probe_label:
        probe_label([int(x) for x in args.probe_label.split(",")])
        return 0
    from inferqa.io import atomic_open, read_json

    bench_dir = ensure_synthetic(args.bench, args.questions)
    syn = read_json(bench_dir / "meta.json")
    store = Path(args.store)
    stored = read_json(store) if args.only is not None and store.exists() else {}
    results = []
    for b in benches(bench_dir):
        if args.only is not None and b.key not in args.only:
            if b.key in stored:
                results.append((b, stored[b.key]))
            continue
        print(f"running {b.script} {' '.join(b.args)} ...", file=sys.stderr, flush=True)
        load = os.getloadavg()[0]
        r = measured(b)
        r["when"] = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"
        r["load"] = max(load, os.getloadavg()[0])
        print(f"  {r['status']}: {r['seconds']:.0f} s, peak RSS {r['rss_mb']:,.0f} MB", file=sys.stderr, flush=True)
        results.append((b, r))
    with atomic_open(store) as fh:
        json.dump({b.key: r for b, r in results}, fh, indent=1)
    text = render(results, syn, sum(r["seconds"] for _, r in results))
    with atomic_open(args.out) as fh:
        fh.write(text)
    print(text)
    return 0 if all(r["status"] in ("ok", "missing") for _, r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
