"""How many hints each leak judge flags on the shared WikiHint and TriviaHG files.

    python benchmarks/leak_judges_report.py [--threshold 0.85] [--llm smollm2 --llm-sample 60]
                                            [--limit N] [--no-llm] [--json out.json]

Every hint is checked against its question's gold answers by the string rule and the
embedding judge (MiniLM; flag counts also shown at other thresholds). The LLM judge is
slow on CPU, so it sees a random sample of hints (its flag rate is reported on that
sample) plus the embedding judge's semantic-only flags (to show where the two agree).
Prints a table with absolute counts and rates, timings, and a sample of disagreements.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import time
from dataclasses import dataclass
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SHARED = Path(os.environ.get("INFERQA_SHARED", Path(__file__).resolve().parents[2] / "shared"))
DATASETS = {"WikiHint test": SHARED / "data" / "wikihint" / "test.json",
            "TriviaHG validation": SHARED / "data" / "triviahg" / "validation.json"}
THRESHOLDS = (0.75, 0.8, 0.85, 0.9)


@dataclass
class Item:
    qid: str
    hint_index: int
    hint: str
    answers: list[str]
    string: bool = False
    score: float = 0.0
    span: str = ""
    llm: bool | None = None


def load_items(path: Path, limit: int | None) -> tuple[int, list[Item]]:
    from inferqa.data import load_questions

    questions = load_questions(path, "auto")[:limit]
    items = [Item(q.id, i, h.text, list(q.answers)) for q in questions for i, h in enumerate(q.hints)]
    return len(questions), items


def run_string(items: list[Item]) -> float:
    from inferqa.construct.leakage import StringLeakJudge

    judge, t = StringLeakJudge(), time.perf_counter()
    for it in items:
        it.string = judge.leaks(it.hint, it.answers)
    return time.perf_counter() - t


def run_embedding(items: list[Item], judge, chunk: int = 200) -> float:
    from rich.progress import track

    t = time.perf_counter()
    for start in track(range(0, len(items), chunk), description="embedding judge", transient=True):
        part = items[start:start + chunk]
        for it, (score, span) in zip(part, judge.scores_many([(it.hint, it.answers) for it in part])):
            it.score, it.span = score, span
    return time.perf_counter() - t


def run_llm(items: list[Item], judge) -> float:
    from rich.progress import track

    t = time.perf_counter()
    for start in track(range(0, len(items), 8), description="LLM judge", transient=True):
        part = items[start:start + 8]
        for it, flag in zip(part, judge.leaks_many([(it.hint, it.answers) for it in part])):
            it.llm = flag
    return time.perf_counter() - t


def pct(n: int, d: int) -> str:
    return f"{n:,} ({100 * n / d:.1f}%)" if d else "-"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--threshold", type=float, default=None, help="embedding threshold (default: the library's)")
    ap.add_argument("--llm", default="smollm2", help="LLM spec of the LLM judge")
    ap.add_argument("--llm-sample", type=int, default=60, help="random hints per dataset for the LLM judge")
    ap.add_argument("--no-llm", action="store_true", help="skip the LLM judge")
    ap.add_argument("--limit", type=int, default=None, help="first N questions of each dataset")
    ap.add_argument("--examples", type=int, default=8, help="disagreements shown per dataset")
    ap.add_argument("--json", type=Path, default=None, help="also write the per-hint results here")
    args = ap.parse_args(argv)
    from requirements import require

    require("leak_judges_report.py", ("sentence_transformers", "llama_cpp"), "the embedding and llm judges")

    from rich.console import Console
    from rich.table import Table

    from inferqa.construct.leak_judges import leak_judge
    from inferqa.construct.leakage import StringLeakJudge
    from inferqa.parameters import LEAK_THRESHOLD

    console = Console(width=max(Console().width, 200))
    th = args.threshold or LEAK_THRESHOLD.default
    emb = leak_judge("embedding", model="minilm", threshold=th)
    llm_leak_judge = None
    if not args.no_llm:
        try:
            from inferqa.llm import load_llm

            llm_leak_judge = leak_judge("llm", llm=load_llm(args.llm), string_judge=StringLeakJudge())
        except Exception as exc:  # a missing backend only removes one column
            console.print(f"[yellow]LLM judge skipped: {exc}[/]")

    table = Table(title=f"Hints flagged as leaking (embedding threshold {th})")
    for col in ("dataset", "questions", "hints", "string", f"embedding ≥{th}", "semantic only",
                *[f"emb ≥{t}" for t in THRESHOLDS if t != th], "LLM sample", "LLM flags", "ms/hint s|e|l"):
        table.add_column(col, justify="left" if col == "dataset" else "right")
    dump: dict[str, list[dict]] = {}
    notes: list[str] = []
    for name, path in DATASETS.items():
        if not path.exists():
            console.print(f"[yellow]{name}: {path} is absent; skipped[/]")
            continue
        nq, items = load_items(path, args.limit)
        t_str = run_string(items)
        t_emb = run_embedding(items, emb)
        flagged = [it for it in items if it.string or it.score >= th]
        semantic = [it for it in items if not it.string and it.score >= th]
        llm_cells, t_llm_ms = ["-", "-"], "-"
        if llm_leak_judge is not None:
            rng = random.Random(0)
            sample = rng.sample(items, min(args.llm_sample, len(items)))
            extra = [it for it in sorted(semantic, key=lambda it: -it.score) if all(it is not s for s in sample)][:args.llm_sample // 2]
            t_llm = run_llm(sample + extra, llm_leak_judge)
            t_llm_ms = f"{1000 * t_llm / max(1, len(sample) + len(extra)):.0f}"
            llm_cells = [f"{len(sample)}", pct(sum(bool(it.llm) for it in sample), len(sample))]
            agree = sum(bool(it.llm) for it in semantic if it.llm is not None)
            asked = sum(it.llm is not None for it in semantic)
            notes.append(f"{name}: the LLM also says yes to {agree} of the {asked} semantic-only flags it was shown; "
                         f"{llm_leak_judge.unparsed} replies so far had neither yes nor no "
                         f"({llm_leak_judge.scored} of them decided by log P(Yes) vs log P(No))")
        table.add_row(name, f"{nq:,}", f"{len(items):,}", pct(sum(it.string for it in items), len(items)),
                      pct(len(flagged), len(items)), pct(len(semantic), len(items)),
                      *[pct(sum(it.string or it.score >= t for it in items), len(items)) for t in THRESHOLDS if t != th],
                      *llm_cells,
                      f"{1000 * t_str / len(items):.2f}|{1000 * t_emb / len(items):.0f}|{t_llm_ms}")
        dump[name] = [it.__dict__ for it in items]

        console.rule(f"{name}: sample of disagreements")
        console.print("[bold]embedding flags, string rule does not[/] (highest cosine first)")
        for it in sorted(semantic, key=lambda it: -it.score)[:args.examples]:
            llm = "" if it.llm is None else f" llm={'yes' if it.llm else 'no'}"
            console.print(f"  {it.score:.3f} [{it.span}] ~ {it.answers[0]!r}{llm} | {it.hint[:110]}", markup=False)
        near = sorted((it for it in items if not it.string and it.score < th), key=lambda it: -it.score)
        console.print("[bold]just below the threshold[/] (not flagged)")
        for it in near[:args.examples // 2]:
            console.print(f"  {it.score:.3f} [{it.span}] ~ {it.answers[0]!r} | {it.hint[:110]}", markup=False)
        llm_only = [it for it in items if it.llm and not it.string and it.score < th]
        if llm_only:
            console.print("[bold]LLM flags, embedding judge does not[/]")
            for it in llm_only[:args.examples // 2]:
                console.print(f"  {it.score:.3f} ~ {it.answers[0]!r} | {it.hint[:110]}", markup=False)
    console.print(table)
    for line in notes:
        console.print(line, markup=False)
    if args.json:
        args.json.write_text(json.dumps(dump, ensure_ascii=False, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
