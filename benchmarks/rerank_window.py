"""Rerank evidence, not repeats: plain against distinct reranking windows on the hard benchmark.

Data: `inferential_hard.py`'s hard benchmark (WikiHint test + TriviaHG validation; 1,100
questions, 357,500 passages; the 700 TriviaHG train questions only train and are distractors,
100 dev questions choose, 300 test questions are the queries).

Phases, each cached under OUT in a folder keyed by every input it depends on (question cut,
options, seeds, base model, training questions), resumable, printing what it reused:

1. `prepare`: the benchmarks, BM25 and learned clue indexes (the clue encoder as in
   `inferential_hard.py`), fine-tuned dense trained fairly (at the 256 tokens it encodes,
   BM25's negatives rather than the clue retriever's confusions) and its index, and each
   first stage's top 1,000 for the dev and test queries (TREC files).
2. `reranker`: the inferential cross-encoder (`inferqa finetune reranker` with
   `--negatives-from` a first stage's distinct-question representatives and the listwise loss),
   its dev checks (own-versus-other accuracy; Hit@1 over a distinct window of 10 against the
   first stage's order); then the model's scores of the dev and test window candidates at
   N <= 20 go to the score cache (model outputs only: no test figure is computed from them
   before `register` has written its file).
3. `register`: every choice made on dev (first stage, window kind, N, interpolation weight),
   written to OUT/preregistration.json with its sha256 printed, before any test figure.
4. `test`: the table (plain vs distinct windows at 10, 20, 50 and 100 calls; each first stage
   alone) on the 300 test queries, Holm-corrected paired p, and the `window:` last line.

A second registered round (`--round 2`, files ending in -2) repeats phases 2 to 4 with a
reranker recipe chosen on dev (`--reranker`, RERANKERS), every first stage a candidate, and the
first stages 10,000 deep so that distinct windows fill (`--depth 10000`); the first round's test
table had been seen when it was written, and its registration says so.

A third (`--round 3`, files ending in -3) registers an LLM judge of the library (`--reranker`,
JUDGES: UPR's query likelihood under the bundled SmolLM2) over fine-tuned dense at 10 calls, and
chooses on dev what a distinct window shows it of each question: its first passage, or its passage
of all its hints (`inferqa rerank --window question --representative all-hints`). Its `reranker`
phase scores dev pairs only; the test pairs are scored after `register` has written its file.

A fourth (`--round 4`, files ending in -4) repeats round 3's protocol with the judge trained by
`inferqa finetune upr` (`--reranker upr-smollm2-ft`, UPR_TRAINING), named after round 3 from its
dev checks alone. Its 300 test queries are rounds 1 to 3's: a win counts at Holm p x 4 < 0.05.

    nice python benchmarks/rerank_window.py --out /work/cache/rerank-window prepare
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hint_data import REPO  # noqa: E402
from cache_keys import key, questions_digest  # noqa: E402,F401  (shared with inferential_hard.py, inferential_budget.py)
import inferential_hard as hard_protocol  # noqa: E402,F401  (the clue encoder's options, as the tests read them)
# The protocol's parts, each a module of benchmarks/ (helpers of this script, not scripts to run);
# what the tests and docs read as rerank_window.<name> is imported here too.
from window_protocol import (CANDIDATES, DEV_CALLS, FILLED, K, METRICS, ROUND_CALLS, ROUND_JUDGE,  # noqa: E402
                             ROUND_WINDOWS, SEEN, across_rounds, load_run, log, looks, mean4, round_file)
from window_stages import model_dir, prepare, trained  # noqa: E402
from window_scores import (Scores, adaptive_margins, bi_encoder_checks, dev_checks, dev_grid,  # noqa: E402
                           fill_scores, own_versus_other, register_comparison)
from window_scores import windowed  # noqa: E402,F401  (as the tests read it)
from window_report import deeper, depth_cost, report, representatives_first, speed  # noqa: E402

from inferqa.io import write_json  # noqa: E402
from inferqa.errors import InputError  # noqa: E402

OUT = REPO / "runs" / "rerank-window"


def parse_args(argv=None) -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("phase", choices=("prepare", "reranker", "register", "test", "all", "deeper", "speed", "depth-cost",
                                          "order", "judges"),
                    help="deeper: post hoc, the primary's first stage 10,000 deep (after `test`); speed: the "
                         "speed check alone, 4 rounds (after `reranker`); depth-cost: what retrieving deep "
                         "enough to fill a distinct window costs the learned clue retriever (after `prepare`); order: post hoc, "
                         "the registered cells with one passage per question first (after `test`); judges: each "
                         "LLM judge's own-versus-other on dense's dev pairs (after `prepare`)")
    ap.add_argument("--out", type=Path, default=OUT)
    ap.add_argument("--questions", type=int, help="the first N questions of each hint file: a quick check")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--depth", type=int, default=K, help="first stages' depth (default 1,000, the registered test's; "
                    "a distinct window of N needs a ranking that holds N questions: registration refuses otherwise)")
    ap.add_argument("--max-steps", type=int, help="cap every training's optimiser steps (a quick check)")
    ap.add_argument("--round", type=int, choices=(1, 2, 3, 4), default=1,
                    help="2: the second registered test (its files end in -2): every first stage a candidate, "
                         "the reranker named by --reranker, windows filled (run with --depth 10000); 3: an LLM "
                         "judge (JUDGES) over fine-tuned dense at 10 calls, a distinct window's representative "
                         "chosen on dev (files end in -3); 4: round 3's protocol with the judge trained by "
                         "`finetune upr` (upr-smollm2-ft), a fourth look at the same test queries (files end in -4)")
    ap.add_argument("--reranker", choices=sorted({**RERANKERS, **JUDGES}), default="v1",
                    help="the reranker's training recipe (RERANKERS), or an LLM judge (JUDGES, round 3); v1 is the "
                         "first registered test's")
    ap.add_argument("--skip-dense", action="store_true", help="leave fine-tuned dense out (its encoding is the "
                                                              "longest part: about 50 minutes on 2 cores)")
    return ap.parse_args(argv)


# -- phase 2: the reranker and its dev checks ----------------------------------------------------
# The reranker's examples as `build_rerank_examples` makes them, part of its cache key: "matched
# hint counts" replaced the first version's negatives (other questions' first passages), which
# let the hint count separate the pairs (found on dev: 94-99 % own-versus-other against 8-15 %
# Hit@1 over ten full-hint-set representatives).
EXAMPLES = "representatives' questions, matched hint counts"


# The reranker's training recipes: (starting weights, options over V1's). v1 starts from MiniLM, as
# the first registered test's did; the others start from the fine-tuned dense bi-encoder's weights
# (trained on the same 700 train questions), which already tell a question's hints from another's.
# Which one round 2 registers is chosen on dev (docs/windows.md).
RERANKERS = {
    "v1": ("minilm", {}),
    "dense-init": ("dense", {}),
    "dense-init-long": ("dense", {"positives": 3, "epochs": 2, "lr": 5e-5, "negatives_from": "clue"}),
}


# Off-the-shelf LLM rerankers of the library, judged on dev like the cross-encoders (round 3):
# name -> (reranker plugin, its options). The call cache is off: every pair is computed and timed.
# Round 3 registers the one with the best own-versus-other on dense's dev pairs (`judges` phase).
_OFF = {"llm_options": {"cache": None}}
JUDGES = {"upr-smollm2": ("upr", {"llm": "smollm2", **_OFF}),
          "upr-gemma3-270m": ("upr", {"llm": "gemma3-270m", **_OFF}),
          "yes-no-smollm2": ("llm-pointwise", {"llm": "smollm2", **_OFF}),
          # SmolLM2 in float32 on the transformers backend: as converted from its GGUF, and fine-tuned
          # (`finetune upr`, UPR_TRAINING); `judge_llm` puts the folder in place of the name
          "upr-smollm2-hf": ("upr", {"llm": "transformers:smollm2", **_OFF}),
          "upr-smollm2-ft": ("upr", {"llm": "transformers:finetune-upr", **_OFF})}
# `finetune upr` on the 700 train questions: each own passage against 3 other questions' representatives
# in BM25's ranking, 2 groups a step, 300 steps (the dev exploration's recipe, docs/windows.md)
UPR_TRAINING = {"positives": 2, "negatives": 3, "negatives_from": "bm25", "batch_size": 8, "lr": 2e-5,
                "max_length": 256, "max_steps": 300}


def reranker_options(args):
    from inferqa.experiments.finetune import FinetuneOptions

    # BM25's ranking of the train benchmark gives the other questions' representatives: never
    # the clue retriever's own confusions, never a dev or test question (their own benchmark);
    # "clue" there is the untuned clue retriever on the train benchmark, not the learned one
    base = dict(split="train", positives=2, negatives=7, negatives_from="bm25", epochs=1, batch_size=32,
                lr=3e-5, max_length=128, seed=13, max_steps=args.max_steps)
    return FinetuneOptions(**{**base, **RERANKERS[args.reranker][1]})


def reranker_model(args, train, models: dict) -> Path:
    from inferqa.experiments.finetune import finetune_reranker

    opts = reranker_options(args)
    start = RERANKERS[args.reranker][0]
    if start == "minilm":
        return trained(model_dir(args, "reranker", train, opts, examples=EXAMPLES), train, opts, finetune_reranker,
                       "the reranker: own passages against other questions' passages of as many hints")
    if start not in models:
        sys.exit(f"--reranker {args.reranker} starts from fine-tuned {start}, which is not built yet: run prepare")
    return trained(model_dir(args, "reranker", train, opts, examples=EXAMPLES, init=models[start].name), train, opts,
                   finetune_reranker, f"the reranker from fine-tuned {start}'s weights", model=str(models[start]))


def reranker_scores(args, prepared: dict) -> "Scores":
    """The score cache of `--reranker`: a trained cross-encoder's (RERANKERS), or an LLM judge's
    (JUDGES), named by the judge and a key of its whole configuration (prompt, model file)."""
    if args.reranker in RERANKERS:
        return Scores(reranker_model(args, prepared["train"], prepared["models"]), args.out / "scores", prepared["hard"])
    from inferqa.reranking import get_reranker

    plugin, options = JUDGES[args.reranker]
    options = {**options, "llm": judge_llm(args, prepared, options["llm"])}
    judge = get_reranker(plugin, **options)
    return Scores(None, args.out / "scores", prepared["hard"], (f"{args.reranker}-{key(**judge.config())}", judge),
                  recipe=(plugin, options))


def judge_llm(args, prepared: dict, spec: str) -> str:
    """A JUDGES llm spec, with a folder made here in place of its name: `transformers:smollm2` (the
    bundled GGUF converted) or `transformers:finetune-upr` (trained by `finetune upr`, UPR_TRAINING)."""
    from inferqa.experiments.finetune import FinetuneOptions
    from inferqa.experiments.finetune_upr import finetune_upr
    from inferqa.models import smollm2_transformers_path

    if spec == "transformers:smollm2":
        return f"transformers:{smollm2_transformers_path()}"
    if spec != "transformers:finetune-upr":
        return spec
    train = prepared["train"]
    opts = FinetuneOptions(**{**UPR_TRAINING, "split": "train", "seed": 13,
                              "max_steps": min(args.max_steps or UPR_TRAINING["max_steps"], UPR_TRAINING["max_steps"])})
    folder = trained(model_dir(args, "upr", train, opts, examples=EXAMPLES, init="smollm2"), train, opts, finetune_upr,
                     "the upr judge: SmolLM2's log P(question | passage), own passage against representatives",
                     model="smollm2")
    return f"transformers:{folder}"


def judge_choice(args, prepared: dict) -> dict:
    """Each LLM judge of JUDGES (its model installed) on dense's dev own-versus-other pairs: the
    dev figure round 3 chose its judge by. Written to OUT/dev-judges.json."""
    bench, out = prepared["hard"], {}
    run = load_run(prepared["stages"]["dense"]["dev"], bench)
    for name in JUDGES:
        try:
            scores = reranker_scores(argparse.Namespace(**{**vars(args), "reranker": name}), prepared)
        except InputError as exc:  # a judge whose model package is not installed here
            log(f"{name}: left out ({exc.message})")
            continue
        out[name] = own_versus_other(scores, run, bench)
        log(f"dev dense pairs: {name} own-vs-other {out[name]:.1f} %")
    write_json(args.out / "dev-judges.json", out)
    return out


# -- phase 3: every choice on dev, written before any test figure ---------------------------------
def register(args, bench, scores: Scores, stages: dict) -> dict:
    """OUT/preregistration.json (round 2: preregistration-2.json): the primary comparison and every
    tuned value, from dev only. Written once; its sha256 is printed; never rewritten."""
    path = round_file(args, "preregistration.json")
    runs = {name: {split: p.name for split, p in r.items()} for name, r in stages.items()
            if name in CANDIDATES[args.round]}
    if path.exists():
        text = path.read_text()
        reg = json.loads(text)
        if reg.get("runs", runs) != runs:  # the first registration predates this record
            sys.exit(f"{path} was registered on other first-stage runs ({reg['runs']}); use another --out")
        if reg.get("primary", {}).get("reranker", scores.name) != scores.name:
            sys.exit(f"{path} was registered with reranker {reg['primary']['reranker']}, not "
                     f"{scores.name}: give the --reranker it was registered with")
        log(f"reused: {path.name} sha256 {hashlib.sha256(text.encode()).hexdigest()}")
        return reg
    candidates = {k: v for k, v in stages.items() if k in CANDIDATES[args.round]}
    rows = dev_grid(args, bench, scores, candidates)
    tuned = {}
    for r in rows:  # the weight per (first stage, window, N): the best dev mean of the four metrics
        k = f"{r['first_stage']}|{r['window']}|{r['calls']}"
        if k not in tuned or mean4(r) > mean4(tuned[k]) + 1e-9:
            tuned[k] = r
    # a distinct window its first stage cannot fill on dev is no candidate: its calls would not
    # equal the plain window's (the first registration, 1,000 deep, made 8.6 calls at N = 20)
    distinct = [r for r in tuned.values() if r["window"] != "plain" and r["calls_made"] >= FILLED * r["calls"]]
    if not distinct:
        sys.exit(f"no distinct window is filled on dev (at least {FILLED:.0%} of N calls): retrieve deeper")
    best = max(distinct, key=lambda r: (round(mean4(r), 6), -r["calls"]))  # ties: fewer calls
    plain = tuned[f"{best['first_stage']}|plain|{best['calls']}"]
    reg = {
        "written_at": time.strftime("%Y-%m-%d %H:%M:%S"),
        "rule": ("the distinct (question) window, first stage and N with the largest dev mean of Hit@1, Hit@10, "
                 "MRR and nDCG@10 (ties: fewer calls), N in DEV_CALLS; each cell's interpolation weight the best of "
                 "WEIGHTS on dev by the same mean; N = 50 and 100 are not tuned on dev (cost) and take N = 20's"
                 if args.round < 3 else
                 "first stage fine-tuned dense and N = 10, both fixed before any figure of this round (cost: the "
                 "judge computes every pair); the distinct window's representative (first passage, or all hints) "
                 "with the largest dev mean of Hit@1, Hit@10, MRR and nDCG@10 (ties: the first passage); each "
                 "window's interpolation weight the best of WEIGHTS on dev by the same mean"),
        "primary": {"first_stage": best["first_stage"], "reranker": scores.name, "window": best["window"],
                    "calls": best["calls"], "weight": best["weight"], "plain_weight": plain["weight"],
                    "comparison": "distinct vs plain window at equal calls, same first stage and reranker; "
                                  "paired randomisation test per metric, Holm over the four summary metrics; "
                                  "dominates = better on all four",
                    "dev": {"distinct": {m: best[m] for m in METRICS}, "plain": {m: plain[m] for m in METRICS}}},
        "weights": {k: r["weight"] for k, r in tuned.items()},
        "adaptive_margins": adaptive_margins(bench, candidates),
        "candidates": list(candidates),
        "round": args.round,
        "reranker_recipe": ({"name": args.reranker, "starts_from": RERANKERS[args.reranker][0],
                             "options": str(reranker_options(args))} if args.reranker in RERANKERS else
                            {"name": args.reranker, "judge": scores.judge.config()}),
        "depth": args.depth,
        "runs": runs,
        "comparison_rows": ("fine-tuned dense, alone and under the same reranker (plain and distinct at N in "
                            "DEV_CALLS), with its weights and adaptive margin chosen on dev the same way and written "
                            + ("to registration-dense.json before any of its test figures" if args.round == 1 else
                               "here (a candidate in round 2)") if args.round < 3 else
                            "fine-tuned dense alone, and under the same judge over a plain window of N with its dev "
                            "weight written here (the only candidate)"),
        **({"seen_before": SEEN[args.round]} if args.round in SEEN else {}),
        **({"across_rounds": across_rounds(args.round)} if looks(args.round) > 1 else {}),
        "dev_questions": len(bench.split_qids("dev")),
        "test_questions": len(bench.split_qids("test")),
    }
    write_json(path, reg)
    text = path.read_text()
    log(f"pre-registered: {path} sha256 {hashlib.sha256(text.encode()).hexdigest()}")
    return reg


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    prepared = prepare(args, build_dense=args.phase in ("prepare", "all"))
    if args.phase == "prepare":
        return 0
    if args.phase == "depth-cost":
        print(depth_cost(args, prepared["hard"], prepared["models"]["clue"]), flush=True)
        return 0
    hard = prepared["hard"]
    if args.round == 2 and args.phase in ("register", "test", "all", "deeper", "order"):
        if args.reranker == "v1" or args.depth < 10_000:
            sys.exit("round 2 registers a reranker other than v1 (--reranker) over first stages 10,000 deep (--depth)")
    if (args.round >= 3) != (args.reranker in JUDGES) or args.round >= 3 and args.depth < 10_000:
        sys.exit("rounds 3 and 4, and only they, register an LLM judge (--reranker one of JUDGES) over first stages "
                 "10,000 deep (--depth)")
    if args.round in ROUND_JUDGE and args.reranker != ROUND_JUDGE[args.round] and args.phase != "judges":
        sys.exit(f"round {args.round} registers --reranker {ROUND_JUDGE[args.round]} only")
    if args.phase == "judges":
        print(judge_choice(args, prepared), flush=True)
        return 0
    scores = reranker_scores(args, prepared)
    if args.phase == "speed":
        print(speed(args, prepared["wikihint"], scores, ROUND_WINDOWS[args.round][-1], rounds=4), flush=True)
        return 0
    dev_checks(args, hard, scores, prepared["stages"])
    if args.phase == "reranker":
        if "dense" in prepared["models"]:
            bi_encoder_checks(args, hard, prepared["models"]["dense"], prepared["stages"])
        if args.round < 3:
            fill_scores(hard, scores, prepared["stages"], "dev", max(DEV_CALLS))
            fill_scores(hard, scores, prepared["stages"], "test", max(DEV_CALLS))
        else:  # the judge's test pairs wait for the registration: no test pair is scored before it
            candidates = {k: v for k, v in prepared["stages"].items() if k in CANDIDATES[args.round]}
            fill_scores(hard, scores, candidates, "dev", max(ROUND_CALLS[args.round][0]), all_hints=True)
        return 0
    reg = register(args, hard, scores, prepared["stages"])
    if "dense" in prepared["stages"] and args.round == 1:
        reg = register_comparison(args, hard, scores, prepared["stages"], reg)
    if args.phase == "register":
        return 0
    if args.phase == "order":
        print(representatives_first(args, hard, scores, prepared["stages"], reg), flush=True)
        return 0
    if args.phase == "deeper":
        if args.round != 1:
            sys.exit("deeper is round 1's post hoc check")
        print(deeper(args, prepared, scores, reg), flush=True)
        return 0
    print(report(args, prepared, scores, prepared["stages"], reg), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
