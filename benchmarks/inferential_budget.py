"""The hard protocol at a larger, equal training budget: a test fixed before it was run.

`inferential_hard.py` trained both encoders on 3,500 examples for 110 steps. This script asks
whether the bag-of-clues paradigm closes its gap to full-passage dense when both get more
training. Everything was fixed, and committed, before its first figure:

- corpus, queries, dev and train questions: `inferential_hard.py --corpus full` (1,100
  questions, 357,500 passages; 300 test queries; 100 TriviaHG dev queries; 700 train questions);
- budget: fine-tuned dense (`finetune_retriever`) and the set-trained clue encoder
  (`finetune_clue_sets`) get the same `BUDGET` (20 positives and 20 clue-mined hard negatives per
  question, 3 epochs, batch 64), so the same examples, batches and steps;
- rows: BM25, dense (untrained), fine-tuned dense, set-trained clue, + adaptive (its margin
  tuned on dev), + BM25 (RRF);
- the primary row: of the three set-trained rows, the one with the largest smallest gain over
  the stronger dense on the dev queries (Hit@1, Hit@10, MRR, nDCG@10), written to
  OUT/tuned-budget.json before any test query is searched. Targets: #35's (≥ both dense rows
  on the four metrics, Holm p < 0.05 against fine-tuned dense on two, ≥ 50× fewer texts).

It trains and encodes on a GPU when there is one (`--device`); on 2 CPU cores expect hours.
Cached artefacts are keyed by their inputs as in `inferential_hard.py` and printed when reused
("reused: NAME"): the models by their training questions' digest and options (budget, epochs,
steps), tuned-budget-KEY.json, emvr-budget-KEY.json and runs-KEY/ by the hard benchmark, its dev
and test questions and the models. The training device is not part of a key.

    python benchmarks/inferential_budget.py --out runs/inferential-budget
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hint_data import REPO  # noqa: E402
from cache_keys import model_dir  # noqa: E402
import inferential_hard as hard_protocol  # noqa: E402
import inferential_retrieval as small  # noqa: E402

from inferential_hard import (BM25, DENSE, FT_DENSE, SETS, SETS_ADAPTIVE, SETS_FUSED, SUMMARY,  # noqa: E402
                              LABELS, METRICS, Searcher, log)

BUDGET = dict(positives=20, negatives=20, epochs=3, batch_size=64)
CANDIDATES = (SETS, SETS_ADAPTIVE, SETS_FUSED)


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, default=REPO / "runs" / "inferential-budget")
    ap.add_argument("--device", help="torch device for training and encoding (default: cuda when available)")
    ap.add_argument("--threads", type=int, help="torch CPU threads")
    ap.add_argument("--questions", type=int, help="the first N questions of each hint file: a quick check of "
                                                  "the pipeline, not the protocol")
    ap.add_argument("--max-steps", type=int, help="stop both trainings after N steps (a quick check)")
    ap.add_argument("--against", type=Path, metavar="HARD_OUT",
                    help="post hoc, from this script's finished files in --out (its TREC runs and "
                         "tuned-budget-KEY.json of the same --questions, --max-steps and --epochs): the rows against "
                         "the hard protocol's fine-tuned dense (small budget) in HARD_OUT, trained and indexed there "
                         "unless it is; writes inferential-budget-vs-small.md/json")
    ap.add_argument("--epochs", type=int, default=BUDGET["epochs"],
                    help=f"another point of the budget curve (post hoc; default the fixed {BUDGET['epochs']}): "
                         "its own (keyed) models, its reports with an -eN suffix")
    args = ap.parse_args()
    if args.device is None:
        import torch

        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    args.budget = {**BUDGET, "epochs": args.epochs}
    args.label = ("" if args.epochs == BUDGET["epochs"] else f"-e{args.epochs}") \
        + hard_protocol.run_label(args.questions, args.max_steps)
    args.report = args.out / f"inferential-budget{args.label}"
    return args


def locate(args, benches) -> None:
    """The cached artefacts' keyed paths: the models by their training questions and options,
    the tuned rules, EMVR and runs by the hard benchmark's dev and test questions and the models."""
    train = benches["train"]
    args.dense_dir = model_dir(args.out, "dense-budget", train, options(args))
    args.sets_dir = model_dir(args.out, "clue-sets-budget", train, options(args))
    k = hard_protocol.results_key(benches["hard"], (args.dense_dir, args.sets_dir), candidates=CANDIDATES)
    args.tuned, args.emvr = args.out / f"tuned-budget-{k}.json", args.out / f"emvr-budget-{k}.json"
    args.runs = args.out / f"runs-{k}"


def options(args):
    return hard_protocol.clue_options(**args.budget, max_steps=args.max_steps)


def train(args, train_bench) -> dict:
    """training.json of both encoders, trained here unless already there."""
    from inferqa.experiments.finetune import finetune_clue_sets, finetune_retriever
    from inferqa.io import read_json

    for name, fn, out in (("fine-tuned dense", finetune_retriever, args.dense_dir),
                          ("set-trained clue", finetune_clue_sets, args.sets_dir)):
        if (out / "training.json").exists():
            hard_protocol.reused(f"{name} {out.name}")
        else:
            log(f"training {name} on {args.device}: {args.budget}")
            fn(train_bench, out, model="minilm", options=options(args), device=args.device)
    hard_protocol.encode_at(args.dense_dir, 256)
    return {name: read_json(d / "training.json") for name, d in ((FT_DENSE, args.dense_dir), (SETS, args.sets_dir))}


def searchers(bench, args) -> dict:
    dense = dict(chunk_size=16384, batch_size=256, device=args.device)
    found = {}
    for name, kind, opts in ((BM25, "bm25", {}), (DENSE, "dense", dict(model="minilm", **dense)),
                             (FT_DENSE, "dense", dict(model=str(args.dense_dir), **dense)),
                             (SETS, "clue", dict(model=str(args.sets_dir), device=args.device))):
        t0 = time.perf_counter()
        found[name] = Searcher(bench, kind, **opts)
        log(f"{name}: index ready ({time.perf_counter() - t0:.0f} s)")
    return found


def dev_scores(hard, found: dict, tuned: dict) -> dict:
    runs = hard_protocol.runs_on(hard, found, hard.split_qids("dev"), tuned)
    return {name: hard_protocol.scores(run, hard) for name, (run, _) in runs.items()}


def choose_primary(hard, found: dict, path: Path) -> dict:
    """The adaptive margin (`inferential_hard.tune_on_dev`) and then the primary row, both on
    dev and both written to `path` before any test query is searched; never re-chosen."""
    from inferqa.io import write_json

    tuned = hard_protocol.tune_on_dev(hard, found, path)
    if "primary" not in tuned:
        dev = dev_scores(hard, found, tuned)
        ref = {m: max(dev[DENSE][m], dev[FT_DENSE][m]) for m in SUMMARY}
        gains = {name: [dev[name][m] - ref[m] for m in SUMMARY] for name in CANDIDATES}
        tuned["primary"] = max(CANDIDATES, key=lambda n: (round(min(gains[n]), 6), round(sum(gains[n]), 6)))
        tuned["dev_rows"], tuned["primary_at"] = dev, time.strftime("%Y-%m-%d %H:%M:%S")
        write_json(path, tuned)
        log(f"primary row, chosen on dev: {tuned['primary']} (smallest dev gain "
            f"{min(gains[tuned['primary']]):+.1f})")
    return tuned


def device_check(args, bench) -> dict | None:
    """On a GPU: the untrained encoder's vectors of 64 passages there and on the CPU."""
    if args.device == "cpu":
        return None
    import numpy as np

    from inferqa.retrieve.encoding import encode_texts

    texts = [bench.passage_text(p) for p in list(hard_protocol.corpus_of(bench)[:64].astype("U"))]
    on = {d: encode_texts(texts, "minilm", device=d, progress=False) for d in ("cpu", args.device)}
    gap = float(np.abs(on["cpu"] - on[args.device]).max())
    log(f"{args.device} vs cpu: the same 64 passages' vectors differ by at most {gap:.2g}")
    return {"device": args.device, "max_abs_diff": gap}


def run_file(runs_dir: Path, name: str) -> Path:
    """Where a row's TREC run is kept: its name in lower case, other characters as '-'."""
    return runs_dir / (re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") + ".trec")


def training_line(training: dict) -> str:
    return "; ".join(f"{name}: {t['examples']:,} examples, {t['steps']} steps, {t['seconds']:.0f} s"
                     for name, t in training.items())


SMALL, LARGE = "fine-tuned dense, small budget", "fine-tuned dense, larger budget"


def small_budget_dense(args, benches) -> Searcher:
    """The hard protocol's fine-tuned dense (its clue encoder's 3,500 examples and 110 steps),
    trained into `args.against` and indexed on the hard corpus unless already there."""
    from types import SimpleNamespace

    ns = SimpleNamespace(out=args.against, max_steps=args.max_steps, dense_max_length=256)
    hard_protocol.trained(ns, benches["train"], sets=False)  # sets ns.dense_dir, keyed as there
    hard_protocol.dense_index(benches["hard"], str(ns.dense_dir))
    return Searcher(benches["hard"], "dense", model=str(ns.dense_dir), chunk_size=512)


def against_small_budget(args, benches) -> str:
    """Post hoc: this run's test rows (its TREC runs, top 100) against the small budget's
    fine-tuned dense cut to the same depth, and what the dev queries would have chosen
    between the two dense budgets."""
    from inferqa.evaluation import compare
    from inferqa.formats.runs import Run
    from inferqa.io import read_json, write_json

    hard = benches["hard"]
    if not args.tuned.exists():
        sys.exit(f"{args.tuned} is absent: run without --against first (with the same options)")
    tuned = read_json(args.tuned)
    small_dense = small_budget_dense(args, benches)
    runs = {SMALL: small_dense.search(hard.split_qids("test"))[0].top(100),
            **{(LARGE if n == FT_DENSE else n): Run.from_file(run_file(args.runs, n), bench=hard)
               for n in (FT_DENSE, DENSE, tuned["primary"])}}
    cmp = compare(runs, hard, list(METRICS), questions="run")
    dev = {SMALL: hard_protocol.scores(small_dense.search(hard.split_qids("dev"))[0], hard),
           LARGE: tuned["dense_dev"][FT_DENSE]}
    pick = max(dev, key=lambda n: sum(dev[n][m] for m in SUMMARY))
    lines = [f"**Post hoc: the larger budget's rows against the small budget's fine-tuned dense, "
             f"{len(hard.split_qids('test'))} test questions, top 100**", "",
             "| method | " + " | ".join(LABELS) + f" | p vs {SMALL} (Holm) |",
             "|---|" + "---:|" * len(LABELS) + "---|"]
    for row in cmp.rows:
        ps = "–" if row["run"] == SMALL else " / ".join(small.fmt_p(row["metrics"][m].get("p_corrected"))
                                                       for m in METRICS)
        lines.append(f"| {row['run']} | " + " | ".join(f"{100 * row['metrics'][m]['mean']:.1f}" for m in METRICS)
                     + f" | {ps} |")
    lines += ["", f"Dev ({len(hard.split_qids('dev'))} dev queries; Hit@1 / Hit@10 / MRR / nDCG@10): " + "; ".join(
        f"{n} " + " / ".join(f"{dev[n][m]:.1f}" for m in SUMMARY) for n in dev)
        + f". Chosen on dev by the mean of the four: {pick}."]
    text = "\n".join(lines)
    rows = [{"method": r["run"], **{m: 100 * r["metrics"][m]["mean"] for m in METRICS},
             "p": {m: r["metrics"][m].get("p_corrected") for m in METRICS}} for r in cmp.rows]
    vs = args.out / f"inferential-budget-vs-small{args.label}"
    write_json(vs.with_suffix(".json"), {"rows": rows, "dev": dev, "dev_pick": pick})
    vs.with_suffix(".md").write_text(text + "\n")
    return text


def main() -> None:
    args = parse_args()
    sys.path.insert(0, str(REPO / "src"))
    hard_protocol.require_splits(args.questions)  # before anything is built, trained or encoded
    args.out.mkdir(parents=True, exist_ok=True)
    sfx = "" if args.epochs == BUDGET["epochs"] else f"-e{args.epochs}"
    hard_protocol.legacy_notice(args.out, (f"models/dense-budget{sfx}", f"models/clue-sets-budget{sfx}",
                                           f"tuned-budget{sfx}.json", f"emvr-budget{sfx}.json", f"runs{sfx}"))
    if args.threads:
        import torch

        torch.set_num_threads(args.threads)
    benches = hard_protocol.benchmarks(args.out, args.questions, "full")
    locate(args, benches)
    if args.against:
        print(against_small_budget(args, benches))
        return
    hard, wikihint = benches["hard"], benches["wikihint"]
    check = device_check(args, hard)
    training = train(args, benches["train"])
    found = searchers(hard, args)
    tuned = choose_primary(hard, found, args.tuned)  # written before any test query is searched
    log("computing the test table")
    runs = hard_protocol.runs_on(hard, found, hard.split_qids("test"), tuned)
    rows = hard_protocol.table(hard, runs)
    primary = next(r for r in rows if r["method"] == tuned["primary"])
    args.runs.mkdir(exist_ok=True)
    for name, (run, _) in runs.items():  # top 100 of each row, for checks elsewhere
        run.top(100).to_file(run_file(args.runs, name), against=hard)
    text = "\n\n".join([
        hard_protocol.fmt_table(("" if args.budget == BUDGET else "Post hoc: ")
                                + f"Equal larger budget ({args.budget}): {len(hard.split_qids('test'))} test "
                                f"questions against {len(hard.questions) * 325:,} passages, top {small.K}",
                                rows, post_hoc=()),
        f"Training on {args.device}, TriviaHG train: {training_line(training)}. Primary row chosen on the "
        f"{tuned['dev_questions']} dev queries at {tuned['primary_at']}: {tuned['primary']}.",
        hard_protocol.significance(rows, primary),
        hard_protocol.summary(rows, "inferential (budget)", primary, role="primary")])
    print(text)
    args.report.with_suffix(".md").write_text(text + "\n")  # the table stays if EMVR is cut short
    report = {"hard": rows, "tuned": tuned, "training": training, "budget": args.budget, "device_check": check}
    args.report.with_suffix(".json").write_text(json.dumps(report, indent=2))
    emvr = hard_protocol.emvr_rows(hard, wikihint, {n: found[n] for n in (FT_DENSE, SETS)},
                                   args.emvr)
    args.report.with_suffix(".md").write_text(text + "\n\n" + hard_protocol.fmt_emvr(emvr) + "\n")
    print(hard_protocol.fmt_emvr(emvr))


if __name__ == "__main__":
    main()
