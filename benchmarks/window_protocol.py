"""The rerank-window protocol's constants and small shared helpers (`rerank_window.py`'s):
the metrics, the dev and test calls, the windows and candidates of each registered round, how a
round counts its looks at the test queries, its file names, and reading, scoring and writing runs.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import inferential_hard as hard_protocol  # noqa: E402

K = 1000
CALLS = (10, 20, 50, 100)
FIRST_STAGES = ("bm25", "clue", "dense")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


# -- the metrics, calls, windows and candidates of each registered round ----------------------------
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


def scored(run, bench) -> dict:
    """Percentages of METRICS on the run's own questions."""
    return hard_protocol.small.scores(run, bench, METRICS)


def load_run(path: Path, bench):
    from inferqa.formats import Run

    return Run.from_file(path, bench=bench)


def write_text_atomic(path: Path, text: str) -> None:
    from inferqa.io import atomic_open

    with atomic_open(path) as fh:
        fh.write(text)
