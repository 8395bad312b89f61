"""Inferential retrieval at clue cost against full-passage dense retrieval, one table per data set.

Data (WikiHint test and TriviaHG validation as distributed by their authors, never copied
into the repo), each built as a QUIT-style benchmark (top 5 hints, drop-hint leakage filter,
325 passages per question), queried with all its questions, top 1,000:

- evaluation: WikiHint test, all 100 questions (32,500 passages);
- training: TriviaHG validation split 0.7 / 0.1 / 0.2 (seed 13). The clue encoder is trained
  (`inferqa.experiments.finetune.finetune_clue`, i.e. `inferqa finetune clue`) on a benchmark
  of the train questions only, so no hint of a dev or test question is seen, not even as a
  negative; the diversification margin is tuned on the first 100 dev questions; the held-out
  table is on the first 100 test questions.

Rows: full-passage dense (bundled MiniLM), clue (untrained MiniLM, mean of hint embeddings),
clue + family (one passage per linked hint family in the head), adaptive (family
diversification only where the top family's lead over the next is below a margin tuned on
TriviaHG dev, never on the table's data), dev share (the share of TriviaHG dev queries that
margin diversifies, applied as `diversify(..., share=)` to the table's own run: its least-led
queries), the learned clue scorer, and learned + adaptive (margin, dev share). The margin
maximises, on TriviaHG dev, the smallest gain over dense among the four metrics (ties: the
largest mean gain). The ahead-tuned rule (margin, and the dev share it diversifies) was set
after WikiHint's figures were seen: its rows are shown, marked post hoc, and never picked as
the best. nDCG@10 is `ndcg_exp@10` (QUIT's exponential gain). p: paired
randomisation test against dense per metric, Holm-corrected over the rows (`compare`).

    nice python benchmarks/inferential_retrieval.py            # → runs/inferential/
    nice python benchmarks/inferential_retrieval.py --scale 100000 400000

Each stage is reused when its output exists (benchmarks, indexes, the trained model, in
--out). `--scale N ...` indexes synthetic QUIT-shaped benchmarks (`make_synthetic.py`) of
about N passages with the chosen method and reports index seconds and peak memory against
distinct hints. The last line is the `inferential:` summary.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

from inferqa.tabular import MISSING  # the mark of a missing value in a table

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hint_data import REPO, WIKIHINT, TRIVIAHG  # noqa: E402  (benchmarks/ is the script's folder)
OUT = REPO / "runs" / "inferential"
K = 1000
METRICS = ("hit@1", "hit@10", "mrr", "ndcg_exp@10")
LABELS = ("Hit@1", "Hit@10", "MRR", "nDCG@10")
DENSE, CLUE, FAMILY, ADAPTIVE, SHARE, LEARNED, LEARNED_ADAPTIVE, LEARNED_SHARE = (
    "full-passage dense", "clue", "clue + family", "clue + adaptive, maximin", "clue + adaptive, dev share",
    "learned clue", "learned clue + adaptive, maximin", "learned clue + adaptive, dev share")
LEARNED_AHEAD, LEARNED_AHEAD_SHARE = ("learned clue + adaptive, ahead-tuned (post hoc)",
                                      "learned clue + adaptive, ahead-tuned dev share (post hoc)")
# The ahead-tuned rule was chosen after WikiHint's figures were seen: shown, never the best.
POST_HOC = (LEARNED_AHEAD, LEARNED_AHEAD_SHARE)
SHARES = [i / 20 for i in range(21)]  # the tuning grid: margins diversifying these shares of the dev queries


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--model-dir", type=Path, help="the learned clue encoder (default OUT/models/clue-triviahg; "
                                                   "trained there when absent)")
    ap.add_argument("--compose", default="mean-embedding", help="composition of the learned scorer")
    ap.add_argument("--positives", type=int, default=5)
    ap.add_argument("--negatives", type=int, default=5)
    ap.add_argument("--negatives-from", default="clue")
    ap.add_argument("--epochs", type=int, default=1)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=5e-5)
    ap.add_argument("--max-length", type=int, default=64)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--eval-questions", type=int, default=100, help="TriviaHG dev / test questions used")
    ap.add_argument("--scale", type=int, nargs="*", help="synthetic benchmark sizes (passages) to index")
    ap.add_argument("--questions", type=int, help="the first N questions of each hint file (default: all): a quick "
                                                  "check of the pipeline, not the protocol")
    ap.add_argument("--max-steps", type=int, help="stop training after N steps (default: one epoch)")
    args = ap.parse_args()
    args.model_dir = args.model_dir or args.out / "models" / "clue-triviahg"
    return args


# -- data -------------------------------------------------------------------------------------
def built(questions, out: Path, **options):
    from inferqa.construct import build_benchmark
    from inferqa.formats.benchmark import Benchmark

    if not (out / "meta.json").exists():
        print(f"building {out.name}: {len(questions)} questions", flush=True)
        build_benchmark(questions, out, top_k=5, seed=13, **options)
    return Benchmark(out)


def hint_file(path: Path, questions: int | None = None) -> list:
    """The questions of a hint file (the first `questions`, where given)."""
    from inferqa.data import load_questions

    if not path.exists():
        sys.exit(f"{path} is absent (set INFERQA_SHARED to the folder holding data/)")
    return load_questions(path)[:questions]


def sized(name: str, questions: int | None) -> str:
    """A benchmark folder's name; with `--questions N` its own, so no cut reuses the full one's."""
    return name if questions is None else f"{name}-first{questions}"


def benchmarks(args) -> dict:
    out, n_first = args.out, args.questions
    wikihint = hint_file(WIKIHINT, n_first)
    trivia = built(hint_file(TRIVIAHG, n_first), out / sized("triviahg", n_first), split=(0.7, 0.1, 0.2))

    def part(split: str, n: int | None, name: str):
        qids = trivia.split_qids(split)[:n]
        return built([trivia.questions[q] for q in qids], out / sized(name, n_first),
                     split=(0.0, 0.0, 1.0) if n else (1.0, 0, 0))

    n = args.eval_questions
    return {"wikihint": built(wikihint, out / sized("wikihint-100", n_first)),
            "train": part("train", None, "triviahg-train"),
            "dev": part("dev", n, f"triviahg-dev-{n}"), "test": part("test", n, f"triviahg-test-{n}")}


def learned_model(args, train) -> dict:
    from inferqa.experiments.finetune import FinetuneOptions, finetune_clue
    from inferqa.io import read_json

    if not (args.model_dir / "training.json").exists():
        opts = FinetuneOptions(split="train", positives=args.positives, negatives=args.negatives,
                               negatives_from=args.negatives_from, epochs=args.epochs, batch_size=args.batch_size,
                               lr=args.lr, max_length=args.max_length, max_steps=args.max_steps, seed=args.seed)
        print(f"training the clue encoder on {len(train.questions)} TriviaHG train questions", flush=True)
        finetune_clue(train, args.model_dir, model="minilm", options=opts)
    return read_json(args.model_dir / "training.json")


# -- runs ---------------------------------------------------------------------------------------
def searched(bench, name: str, **options) -> tuple:
    """(run, facts) of a retriever on all the benchmark's questions; the index reused when built."""
    from inferqa.io import read_json
    from inferqa.retrieve import get_retriever, question_queries

    r = get_retriever(name, show_progress=False, **options)
    r.attach(bench)
    if not r.is_indexed():
        print(f"  indexing {name} {options} on {bench.path.name}", flush=True)
        r.index(bench)
    m = read_json(r.index_dir / "retriever.json")
    t0 = time.perf_counter()
    run = r.search(question_queries(bench, bench.split_qids("all")), K)
    texts = m.get("texts_encoded", m.get("passages"))
    return run, {"texts": int(texts), "index_s": float(m["build_seconds"]), "search_s": time.perf_counter() - t0}


def scores(run, bench) -> dict:
    from inferqa.evaluate import evaluate

    return {k: 100 * float(v) for k, v in evaluate(run, bench.qrels, list(METRICS)).items()}


def adaptive(run, bench, margin: float | None, share: float | None = None):
    """Family diversification of the queries whose top family leads by less than `margin`
    (None: every query; 0: none), or of the `share` of them whose top family leads by least."""
    from inferqa.retrieve.diversify import diversify

    return diversify(run, bench, 1, by="linked", margin=margin, share=share)


def diversified(run, bench, margin: float | None, share: float | None = None) -> int:
    from inferqa.retrieve.diversify import gated, query_margins

    return len(gated(query_margins(run, bench, "linked"), margin, share))


def tune(run, dense, bench, ahead: bool = False) -> tuple[float | None, dict]:
    """`inferqa.tuning.tune_margin`'s grid (the margins at 0, 5, ..., 100 % of the tuning
    questions) scored on `bench`; chosen here: the margin whose smallest gain over dense
    across METRICS is largest (ties: the larger mean gain, then the grid's order). `ahead`:
    the largest mean gain among the margins with every gain >= 0 (maximin where none is)."""
    from inferqa.tuning import tune_margin

    tuning = tune_margin(run, bench, split="all", shares=SHARES, per_group=1, by="linked", metric="mrr",
                         measures=list(METRICS))
    base = scores(dense, bench)

    def gains(row):
        return [100 * row.scores[m] - base[m] for m in METRICS]

    rows = [r for r in tuning.rows if min(gains(r)) >= 0] if ahead else []
    if rows:
        best = max(rows, key=lambda r: round(sum(gains(r)), 6))
    else:
        best = max(tuning.rows, key=lambda r: (round(min(gains(r)), 6), round(sum(gains(r)), 6)))
    return best.margin, {"share": best.share, "min_gain": min(gains(best)), "mean_gain": sum(gains(best)) / 4,
                         "scores": {m: 100 * v for m, v in best.scores.items()},
                         "grid": [{"margin": r.margin, "share": r.share, "gains": gains(r)} for r in tuning.rows]}


def table_rows(bench, model_dir: Path, compose: str, tuned: dict, shares: dict) -> tuple[list[dict], dict]:
    dense, f_dense = searched(bench, "dense", model="minilm", chunk_size=512)
    clue, f_clue = searched(bench, "clue", model="minilm")
    learned, f_learned = searched(bench, "clue", model=str(model_dir), compose=compose)
    runs = {DENSE: (dense, f_dense), CLUE: (clue, f_clue), FAMILY: (adaptive(clue, bench, None), f_clue),
            ADAPTIVE: (adaptive(clue, bench, tuned["clue"]), f_clue),
            SHARE: (adaptive(clue, bench, None, shares["clue"]), f_clue), LEARNED: (learned, f_learned),
            LEARNED_ADAPTIVE: (adaptive(learned, bench, tuned["learned"]), f_learned),
            LEARNED_SHARE: (adaptive(learned, bench, None, shares["learned"]), f_learned),
            LEARNED_AHEAD: (adaptive(learned, bench, tuned["ahead"]), f_learned),
            LEARNED_AHEAD_SHARE: (adaptive(learned, bench, None, shares["ahead"]), f_learned)}
    from inferqa.evaluate.comparison import compare

    cmp = compare({name: run for name, (run, _) in runs.items()}, bench, list(METRICS))
    gated = {ADAPTIVE: (clue, tuned["clue"], None), LEARNED_ADAPTIVE: (learned, tuned["learned"], None),
             SHARE: (clue, None, shares["clue"]), LEARNED_SHARE: (learned, None, shares["learned"]),
             LEARNED_AHEAD: (learned, tuned["ahead"], None), LEARNED_AHEAD_SHARE: (learned, None, shares["ahead"])}
    rows = []
    for row in cmp.rows:
        facts = runs[row["run"]][1]
        share = None
        if row["run"] in gated:  # how many queries the gate diversified
            source, margin, dev_share = gated[row["run"]]
            share = diversified(source, bench, margin, dev_share)
        rows.append({"method": row["run"], **{m: 100 * row["metrics"][m]["mean"] for m in METRICS},
                     "p": {m: row["metrics"][m].get("p_corrected") for m in METRICS},
                     "p_uncorrected": {m: row["metrics"][m].get("p") for m in METRICS},
                     "texts": facts["texts"], "index_s": facts["index_s"], "diversified": share})
    return rows, {"dense": dense, "clue": clue, "learned": learned}


def fmt_margin(m: float | None) -> str:
    return "every query" if m is None else f"{m:.4f}"


def fmt_p(p) -> str:
    return MISSING if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")


def fmt_table(title: str, rows: list[dict]) -> str:
    lines = [f"**{title}**", "",
             "| method | Hit@1 | Hit@10 | MRR | nDCG@10 | texts encoded | index s | p vs dense (H@1 / H@10 / MRR / nDCG) |",
             "|---|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        name = r["method"] + (f" ({r['diversified']} q diversified)" if r["diversified"] is not None else "")
        ps = " / ".join(fmt_p(r["p"][m]) for m in METRICS) if r["method"] != DENSE else MISSING
        lines.append(f"| {name} | " + " | ".join(f"{r[m]:.1f}" for m in METRICS)
                     + f" | {r['texts']:,} | {r['index_s']:,.1f} | {ps} |")
    return "\n".join(lines)


def best_row(rows: list[dict]) -> dict:
    """Among the rows whose rule was fixed before any test figure was seen (not POST_HOC): the
    dominating row with the largest mean gain over dense (else the largest smallest gain)."""
    dense = rows[0]
    fair = [r for r in rows[1:] if r["method"] not in POST_HOC]
    gains = {r["method"]: [r[m] - dense[m] for m in METRICS] for r in fair}
    dominating = [r for r in fair if min(gains[r["method"]]) >= -1e-9]
    if dominating:
        return max(dominating, key=lambda r: sum(gains[r["method"]]))
    return max(fair, key=lambda r: (min(gains[r["method"]]), sum(gains[r["method"]])))


def best_p(rows: list[dict]) -> str:
    best = best_row(rows)
    return (f"{best['method']} vs dense, p uncorrected (H@1 / H@10 / MRR / nDCG): "
            + " / ".join(fmt_p(best["p_uncorrected"][m]) for m in METRICS))


def summary(rows: list[dict], head: str = "inferential") -> str:
    """The `inferential:` line: `best_row` against dense; dominates: all four >= dense."""
    dense, best = rows[0], best_row(rows)
    dominating = all(best[m] >= dense[m] - 1e-9 for m in METRICS)
    parts = [f"{label} {best[m]:.1f} vs {dense[m]:.1f}" for label, m in zip(LABELS, METRICS)]
    ratio = dense["texts"] / best["texts"]
    return (f"{head}: best {best['method']}, " + ", ".join(parts)
            + f", encoded {ratio:.0f}× fewer, dominates {'yes' if dominating else 'no'}")


# -- scale --------------------------------------------------------------------------------------
def scale(sizes: list[int], out: Path, model_dir: Path) -> str:
    """Index synthetic QUIT-shaped benchmarks with the learned clue scorer, each in a fresh
    process (peak memory is the child's own), and relate time and memory to distinct hints."""
    import shutil
    import subprocess

    rows = []
    for n in sizes:
        questions = max(2, round(n / 325))
        path = out / f"synthetic-{questions}"
        sys.path.insert(0, str(REPO / "benchmarks"))
        from make_synthetic import ensure_synthetic

        ensure_synthetic(path, questions, progress=False)  # built here: the child's peak is the index's own
        code = ("import json, resource, sys, time; "
                "from inferqa.formats.benchmark import Benchmark; from inferqa.retrieve import get_retriever; "
                "b = Benchmark(%r); base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss; "
                "r = get_retriever('clue', model=%r, show_progress=False); t = time.perf_counter(); "
                "r.index(b, %r); s = time.perf_counter() - t; "
                "m = json.load(open(%r + '/retriever.json')); "
                "print(json.dumps({'passages': m['passages'], 'units': m['units'], 'groups': m['groups'], "
                "'index_s': s, 'encode_s': m['encode_seconds'], 'unit_s': m['unit_seconds'], 'peak_mb': resource.getrusage("
                "resource.RUSAGE_SELF).ru_maxrss / 1024, 'before_index_mb': base / 1024}))"
                ) % (str(path), str(model_dir),
                     str(out / f"synthetic-{questions}-index"), str(out / f"synthetic-{questions}-index"))
        shutil.rmtree(out / f"synthetic-{questions}-index", ignore_errors=True)  # a fresh build is timed
        env = {**os.environ, "PYTHONPATH": str(REPO / "src")}
        res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
        if res.returncode:
            sys.exit(res.stderr[-2000:])
        rows.append(json.loads(res.stdout.strip().splitlines()[-1]))
    lines = ["**scale: learned clue index on synthetic QUIT-shaped benchmarks**", "",
             "| passages | distinct hints (texts encoded) | hint sets | index s | of which encoding s | "
             "of which passage → hints pass s | peak RSS MB |",
             "|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['passages']:,} | {r['units']:,} | {r['groups']:,} | {r['index_s']:.1f} | "
                     f"{r['encode_s']:.1f} | {r['unit_s']:.1f} | {r['peak_mb']:.0f} |")
    if len(rows) >= 2:
        a, b = rows[0], rows[-1]
        lines.append(f"\nratios largest / smallest: passages {b['passages'] / a['passages']:.2f}×, distinct hints "
                     f"{b['units'] / a['units']:.2f}×, index time {b['index_s'] / a['index_s']:.2f}×, "
                     f"encode time {b['encode_s'] / a['encode_s']:.2f}×, peak RSS {b['peak_mb'] / a['peak_mb']:.2f}×")
    (out / "scale.json").write_text(json.dumps(rows, indent=2))
    return "\n".join(lines)


def main() -> None:
    args = parse_args()
    sys.path.insert(0, str(REPO / "src"))
    args.out.mkdir(parents=True, exist_ok=True)
    benches = benchmarks(args)
    info = learned_model(args, benches["train"])
    print(f"learned clue encoder: {info['questions']} TriviaHG train questions, {info['examples']} examples, "
          f"{info['steps']} steps, loss {info['first_loss']:.3f} -> {info['last_loss']:.3f}, {info['seconds']:.0f} s",
          flush=True)
    if args.scale:
        print(scale(args.scale, args.out, args.model_dir))
        return
    dev = benches["dev"]
    dense_dev, _ = searched(dev, "dense", model="minilm", chunk_size=512)
    tuned, tuning = {}, {}
    learned = {"model": str(args.model_dir), "compose": args.compose}
    for key, options, ahead in (("clue", {"model": "minilm"}, False), ("learned", learned, False),
                                ("ahead", learned, True)):
        run, _ = searched(dev, "clue", **options)
        tuned[key], tuning[key] = tune(run, dense_dev, dev, ahead)
        print(f"margin tuned on TriviaHG dev ({key}): {fmt_margin(tuned[key])}, diversifies "
              f"{100 * tuning[key]['share']:.0f} % "
              f"of dev queries, smallest gain over dense there {tuning[key]['min_gain']:+.1f}", flush=True)
    # The dev share: the share of TriviaHG dev queries the maximin margin diversifies, applied
    # to each table's own run as a share (the margin's scale does not carry over, the share does).
    shares = {key: tuning[key]["share"] for key in ("clue", "learned", "ahead")}
    results, tables = {}, []
    for key, title in (("test", f"TriviaHG validation, {len(benches['test'].questions)} held-out test questions "
                                "(never seen in training or tuning)"),
                       ("wikihint", f"WikiHint test, {len(benches['wikihint'].questions)} questions × 325 passages")):
        rows, _ = table_rows(benches[key], args.model_dir, args.compose, tuned, shares)
        results[key] = rows
        tables.append(fmt_table(title + f", top {K}", rows))
    text = "\n\n".join(tables + [
        f"Learned clue encoder: MiniLM trained on {info['questions']} TriviaHG train questions "
        f"({info['examples']} question-hint examples, {info['steps']} steps, {info['seconds']:.0f} s). Margins tuned "
        f"on TriviaHG dev: clue {fmt_margin(tuned['clue'])}, learned {fmt_margin(tuned['learned'])} (maximin: the largest "
        f"smallest gain over dense), learned ahead-tuned {fmt_margin(tuned['ahead'])} (the largest mean gain with "
        "every gain >= 0; chosen after WikiHint's figures were seen, so it is shown but never the best). "
        f"Dev shares: the share of TriviaHG dev queries the maximin margin diversifies, clue "
        f"{100 * shares['clue']:.0f} %, learned {100 * shares['learned']:.0f} %, learned ahead-tuned "
        f"{100 * shares['ahead']:.0f} % (post hoc as its margin), applied to each table's own "
        "margins (its least-led queries; ties by qid). texts encoded / index s: of the "
        "index, as recorded when it was built on this shared 2-core machine (query encoding not counted). "
        f"nDCG@10 = ndcg_exp@10. p: paired randomisation test vs dense, Holm-corrected over the "
        f"{len(results['wikihint']) - 1} rows, per metric. Best: among the rows not marked post hoc.",
        best_p(results["test"]), summary(results["test"], "held-out TriviaHG test"),
        best_p(results["wikihint"]), summary(results["wikihint"])])
    print(text)
    (args.out / "inferential.md").write_text(text + "\n")
    (args.out / "inferential.json").write_text(json.dumps({"results": results, "margins": tuned, "shares": shares,
                                                           "tuning": tuning,
                                                           "training": info}, indent=2))


if __name__ == "__main__":
    main()
