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
from cache_keys import key, questions_digest  # noqa: E402  (shared with inferential_hard.py, inferential_budget.py)
import cache_keys  # noqa: E402
import inferential_hard as hard_protocol  # noqa: E402
from inferential_retrieval import fmt_p  # noqa: E402

from inferqa.io import write_json  # noqa: E402
from inferqa.errors import InputError  # noqa: E402
from inferqa.models import quiet_loading  # noqa: E402

OUT = REPO / "runs" / "rerank-window"
K = 1000
CALLS = (10, 20, 50, 100)
FIRST_STAGES = ("bm25", "clue", "dense")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


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


# -- phase 1: first stages ----------------------------------------------------------------------
def benchmarks(args) -> dict:
    return hard_protocol.benchmarks(args.out, args.questions, "full")


def model_dir(args, kind: str, train, opts, **inputs) -> Path:
    """Where the `kind` model trained on `train` with `opts` (and any other `inputs`) lives."""
    return cache_keys.model_dir(args.out, kind, train, opts, **inputs)


def trained(folder: Path, train, opts, trainer, what: str, model: str = "minilm") -> Path:
    """`folder`'s model, trained there by `trainer` from `model` unless it is already (and said so)."""
    if (folder / "training.json").exists():
        log(f"reused: {what} {folder.name}")
    else:
        log(f"training {what}")
        trainer(train, folder, model=model, options=opts)
    return folder


def clue_model(args, train) -> Path:
    from inferqa.experiments.finetune import finetune_clue

    opts = hard_protocol.clue_options(max_steps=args.max_steps)
    return trained(model_dir(args, "clue", train, opts), train, opts, finetune_clue, "the clue encoder")


def dense_dir(args, train) -> tuple:
    opts = hard_protocol.clue_options(max_length=256, negatives_from="bm25", max_steps=args.max_steps)
    return opts, model_dir(args, "dense", train, opts)


def dense_model(args, train) -> Path:
    """Fine-tuned dense, trained fairly: at the 256 tokens it encodes, with BM25's negatives."""
    from inferqa.experiments.finetune import finetune_retriever

    opts, d = dense_dir(args, train)
    return trained(d, train, opts, finetune_retriever, "fine-tuned dense (256 tokens, BM25 negatives)")


def first_stage_runs(args, benches: dict, models: dict) -> dict:
    """name -> {split: TREC path} of each first stage's top K for the dev and test queries."""
    from inferqa.retrieve import get_retriever, question_queries

    hard = benches["hard"]
    specs = {"bm25": ("bm25", {}), "clue": ("clue", {"model": str(models["clue"])})}
    if "dense" in models:
        specs["dense"] = ("dense", {"model": str(models["dense"]), "chunk_size": 512})
    out = {}
    for name, (retriever, options) in specs.items():
        r = get_retriever(retriever, show_progress=True, **options).attach(hard)
        if not r.is_indexed():
            log(f"indexing {name} on {hard.path.name}")
            r.index(hard)
        runs = {}
        for split in ("dev", "test"):
            path = args.out / "runs" / f"{name}-{split}-{key(index=r.index_dir.name, k=args.depth, q=questions_digest(hard, split))}.trec"
            if path.exists():
                log(f"reused: {path.name}")
            else:
                t0 = time.perf_counter()
                run = r.search(question_queries(hard, hard.split_qids(split)), args.depth)
                path.parent.mkdir(parents=True, exist_ok=True)
                run.to_file(path, against=hard)
                log(f"{name} {split}: {len(run)} queries in {time.perf_counter() - t0:.1f} s")
            runs[split] = path
        out[name] = runs
    return out


def prepare(args, build_dense: bool = True) -> dict:
    """The first stages; fine-tuned dense built only with `build_dense` (else used when its
    index is finished: another process may be encoding it)."""
    import torch

    from inferqa.retrieve import get_retriever

    torch.set_num_threads(args.threads)
    benches = benchmarks(args)
    models = {"clue": clue_model(args, benches["train"])}
    stages = first_stage_runs(args, benches, models)  # BM25 and clue first: cheap
    if args.skip_dense:
        return {**benches, "models": models, "stages": stages}
    if build_dense:
        models["dense"] = dense_model(args, benches["train"])
        hard_protocol.encode_at(models["dense"], 256)
    else:
        found = sorted((args.out / "models").glob("dense-*/training.json"))
        ready = [f.parent for f in found if get_retriever("dense", model=str(f.parent), chunk_size=512,
                                                         show_progress=False).attach(benches["hard"]).is_indexed()]
        if not ready:
            log("fine-tuned dense is not indexed yet: left out")
            return {**benches, "models": models, "stages": stages}
        models["dense"] = dense_dir(args, benches["train"])[1]
        if models["dense"] not in ready:
            log(f"fine-tuned dense {models.pop('dense').name} is not indexed yet: left out")
            return {**benches, "models": models, "stages": stages}
    stages = first_stage_runs(args, benches, models)
    return {**benches, "models": models, "stages": stages}


# -- phase 2: the reranker and its dev checks ----------------------------------------------------
METRICS = ("hit@1", "hit@10", "hit@100", "mrr", "ndcg_exp@10")
LABELS = ("Hit@1", "Hit@10", "Hit@100", "MRR", "nDCG@10")
SUMMARY = ("hit@1", "hit@10", "mrr", "ndcg_exp@10")  # the four of the `window:` line and the targets
WEIGHTS = (0.2, 0.4, 0.6, 0.8, 1.0)  # the reranker's share of the interpolated score (1.0: the reranker alone)
# On 2 cores the model's calls are the budget: dev tunes N in (10, 20); on test every first stage
# gets those, the pre-registered first stage every N of CALLS (N = 50 and 100 take N = 20's weight).
DEV_CALLS = (10, 20)
# The primary's first stage is chosen among these on dev. In round 1 fine-tuned dense (about an hour
# to train and encode 357,500 passages on 2 cores) entered as a comparison row, with its own dev
# choices written before its test figures (`register_comparison`); in round 2 it is a candidate.
CANDIDATES = {1: ("bm25", "clue"), 2: FIRST_STAGES}  # per registered round
FILLED = 0.95  # the share of N calls a distinct window must make on dev to be registered


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
LABEL = {"upr": "UPR", "llm-pointwise": "LLM yes/no"}  # a judge's name in the tables; RERANKERS' is "CE"

# Each distinct window a round may register: (the `--window`, the `--representative`). Round 3 adds
# scoring each question by its passage of all its hints (`inferqa rerank --representative all-hints`).
WINDOWS = {"plain": ("plain", "first"), "question": ("question", "first"), "all-hints": ("question", "all-hints")}
ROUND_WINDOWS = {1: ("plain", "question"), 2: ("plain", "question"), 3: ("plain", "question", "all-hints")}
ROUND_WINDOWS[4] = ROUND_WINDOWS[3]
# (dev calls, test calls) per round: an LLM judge computes every pair (about 0.35 s each on 2 cores),
# so round 3 fixes N = 10 before any figure and leaves the 50- and 100-call cells out.
ROUND_CALLS = {1: (DEV_CALLS, CALLS), 2: (DEV_CALLS, CALLS), 3: ((10,), (10,)), 4: ((10,), (10,))}
CANDIDATES[3] = CANDIDATES[4] = ("dense",)  # round 2's registered first stage, best on every dev check
# Round 4 repeats round 3's protocol with the judge trained for these pairs (docs/windows.md, "After
# round 3"), named before its registration was written: only that judge may register it.
ROUND_JUDGE = {4: "upr-smollm2-ft"}


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


class Scores:
    """The reranker's score of each (question, passage) pair, computed once and kept in
    OUT/scores/<name>.jsonl with the measured seconds of each pair (a batch's time shared
    evenly by its pairs), so every window reads the same scores and is charged its own pairs.
    `model_dir`: a cross-encoder folder (named by it); or `judge`: (name, a library reranker), with
    `recipe` (its plugin and options, for `inferqa rerank` in `speed`)."""

    def __init__(self, model_dir: Path | None, folder: Path, bench, judge: tuple | None = None,
                 recipe: tuple | None = None):
        self.model_dir, self.bench, self.recipe = model_dir, bench, recipe
        self.name, self.judge = (model_dir.name, None) if judge is None else judge
        self.label = "CE" if judge is None else LABEL[self.judge.name]
        self.path = folder / f"{self.name}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.score, self.seconds, self._ce = {}, {}, None
        if self.path.exists():
            for line in self.path.read_text().splitlines():
                try:
                    q, p, s, t = json.loads(line)
                except ValueError:  # a torn last line of a killed run
                    continue
                self.score[q, p], self.seconds[q, p] = s, t

    computing = 0.0  # seconds spent in the model by this process

    def mean_seconds(self) -> float:
        """The mean measured seconds of one pair: a cell is charged its pairs at this rate (a
        pair's own batch depends on which cell asked first)."""
        return sum(self.seconds.values()) / max(len(self.seconds), 1)

    def charge(self, pairs: list) -> float:
        """A cell's model seconds: a judge's own pairs as measured (each timed alone, so a long
        representative costs what it costs); a cross-encoder's at `mean_seconds`."""
        if self.judge is None:
            return len(pairs) * self.mean_seconds()
        return sum(self.seconds[pair] for pair in pairs)

    def _predict(self, query: str, texts: list[str]) -> list[float]:
        if self.judge is not None:
            return self.judge.score(query, texts)
        if self._ce is None:
            from sentence_transformers import CrossEncoder

            with quiet_loading():
                self._ce = CrossEncoder(str(self.model_dir), device="cpu")
        return self._ce.predict([(query, t) for t in texts], batch_size=64, show_progress_bar=False)

    def get(self, qid: str, pids: list[str]) -> list[float]:
        missing = list(dict.fromkeys(p for p in pids if (qid, p) not in self.score))
        # a judge scores one prompt at a time, so each pair is timed alone; a cross-encoder batches
        for batch in ([[p] for p in missing] if self.judge is not None else [missing] if missing else []):
            t0 = time.perf_counter()
            got = self._predict(self.bench.questions[qid].text, [self.bench.passage_text(p) for p in batch])
            spent = time.perf_counter() - t0
            self.computing += spent
            each = spent / len(batch)
            with open(self.path, "a", encoding="utf-8") as f:
                for p, s in zip(batch, got):
                    self.score[qid, p], self.seconds[qid, p] = float(s), each
                    f.write(json.dumps([qid, p, float(s), each]) + "\n")
        return [self.score[qid, p] for p in pids]


def window_reranker(scores: Scores, first, weight: float):
    """A `Reranker` over the cached scores: `weight` × the cross-encoder's score + (1 − weight)
    × the first stage's, each min-max normalised over the window; counts the pairs it scores."""
    from inferqa.reranking.base import Reranker

    class Interpolated(Reranker):
        name = "cross-encoder"

        def __init__(self):
            self.pairs: list[tuple[str, str]] = []

        def score(self, query, texts):  # never reached: scored by passage id
            raise AssertionError

        def score_passages(self, bench, qid, pids):
            self.pairs += [(qid, p) for p in pids]
            ce = scores.get(qid, list(pids))
            if weight >= 1.0:
                return ce
            fs = [first[qid][p] for p in pids]
            return [weight * a + (1 - weight) * b for a, b in zip(_unit(ce), _unit(fs))]

    return Interpolated()


def _unit(xs: list[float]) -> list[float]:
    lo, hi = min(xs), max(xs)
    return [0.0 if hi == lo else (x - lo) / (hi - lo) for x in xs]


def windowed(run, bench, scores: Scores, window: str, calls: int, weight: float) -> tuple:
    """(run reranked over the window, seconds, pairs scored): the library's own
    `Reranker.rerank_question`, as `inferqa rerank --window W --representative R` runs it (`window`:
    a key of WINDOWS). Seconds: the measured time of everything but the model, plus `Scores.charge`.
    An all-hints representative enters the interpolation at its question's first-stage score."""
    from inferqa.hints import all_hints_passage
    from inferqa.records import question_of
    from inferqa.reranking.run import window_key

    kind, representative = WINDOWS[window]
    group = window_key(bench, kind)
    first = {q: dict(run[q]) for q in run}
    if representative == "all-hints":
        for q in run:
            tops: dict = {}
            for p, s in run[q]:
                tops.setdefault(question_of(p), s)
            first[q].update({all_hints_passage(bench, c): s for c, s in tops.items()})
    rr = window_reranker(scores, first, weight)
    t0, computing = time.perf_counter(), scores.computing
    out = run.derive({q: rr.rerank_question(q, run[q], bench, calls, group, representative) for q in run},
                     tag=f"{run.tag}+ce")
    overhead = time.perf_counter() - t0 - (scores.computing - computing)
    if len(rr.pairs) < calls * len(run) and window != "plain":  # as `inferqa rerank` warns
        log(f"note: {window} window of {calls} made {len(rr.pairs) / len(run):.1f} calls per query: the first "
            f"stage is too shallow to fill it")
    return out, overhead + scores.charge(rr.pairs), len(rr.pairs)


def scored(run, bench) -> dict:
    """Percentages of METRICS on the run's own questions."""
    return hard_protocol.small.scores(run, bench, METRICS)


def load_run(path: Path, bench):
    from inferqa.formats import Run

    return Run.from_file(path, bench=bench)


def own_and_other(run, bench):
    """Per question of `run`: (question, its own full-hint-set passage, the full-hint-set passage
    of the first other question in `run`): as many hints each, so the count tells nothing."""
    from inferqa.experiments.finetune import representatives
    from inferqa.hints import all_hints_passage
    from inferqa.records import question_of

    for q in run:
        other = question_of(representatives(run[q], q, 1)[0])
        yield q, all_hints_passage(bench, q), all_hints_passage(bench, other)


def own_versus_other(scores: Scores, run, bench) -> float:
    """Share of the run's questions whose own passage the cross-encoder scores above the other
    question's (`own_and_other`)."""
    wins = 0
    for q, own, other in own_and_other(run, bench):
        a, b = scores.get(q, [own, other])
        wins += a > b
    return 100 * wins / len(run)


def dev_checks(args, bench, scores: Scores, stages: dict) -> dict:
    """Before any window figure: own-versus-other accuracy, and Hit@1 over a distinct window of
    10 against the first stage's own order, on each first stage's dev run (round 3: Hit@1 over
    each of its distinct windows, for its candidate first stages only)."""
    windows = [w for w in ROUND_WINDOWS[args.round] if w != "plain"]
    inputs = {} if args.round < 3 else {"windows": windows, "candidates": CANDIDATES[args.round]}
    path = args.out / f"dev-checks-{key(model=scores.name, runs=sorted(r['dev'].name for r in stages.values()), **inputs)}.json"
    if path.exists():
        log(f"reused: {path.name}")
        return json.loads(path.read_text())
    out = {}
    for name, runs in stages.items():
        run = load_run(runs["dev"], bench)
        alone = scored(run, bench)
        out[name] = {"own_vs_other": own_versus_other(scores, run, bench), "first_stage_hit@1": alone["hit@1"]}
        if args.round < 3 or name in CANDIDATES[args.round]:
            for w in windows:
                hit = scored(windowed(run, bench, scores, w, 10, 1.0)[0], bench)["hit@1"]
                out[name]["distinct10_hit@1" if w == "question" else f"distinct10_{w}_hit@1"] = hit
        log(f"dev {name}: " + ", ".join(f"{k} {v:.1f}" for k, v in out[name].items()))
    write_json(path, out)
    return out


def bi_encoder_checks(args, bench, model: Path, stages: dict) -> dict:
    """The same own-versus-other pairs scored by fine-tuned dense's cosine: how well the first
    stage itself tells the two full hint sets apart (the reranker's 90 % target read beside it)."""
    path = args.out / f"dev-checks-bi-encoder-{key(model=model.name, runs=sorted(r['dev'].name for r in stages.values()))}.json"
    if path.exists():
        log(f"reused: {path.name}")
        return json.loads(path.read_text())
    from inferqa.models import load_sentence_transformer

    st, out = load_sentence_transformer(str(model), "cpu"), {}
    for name, runs in stages.items():
        run, wins = load_run(runs["dev"], bench), 0
        for q, own, other in own_and_other(run, bench):
            v = st.encode([bench.questions[q].text, bench.passage_text(own), bench.passage_text(other)],
                          normalize_embeddings=True)
            wins += float(v[0] @ v[1]) > float(v[0] @ v[2])
        out[name] = 100 * wins / len(run)
        log(f"dev {name}: fine-tuned dense's own-vs-other {out[name]:.1f} %")
    write_json(path, out)
    return out


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


def fill_scores(bench, scores: Scores, stages: dict, split: str, calls: int, all_hints: bool = False) -> None:
    """The model's scores of `split`'s window candidates (plain and distinct, `calls` each; with
    `all_hints`, also each window question's all-hints passage) into the cache, and nothing else:
    no figure is computed from them here."""
    from inferqa.hints import all_hints_passage, hint_group_key, window_groups
    from inferqa.records import question_of

    group = hint_group_key(bench, "question")
    for name, runs in stages.items():
        run = load_run(runs[split], bench)
        for q in run:
            ranked = run[q]
            reps = [ranked[idx[0]][0] for idx in window_groups(ranked, calls, group)]
            whole = [all_hints_passage(bench, question_of(p)) for p in reps] if all_hints else []
            scores.get(q, list(dict.fromkeys([p for p, _ in ranked[:calls]] + reps + whole)))
        log(f"scores cached: {name} {split}, {calls} calls per window")


# -- phase 3: every choice on dev, written before any test figure ---------------------------------
def dev_grid(args, bench, scores: Scores, stages: dict) -> list[dict]:
    rows = []
    for name, runs in stages.items():
        run = load_run(runs["dev"], bench)
        for window in ROUND_WINDOWS[args.round]:
            for calls in ROUND_CALLS[args.round][0]:
                for weight in WEIGHTS:
                    out, _, pairs = windowed(run, bench, scores, window, calls, weight)
                    rows.append({"first_stage": name, "window": window, "calls": calls, "weight": weight,
                                 "calls_made": pairs / len(run), **scored(out, bench)})
        log(f"dev grid: {name} done")
    return rows


def adaptive_margins(bench, stages: dict) -> dict:
    """Per learned first stage (clue, dense): the adaptive diversification margin (linked
    families, one passage each in the head, only queries whose top family leads by less) with
    the best dev MRR over `tune_margin`'s grid of shares of the dev queries."""
    from inferqa.tune import tune_margin

    out = {}
    for name in ("clue", "dense"):
        if name in stages:
            grid = tune_margin(load_run(stages[name]["dev"], bench), bench, split="dev", per_group=1, by="linked",
                               metric="mrr", measures=list(SUMMARY))
            out[name] = grid.rows[0].margin
    return out


def retrieval_rows(bench, stages: dict, margins: dict, split: str) -> dict:
    """The retrieval comparison made symmetric: each learned first stage alone, fused with
    BM25 (RRF) and adaptively diversified (its dev margin)."""
    from inferqa.diversification import diversify
    from inferqa.retrieve.fusion import fuse

    runs = {name: load_run(r[split], bench) for name, r in stages.items()}
    rows = {}
    for name in ("dense", "clue"):
        if name in runs:
            rows[name] = runs[name]
            rows[f"{name} + BM25 (RRF)"] = fuse([runs[name], runs["bm25"]], "rrf", depth=K)
            rows[f"{name} + adaptive"] = diversify(runs[name], bench, 1, by="linked", margin=margins[name])
    rows["bm25"] = runs["bm25"]
    return rows


def register_comparison(args, bench, scores: Scores, stages: dict, reg: dict) -> dict:
    """Fine-tuned dense's dev choices (its weight per window and N, its adaptive margin), by
    `register`'s rule, written to OUT/registration-dense.json once, before its test figures;
    returned merged into `reg`."""
    path = args.out / "registration-dense.json"
    if path.exists():
        log(f"reused: {path.name} sha256 {hashlib.sha256(path.read_bytes()).hexdigest()}")
        extra = json.loads(path.read_text())
    else:
        dense = {"dense": stages["dense"]}
        tuned = {}
        for r in dev_grid(args, bench, scores, dense):
            k = f"{r['first_stage']}|{r['window']}|{r['calls']}"
            if k not in tuned or mean4(r) > mean4(tuned[k]) + 1e-9:
                tuned[k] = r
        extra = {"written_at": time.strftime("%Y-%m-%d %H:%M:%S"), "weights": {k: r["weight"] for k, r in tuned.items()},
                 "adaptive_margins": adaptive_margins(bench, dense),
                 "dev": {k: {m: r[m] for m in METRICS} for k, r in tuned.items()}}
        write_json(path, extra)
        log(f"registered fine-tuned dense's dev choices: {path} sha256 {hashlib.sha256(path.read_bytes()).hexdigest()}")
    return {**reg, "weights": {**reg["weights"], **extra["weights"]},
            "adaptive_margins": {**reg["adaptive_margins"], **extra["adaptive_margins"]}}


# Rounds 3 and 4 are the third and fourth registered looks at the same test queries: each
# registration says how a win is counted across the looks so far, and its report gives both readings.
def looks(round_: int) -> int:
    """How many registered looks at the 300 test queries round `round_` is (1: no correction
    across rounds; rounds 1 and 2 were registered before the correction was written down)."""
    return round_ if round_ >= 3 else 1


def across_rounds(round_: int) -> str:
    n = looks(round_)
    return (f"the {n} registered rounds share their 300 test queries: a difference of this round counts as "
            f"significant only where its Holm p times {n} (Bonferroni over the rounds) is below 0.05; the "
            "report gives both readings")

# What each later round's registration says had been seen on its test queries.
SEEN = {2: "round 1's test table (report.md) was computed on the same 300 test queries before this file was written",
        3: "round 1's and round 2's test tables (report.md, report-2.md) were computed on the same 300 test queries "
           "before this file was written",
        4: "round 1's, round 2's and round 3's test tables (report.md, report-2.md, report-3.md) were computed on "
           "the same 300 test queries before this file was written; the judge (upr-smollm2-ft) was named as the "
           "next step in docs/windows.md after round 3, from its dev checks only"}


def mean4(row: dict) -> float:
    return sum(row[m] for m in SUMMARY) / len(SUMMARY)


def round_file(args, name: str) -> Path:
    """OUT/`name` for the first registered round; OUT/<stem>-N<suffix> for round N."""
    p = Path(name)
    return args.out / (name if args.round == 1 else f"{p.stem}-{args.round}{p.suffix}")


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


# -- phase 4: the test table ---------------------------------------------------------------------
def paired(a, b, bench) -> dict:
    """Run `b` against run `a` on their questions: per metric the difference, its 95 % CI and
    the randomisation p; Holm over the four summary metrics (one family per comparison)."""
    import numpy as np

    from inferqa.evaluation import compare
    from inferqa.evaluation.significance import adjust_p

    cmp = compare({"a": a, "b": b}, bench, list(METRICS), questions="run")
    cells = cmp.rows[1]["metrics"]
    holm = adjust_p(np.array([cells[m]["p"] for m in SUMMARY]), "holm")
    return {m: {"diff": 100 * cells[m]["diff"], "ci": [100 * x for x in cells[m]["ci"]], "p": cells[m]["p"],
                "holm": float(holm[SUMMARY.index(m)]) if m in SUMMARY else None} for m in METRICS}


SHOWN = {"plain": "plain", "question": "distinct", "all-hints": "distinct (all hints)"}  # a window in the tables


def test_table(args, bench, scores: Scores, stages: dict, reg: dict) -> dict:
    """Each first stage alone and under the reranker over the round's windows (round 3: its
    candidate only, plain and the registered window), each compared as `paired` says."""
    primary = reg["primary"]
    dev_calls, test_calls = ROUND_CALLS[args.round]
    runs = {name: load_run(r["test"], bench) for name, r in stages.items()
            if args.round < 3 or name in CANDIDATES[args.round]}
    windows = ("plain", "question") if args.round < 3 else ("plain", primary["window"])
    rows, cells = [], {}
    for name, run in runs.items():
        rows.append({"row": f"{name} alone", "first_stage": name, "window": None, "calls": 0, "seconds": 0.0,
                     "run": run, **scored(run, bench)})
    for name, run in runs.items():
        for window in windows:
            for calls in (test_calls if name == primary["first_stage"] else dev_calls):
                weight = reg["weights"][f"{name}|{window}|{min(calls, max(dev_calls))}"]
                out, seconds, pairs = windowed(run, bench, scores, window, calls, weight)
                row = {"row": f"{name} + {scores.label}, {SHOWN[window]} {calls}",
                       "first_stage": name, "window": window, "calls": calls, "weight": weight, "pairs": pairs,
                       "seconds": seconds, "run": out, **scored(out, bench)}
                cells[name, window, calls] = row
                rows.append(row)
        log(f"test: {name} done")
    for row in rows:  # distinct against plain at equal calls; plain against the first stage alone
        if row["window"] not in (None, "plain"):
            row["vs"], row["p"] = "plain", paired(cells[row["first_stage"], "plain", row["calls"]]["run"], row["run"], bench)
        elif row["window"] == "plain":
            alone = next(r for r in rows if r["row"] == f"{row['first_stage']} alone")
            row["vs"], row["p"] = "alone", paired(alone["run"], row["run"], bench)
    return {"rows": rows, "cells": cells, "runs": runs}


def table_md(rows: list[dict], queries: int) -> str:
    lines = [f"| row | {' | '.join(LABELS)} | reranker calls | rerank s/query | vs | Holm p ({' / '.join(LABELS[i] for i in (0, 1, 3, 4))}) |",
             "|---|" + "---:|" * (len(LABELS) + 2) + "---|---|"]
    for r in rows:
        ps = " / ".join(fmt_p(r["p"][m]["holm"]) for m in SUMMARY) if "p" in r else "–"
        calls = f"{r['pairs'] / queries:.1f}" if r.get("pairs") is not None else "0"
        lines.append(f"| {r['row']} | " + " | ".join(f"{r[m]:.1f}" for m in METRICS)
                     + f" | {calls} | {r['seconds'] / queries:.2f} | {r.get('vs', '–')} | {ps} |")
    return "\n".join(lines)


def last_line(primary: dict, d: dict, p: dict, model: str) -> str:
    distinct, plain = d["distinct"], d["plain"]
    dominates = all(distinct[m] > plain[m] for m in SUMMARY)
    return (f"window: {primary['first_stage']} + {model}, {primary['calls']} calls, distinct Hit@1 {distinct['hit@1']:.1f}, "
            f"Hit@10 {distinct['hit@10']:.1f}, MRR {distinct['mrr']:.1f}, nDCG@10 {distinct['ndcg_exp@10']:.1f} vs plain "
            f"{plain['hit@1']:.1f}, {plain['hit@10']:.1f}, {plain['mrr']:.1f}, {plain['ndcg_exp@10']:.1f}, Holm p "
            + " / ".join(fmt_p(p[m]["holm"]) for m in SUMMARY) + f", dominates {'yes' if dominates else 'no'}")


def report(args, benches: dict, scores: Scores, stages: dict, reg: dict) -> str:
    bench = benches["hard"]
    primary = reg["primary"]
    got = test_table(args, bench, scores, stages, reg)
    queries = len(bench.split_qids("test"))
    fs, n = primary["first_stage"], primary["calls"]
    distinct, plain = got["cells"][fs, primary["window"], n], got["cells"][fs, "plain", n]
    p = paired(plain["run"], distinct["run"], bench)
    reg_path = round_file(args, "preregistration.json")
    out = [f"# Rerank windows on the hard benchmark ({queries} test queries, {len(bench.questions):,} questions; "
           f"registered round {args.round}, first stages {args.depth:,} deep)", "",
           f"pre-registration: {reg_path} sha256 {hashlib.sha256(reg_path.read_bytes()).hexdigest()}", "",
           table_md(got["rows"], queries), "",
           "Primary (pre-registered): distinct vs plain at equal calls, difference [95 % CI] per metric:", ""]
    out += [f"- {label}: {p[m]['diff']:+.1f} [{p[m]['ci'][0]:+.1f}, {p[m]['ci'][1]:+.1f}], p {fmt_p(p[m]['p'])}"
            + (f", Holm {fmt_p(p[m]['holm'])}" if p[m]['holm'] is not None else "") for label, m in zip(LABELS, METRICS)]
    n_looks = looks(args.round)
    if n_looks > 1:
        out.append(f"- across the {n_looks} rounds (registered): better at Holm p × {n_looks} < 0.05 on "
                   f"{sum(1 for m in SUMMARY if p[m]['diff'] > 0 and n_looks * p[m]['holm'] < 0.05)} of 4")
    if "dense" in got["runs"]:
        out += ["", f"Against fine-tuned dense (the pre-registered pipeline, {fs} + {scores.label} "
                    f"{SHOWN[primary['window']]} {n}):"]
        for name, base in (("fine-tuned dense alone", got["runs"]["dense"]),
                           (f"fine-tuned dense + {scores.label} plain {n}",
                            got["cells"].get(("dense", "plain", n), {}).get("run"))):
            if base is None:
                continue
            q = paired(base, distinct["run"], bench)
            wins = sum(1 for m in SUMMARY if q[m]["holm"] < 0.05 and q[m]["diff"] > 0)
            across = sum(1 for m in SUMMARY if n_looks * q[m]["holm"] < 0.05 and q[m]["diff"] > 0)
            out.append(f"- vs {name}: " + ", ".join(f"{label} {q[m]['diff']:+.1f} (Holm {fmt_p(q[m]['holm'])})"
                       for label, m in zip(LABELS, METRICS) if m in SUMMARY) + f"; better at p < 0.05 on {wins} of 4"
                       + (f" ({across} of 4 at Holm p × {n_looks})" if n_looks > 1 else ""))
    if (fs, "plain", 100) in got["cells"] and (fs, primary["window"], 20) in got["cells"]:
        d20, p100 = got["cells"][fs, primary["window"], 20], got["cells"][fs, "plain", 100]
        out += ["", f"Cost: distinct 20 calls Hit@10 {d20['hit@10']:.1f} vs plain 100 calls {p100['hit@10']:.1f} "
                    f"({'reached' if d20['hit@10'] >= p100['hit@10'] else 'missed'})"]
    if "dense" in got["runs"] and args.round < 3:  # round 3's first stages are round 2's: its table stands
        rows = retrieval_rows(bench, stages, reg["adaptive_margins"], "test")
        base = rows["dense"]
        out += ["", "Retrieval alone, made symmetric (each row against fine-tuned dense; difference [95 % CI], "
                    "Holm over the four summary metrics):", "",
                f"| row | {' | '.join(LABELS)} | Δ vs dense: {' / '.join(LABELS[i] for i in (0, 1, 3, 4))} |",
                "|---|" + "---:|" * len(LABELS) + "---|"]
        for name, run in rows.items():
            sc = scored(run, bench)
            cell = "–"
            if name != "dense":
                q = paired(base, run, bench)
                cell = " / ".join(f"{q[m]['diff']:+.1f} [{q[m]['ci'][0]:+.1f}, {q[m]['ci'][1]:+.1f}] "
                                  f"p {fmt_p(q[m]['holm'])}" for m in SUMMARY)
            out.append(f"| {name} | " + " | ".join(f"{sc[m]:.1f}" for m in METRICS) + f" | {cell} |")
    fast = speed(args, benches["wikihint"], scores, primary["window"], **({} if args.round < 3 else {"calls": 10, "rounds": 1}))
    sq = fast["seconds_per_query"]
    out += ["", f"Speed (`inferqa rerank`, WikiHint's 100 queries, BM25's ranking of all 32,500 passages, "
                f"{fast['calls']} calls ({fast['calls_made']['plain']:,} plain, {fast['calls_made']['distinct']:,} "
                f"distinct), best of {len(fast['rounds']['plain'])} alternated rounds): plain "
                f"{sq['plain']:.3f} s/query, distinct {sq['distinct']:.3f} s/query "
                f"({100 * (sq['distinct'] / sq['plain'] - 1):+.1f} %)"]
    out += ["", last_line(primary, {"distinct": distinct, "plain": plain}, p, scores.label)]
    text = "\n".join(out) + "\n"
    write_text_atomic(round_file(args, "report.md"), text)
    return text


def speed(args, wikihint, scores: Scores, window: str = "question", calls: int = 20, rounds: int = 2) -> dict:
    """Seconds per query of `inferqa rerank` (the library's `rerank_run`, the reranker plugin of
    `scores`, no score cache) over BM25's ranking of all WikiHint passages (32,500), plain against
    the distinct `window` (of WINDOWS) at `calls` calls, alternated `rounds` times; the best round of each."""
    from inferqa.reranking.run import RerankCounts, rerank_run
    from inferqa.retrieve import get_retriever, question_queries

    # deep enough that every query's ranking holds `calls` distinct questions: equal calls
    r = get_retriever("bm25", show_progress=False).ensure_index(wikihint)
    run = r.search(question_queries(wikihint, list(wikihint.questions)), sum(map(len, wikihint.qrels.values())))
    plugin, options = (("cross-encoder", {"model": str(scores.model_dir), "max_length": 128}) if scores.judge is None
                       else scores.recipe)
    got: dict[str, list[float]] = {"plain": [], "distinct": []}
    made = {}
    for _ in range(rounds):
        for shown, (kind, representative) in (("plain", WINDOWS["plain"]), ("distinct", WINDOWS[window])):
            counts = RerankCounts()
            t0 = time.perf_counter()
            rerank_run(run, wikihint, plugin, options=options, depth=calls, window=kind,
                       representative=representative, counts=counts)
            got[shown].append((time.perf_counter() - t0) / len(run))
            made[shown] = counts.scored
    best = {w: min(v) for w, v in got.items()}
    log(f"speed on {wikihint.path.name}: plain {best['plain']:.3f} s/query, distinct {best['distinct']:.3f} s/query "
        f"({100 * (best['distinct'] / best['plain'] - 1):+.1f} %), {calls} calls")
    return {"calls": calls, "queries": len(run), "seconds_per_query": best, "rounds": got, "calls_made": made}


def deeper(args, benches: dict, scores: Scores, reg: dict, depth: int = 10_000) -> str:
    """Post hoc (added after the test table was seen): the primary's first stage retrieved
    `depth` deep, so a distinct window of N holds N questions (at 1,000 the learned clue's
    rankings hold 8.6 on average and its distinct windows made 7.8 to 8.6 calls), against the
    plain window at the same calls, with the registered weights; written to report-deeper.md."""
    from inferqa.retrieve import get_retriever, question_queries

    bench, primary = benches["hard"], reg["primary"]
    model = str(sorted((args.out / "models").glob("clue-*/training.json"))[0].parent)
    r = get_retriever(primary["first_stage"], show_progress=False,
                      **({"model": model} if primary["first_stage"] == "clue" else {})).attach(bench)
    run = r.search(question_queries(bench, bench.split_qids("test")), depth)
    lines = [f"Post hoc: {primary['first_stage']} retrieved {depth:,} deep (test queries), registered weights", "",
             f"| row | {' | '.join(LABELS)} | reranker calls | vs plain: Holm p ({' / '.join(LABELS[i] for i in (0, 1, 3, 4))}) |",
             "|---|" + "---:|" * (len(LABELS) + 1) + "---|"]
    for calls in (10, 20, 50):
        w = {win: reg["weights"][f"{primary['first_stage']}|{win}|{min(calls, max(DEV_CALLS))}"]
             for win in ("plain", "question")}
        plain, _, plain_pairs = windowed(run, bench, scores, "plain", calls, w["plain"])
        distinct, _, pairs = windowed(run, bench, scores, "question", calls, w["question"])
        p = paired(plain, distinct, bench)
        for name, out, n, ps in ((f"plain {calls}", plain, plain_pairs, "–"),
                                 (f"distinct {calls}", distinct, pairs,
                                  " / ".join(fmt_p(p[m]["holm"]) for m in SUMMARY))):
            sc = scored(out, bench)
            lines.append(f"| {name} | " + " | ".join(f"{sc[m]:.1f}" for m in METRICS) + f" | {n / len(run):.1f} | {ps} |")
        log(f"deeper: {calls} calls done")
    text = "\n".join(lines) + "\n"
    write_text_atomic(args.out / "report-deeper.md", text)
    return text


def depth_cost(args, bench, clue: Path, rounds: int = 2) -> dict:
    """Seconds for the learned clue retriever's search of the test queries at 1,000 and 10,000
    passages (alternated, best of `rounds`), and how many questions a ranking then holds: the
    price of filling a distinct window by depth rather than ranking questions directly."""
    from inferqa.records import question_of
    from inferqa.retrieve import get_retriever, question_queries

    r = get_retriever("clue", show_progress=False, model=str(clue)).attach(bench)
    queries = question_queries(bench, bench.split_qids("test"))
    r.search(queries, 10)  # the encoder loaded and the index read once, outside the timing
    got: dict[int, list[float]] = {1000: [], 10_000: []}
    held = {}
    for _ in range(rounds):
        for depth in got:
            t0 = time.perf_counter()
            run = r.search(queries, depth)
            got[depth].append(time.perf_counter() - t0)
            held[depth] = sum(len({question_of(p) for p, _ in run[q]}) for q in run) / len(run)
    for depth, secs in got.items():
        log(f"clue {depth:,} deep: {min(secs):.2f} s for {len(queries)} queries ({1000 * min(secs) / len(queries):.1f} "
            f"ms/query), {held[depth]:.1f} questions per ranking")
    return {"seconds": {d: min(v) for d, v in got.items()}, "questions_per_ranking": held, "queries": len(queries)}


def representatives_first(args, bench, scores: Scores, stages: dict, reg: dict) -> str:
    """Post hoc (after the test table): the registered primary's plain and distinct windows, each
    then reordered with one passage per question ahead of the rest (`inferqa rerank ... --diversify 1
    --diversify-by question`): the order that trades nDCG for Hit@10, against the issue's grouped order."""
    from inferqa.diversification import diversify

    primary = reg["primary"]
    run = load_run(stages[primary["first_stage"]]["test"], bench)
    rows = []  # (label, run, the run it is compared with)
    for window, weight in (("plain", primary["plain_weight"]), (primary["window"], primary["weight"])):
        shown = SHOWN[window]
        out = windowed(run, bench, scores, window, primary["calls"], weight)[0]
        rows += [(shown, out, None), (f"{shown}, one per question first", diversify(out, bench, 1, by="question"), out)]
    name = f"{primary['first_stage']} + {scores.label}, {primary['calls']} calls"
    lines = [f"Post hoc: {name} (registered round {args.round}), then one passage per question first", "",
             f"| row | {' | '.join(LABELS)} | vs the row above it: Holm p ({' / '.join(LABELS[i] for i in (0, 1, 3, 4))}) |",
             "|---|" + "---:|" * len(LABELS) + "---|"]
    for label, out, base in rows:
        ps = "–"
        if base is not None:
            p = paired(base, out, bench)
            ps = " / ".join(fmt_p(p[m]["holm"]) for m in SUMMARY)
        sc = scored(out, bench)
        lines.append(f"| {label} | " + " | ".join(f"{sc[m]:.1f}" for m in METRICS) + f" | {ps} |")
    text = "\n".join(lines) + "\n"
    write_text_atomic(round_file(args, "report-order.md"), text)
    return text


def write_text_atomic(path: Path, text: str) -> None:
    from inferqa.io import atomic_open

    with atomic_open(path) as fh:
        fh.write(text)


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
