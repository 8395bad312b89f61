"""`inferqa doctor`: what in a run file would make its numbers mean something else.

Findings, each with a count and a few examples: passage ids not in the benchmark's corpus,
questions of the split missing from the run (or with an empty list), duplicate passages of
a question, passages whose `title` (Rankify JSON) names another question than their id does
(the id shift suspected in the published BM25 run, ../shared/QUIT-FORMATS.md), and long
runs of tied scores that leave the order to the tool's tie-breaking. The run is read
leniently, so every problem is counted rather than the first one raised.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..records import Run, parse_passage_id, split_passage_id
from ..runfiles import RANKIFY, read_rankify, sniff

if TYPE_CHECKING:
    from ..benchmark import Benchmark

EXAMPLES = 5


@dataclass
class Finding:
    count: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, example: str) -> None:
        self.count += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(example)


def _read_trec_leniently(path: Path) -> Run:
    run = Run(tag=path.stem)
    with open(path, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, 1):
            parts = line.split()
            if not parts:
                continue
            if len(parts) != 6:
                raise InputError("expected 6 columns 'qid Q0 pid rank score tag'", file=path, record=f"line {lineno}")
            try:
                score = float(parts[4])
            except ValueError:
                raise InputError("score is not a number", file=path, record=f"line {lineno}", field="score") from None
            run.setdefault(parts[0], []).append((parts[2], score))
    return run


def diagnose(path: str | os.PathLike, bench: "Benchmark", split: str | None = None, tie_length: int = 10
             ) -> dict[str, Any]:
    """A JSON-ready report: `format`, `questions`, and per check `count` and `examples`."""
    path = Path(path)
    if not path.exists():
        raise InputError("file not found", file=path)
    fmt = sniff(path)
    info: list[dict] = []
    if fmt == RANKIFY:
        run, info = read_rankify(path, bench, split, strict=False)
    else:
        run = _read_trec_leniently(path)
    questions = bench.questions
    n_hints = {qid: len(q.hints) for qid, q in questions.items()}
    checks = {name: Finding() for name in ("ids_not_in_corpus", "questions_not_in_benchmark",
                                            "questions_missing", "duplicate_ids", "title_disagrees_with_id",
                                            "tied_score_runs")}
    longest_tie = 0
    for qid, ranked in run.items():
        if qid not in questions:
            checks["questions_not_in_benchmark"].add(qid)
        seen: set[str] = set()
        tie = 1
        for r, (pid, score) in enumerate(ranked):
            try:
                pq, order = parse_passage_id(pid)
                ok = pq in n_hints and len(split_passage_id(pid)[1]) == n_hints[pq]
            except ValueError:
                ok = False
            if not ok:
                checks["ids_not_in_corpus"].add(f"{qid} rank {r + 1}: {pid}")
            if pid in seen:
                checks["duplicate_ids"].add(f"{qid} rank {r + 1}: {pid}")
            seen.add(pid)
            tie = tie + 1 if r and score == ranked[r - 1][1] else 1
            if tie == tie_length:
                checks["tied_score_runs"].add(f"{qid} from rank {r + 2 - tie_length}: score {score}")
            longest_tie = max(longest_tie, tie)
    for q in info:
        for r, (title, (pid, _)) in enumerate(zip(q["titles"], run[q["qid"]])):
            if title is not None and str(title) != pid.rsplit("_", 2)[0]:
                checks["title_disagrees_with_id"].add(f"{q['qid']} rank {r + 1}: id {pid}, title {title}")
    if split is not None:
        wanted = bench.split_qids(split)
    else:  # the splits the run touches: a test-only run is not short of the train questions
        touched = [name for name, ids in bench.splits.items() if not set(ids).isdisjoint(run)]
        wanted = [q for name in touched for q in bench.splits[name]]
    for qid in wanted:
        if not run.get(qid):
            checks["questions_missing"].add(qid)
    report = {"run": str(path), "format": fmt, "split": split, "questions": len(run),
              "passages": sum(len(r) for r in run.values()), "longest_tie": longest_tie,
              "tie_length": tie_length, "checks": {k: vars(v) for k, v in checks.items()}}
    titled = sum(1 for q in info for t in q["titles"] if t is not None)
    if titled:
        report["titled_passages"] = titled
    report["ok"] = not any(v.count for v in checks.values())
    return report
