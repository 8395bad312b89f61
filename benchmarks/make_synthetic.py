"""A synthetic benchmark of QUIT's size, made from real hint texts.

QUIT itself (2,405,325 passages) lives on a model hub these machines cannot reach, so the
scale benchmarks run on a stand-in of the same shape: 7,401 questions × 325 passages,
split 4,811 / 862 / 1,728 like QUIT, built by `inferqa.construct.build_benchmark` from the real
WikiHint and TriviaHG hints in ../shared/data.

Synthetic question i copies real question i mod R (text and answers); its first copy keeps
that question's own top 5 hints, later copies take 4 of its hints at random plus hints of
other questions, so passage texts differ between copies like they do between QUIT
questions. Hints that leak the answer are dropped first (the build's string rule), so the
build keeps every question. Labels (the real ones come from three labelling LLMs) are
drawn per passage with a seeded RNG: label 2 more often the more hints a passage holds,
about 11% overall (QUIT: 289,660 of 2.4M, 12%); label 1 otherwise.

    python benchmarks/make_synthetic.py                      # full size → runs/synthetic-quit
    python benchmarks/make_synthetic.py --questions 500 --out runs/syn-500

Other benchmark scripts call `ensure_synthetic(out, questions)`, which reuses a matching
directory and builds one otherwise.
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sys
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("INFERQA_SHARED", REPO.parent / "shared"))
SOURCES = (SHARED / "data" / "wikihint" / "test.json", SHARED / "data" / "triviahg" / "validation.json")
QUIT_QUESTIONS = 7_401
QUIT_SPLIT = (4_811, 862, 1_728)
HINTS = 5
# P(label 2) by number of hints in the passage (1..5): ≈ 11.4% of all 325 passages.
LABEL2_RATE = {1: 0.02, 2: 0.04, 3: 0.08, 4: 0.12, 5: 0.14}
DEFAULT_OUT = REPO / "runs" / "synthetic-quit"


class NoLeakJudge:
    """Hints were filtered with the string rule before synthesis; nothing is left to judge."""

    name = "none (pre-filtered with the string rule)"

    def leaks(self, hint: str, answers) -> bool:
        return False


def split_counts(n: int) -> tuple[int, int, int]:
    """QUIT's 4,811 / 862 / 1,728 for 7,401 questions, scaled for other sizes."""
    if n == QUIT_QUESTIONS:
        return QUIT_SPLIT
    test = max(1, round(n * QUIT_SPLIT[2] / QUIT_QUESTIONS))
    dev = round(n * QUIT_SPLIT[1] / QUIT_QUESTIONS)
    return n - dev - test, dev, test


def real_questions(sources=SOURCES):
    """Real questions with their leaking hints dropped."""
    from inferqa.construct import StringLeakJudge, apply_leak_policy
    from inferqa.data import load_questions
    from inferqa.errors import InputError

    missing = [str(p) for p in sources if not Path(p).exists()]
    if missing:
        raise InputError(f"shared hint data is absent: {', '.join(missing)} (set INFERQA_SHARED)")
    questions = [q for path in sources for q in load_questions(path)]
    kept = apply_leak_policy(questions, StringLeakJudge(), "drop-hint").questions
    return [q for q in kept if q.hints]


def synthetic_questions(n: int, seed: int = 13, sources=SOURCES):
    """`n` questions with exactly 5 hints each (see the module docstring)."""
    from inferqa.records import Hint

    real = real_questions(sources)
    rng = random.Random(seed)
    pool = [h.text for q in real for h in q.hints]
    out = []
    for i in range(n):
        base = real[i % len(real)]
        own = [h.text for h in base.hints]
        if i < len(real) and len(own) >= HINTS:
            texts = own[:HINTS]
        else:
            texts = rng.sample(own, min(len(own), HINTS - 1))
            while len(texts) < HINTS:
                t = rng.choice(pool)
                if t not in texts:
                    texts.append(t)
        out.append(replace(base, id=f"syn{i:05d}", hints=[Hint(text=t, source=base.id) for t in texts],
                           metadata={"synthetic_from": base.id}))
    return out


def relabel(qrels_path: Path, seed: int) -> dict[str, int]:
    """Rewrite qrels.tsv (streamed) with the seeded synthetic labels; return label counts."""
    from inferqa.io import iter_lines
    from inferqa.records import parse_passage_id

    rng = random.Random(seed)
    counts = {"1": 0, "2": 0}
    tmp = qrels_path.with_suffix(".tmp")
    with open(tmp, "w", encoding="utf-8") as dst:
        for _, line in iter_lines(qrels_path):
            qid, _, pid, _ = line.split()
            label = 2 if rng.random() < LABEL2_RATE[len(parse_passage_id(pid)[1])] else 1
            counts[str(label)] += 1
            dst.write(f"{qid} 0 {pid} {label}\n")
    os.replace(tmp, qrels_path)
    return counts


def make_synthetic(out: str | os.PathLike = DEFAULT_OUT, questions: int = QUIT_QUESTIONS, seed: int = 13,
                   progress: bool = True) -> dict:
    """Build the synthetic benchmark into `out` (atomically); return its meta.json dict."""
    from inferqa.construct import build_benchmark

    qs = synthetic_questions(questions, seed)

    def post_build(tmp: Path, meta: dict) -> None:
        meta["labels"] = relabel(tmp / "qrels.tsv", seed)
        meta["labelled_by"] = "synthetic"
        meta["synthetic"] = {"questions": questions, "seed": seed, "sources": [str(p) for p in SOURCES]}

    return build_benchmark(qs, out, top_k=HINTS, leak_judge=NoLeakJudge(), split=split_counts(questions),
                           seed=seed, strict=True, sources=SOURCES, post_build=post_build,
                           show_progress=progress)


def ensure_synthetic(out: str | os.PathLike = DEFAULT_OUT, questions: int | None = None, seed: int = 13,
                     progress: bool = True) -> Path:
    """Reuse `out` when it holds a benchmark (of `questions` questions and this seed, when
    `questions` is given); build the synthetic one (QUIT size by default) otherwise."""
    from inferqa.errors import InputError
    from inferqa.io import read_json

    out = Path(out)
    meta_file = out / "meta.json"
    if meta_file.exists():
        if questions is None:
            return out
        have = read_json(meta_file).get("synthetic", {})
        if have.get("questions") == questions and have.get("seed") == seed:
            return out
        if not have:
            raise InputError("holds a benchmark that is not this synthetic one; choose another --out", file=out)
    make_synthetic(out, questions or QUIT_QUESTIONS, seed, progress)
    return out


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=str(DEFAULT_OUT), help="benchmark directory to write")
    ap.add_argument("--questions", type=int, default=QUIT_QUESTIONS, help="number of questions (QUIT: 7,401)")
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--force", action="store_true", help="rebuild even if --out already matches")
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    if args.force:
        meta = make_synthetic(args.out, args.questions, args.seed)
    else:
        meta = read_json_meta(ensure_synthetic(args.out, args.questions, args.seed))
    secs = time.perf_counter() - t0
    c = meta["counts"]
    print("| synthetic benchmark | questions | passages | splits | label 2 | seconds | peak RSS MB |")
    print("|---|---|---|---|---|---|---|")
    splits = "/".join(str(v) for v in meta["splits"].values())
    l2 = meta["labels"].get("2", 0)
    print(f"| {args.out} | {c['questions']:,} | {c['passages']:,} | {splits} | "
          f"{l2:,} ({l2 / c['passages']:.1%}) | {secs:.1f} | {peak_rss_mb():.0f} |")
    return 0


def read_json_meta(path: Path) -> dict:
    from inferqa.io import read_json

    return read_json(Path(path) / "meta.json")


if __name__ == "__main__":
    sys.exit(main())
