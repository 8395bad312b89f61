"""What in a run file would make its numbers mean something else: the report of `inferqa doctor`
(`inferqa.evaluation.stage.doctor`).

Findings, each with a count and a few examples: passage ids not in the benchmark's corpus, questions
of the split missing from the run (or with an empty list), duplicate passages of a question,
passages whose `title` (Rankify JSON) names another question than their id does (the mark of ids
shifted by one corpus line, as suspected for the published BM25 run: docs/paper.md), and long runs
of tied scores that leave the order to the tool's tie-breaking. Ties no metric can feel are reported
under `info`, not as problems: the orderings of one hint set (a bag-of-words score cannot tell them
apart, by design) and passages that all carry one label. The run is read by
`inferqa.formats.open_run` with `strict=False`: every problem `evaluate` would refuse is counted (so
a file `evaluate` rejects is never "ok"), rather than the first one raised.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..formats import open_run
from ..parameters import TIE_LENGTH
from ..records import question_of, split_passage_id

if TYPE_CHECKING:
    from ..formats.benchmark import Benchmark

EXAMPLES = 5
# Always in the report; the reader adds unsorted_ranks, nan_scores, records_without_ranking when met.
CHECKS = ("ids_not_in_corpus", "questions_not_in_benchmark", "questions_missing", "duplicate_ids",
          "title_disagrees_with_id", "tied_score_runs")


@dataclass
class Finding:
    count: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, example: str) -> None:
        self.count += 1
        if len(self.examples) < EXAMPLES:
            self.examples.append(example)


def _tie_runs(ranked: list[tuple[str, float]]) -> list[tuple[int, int]]:
    """(start, length) of every maximal stretch of equal consecutive scores."""
    runs, start = [], 0
    for r in range(1, len(ranked) + 1):
        if r == len(ranked) or ranked[r][1] != ranked[r - 1][1]:
            runs.append((start, r - start))
            start = r
    return runs


def _hint_set(pid: str) -> tuple[str, str] | None:
    """(question, mask): the same for every ordering of one hint set; None for a malformed id."""
    try:
        return split_passage_id(pid)[:2]
    except ValueError:
        return None


def diagnose(path: str | os.PathLike, bench: "Benchmark", split: str | None = None, tie_length: int = TIE_LENGTH.default
             ) -> dict[str, Any]:
    """A JSON-ready report: `format`, `questions`, and per check `count` and `examples`."""
    path = Path(path)
    run = open_run(path, bench, split, strict=False)
    fmt, titles = run.format, run.info
    checks = {name: Finding() for name in CHECKS}
    for kind, examples in run.findings.items():  # what the reader and the id check met
        for example in examples:
            checks.setdefault(kind, Finding()).add(example)
    # Ties no metric can feel: a bag-of-words score ties every ordering of one hint set by
    # design, and the order among passages of one label changes no score.
    info = {"tied_orderings": Finding(), "tied_same_label": Finding()}
    found = {**checks, **info}
    qrels = bench.qrels
    longest_tie = 0
    for qid, ranked in run.items():
        for start, length in _tie_runs(ranked):
            longest_tie = max(longest_tie, length)
            if length >= tie_length:
                tied = [pid for pid, _ in ranked[start:start + length]]
                sets = {_hint_set(pid) for pid in tied}
                labels = {qrels.get(qid, {}).get(pid, 0) for pid in tied}
                where = ("tied_orderings" if len(sets) == 1 and None not in sets else
                         "tied_same_label" if len(labels) == 1 else "tied_score_runs")
                found[where].add(f"{qid} from rank {start + 1}: {length} at score {ranked[start][1]}")
    for q in titles:
        for r, (title, (pid, _)) in enumerate(zip(q["titles"], run[q["qid"]])):
            if title is not None and str(title) != (question_of(pid) or pid):
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
              "tie_length": tie_length, "checks": {k: vars(v) for k, v in checks.items()},
              "info": {k: vars(v) for k, v in info.items()}}
    titled = sum(1 for q in titles for t in q["titles"] if t is not None)
    if titled:
        report["titled_passages"] = titled
    report["ok"] = not any(v.count for v in checks.values())
    return report


# ties that are no problem, and why
_TIE_NOTES = {"tied_orderings": "hold the orderings of one hint set (by design: the same words)",
              "tied_same_label": "hold passages of one label (their order changes no score)"}


def report_lines(report: dict[str, Any]) -> list[str]:
    """`diagnose`'s report as `inferqa doctor` prints it: a line per check, then the harmless ties."""
    lines = [f"{report['run']} ({report['format']}): {report['questions']} questions, {report['passages']} "
             f"passages, longest run of tied scores {report['longest_tie']}"]
    for name, c in report["checks"].items():
        mark = f"{c['count']:,}  e.g. {'; '.join(c['examples'])}" if c["count"] else "ok"
        lines.append(f"  {name.replace('_', ' ')}: {mark}")
    for name, what in _TIE_NOTES.items():
        c = report["info"][name]
        if c["count"]:
            lines.append(f"  note: {c['count']:,} runs of tied scores {what}; not a problem. E.g. {c['examples'][0]}")
    return lines
