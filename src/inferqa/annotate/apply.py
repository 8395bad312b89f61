"""`import_sheet`: apply a person's verdicts to a labelled benchmark, all or nothing.

Each reviewed answer's verdict becomes `correct` of every labeller output that normalises to
it in labels.jsonl, and a passage's label becomes 2 if any of its answers is then correct,
else 1 (qrels.tsv follows). Accepted answers not yet gold become aliases (rejecting one an
earlier round added removes it); new aliases go through the leak judge against the
question's hints, then the leak policy (`leaks`). The round is recorded in meta.json; a
sheet whose verdicts are all in place already changes nothing and writes nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from ..formats.bench_write import BenchmarkWrite
from ..formats.benchmark import Benchmark, write_questions
from ..errors import InputError
from ..io import sha256_file, write_json
from ..records import LABEL_ANSWERABLE
from ..formats import Qrels
from ..text import normalize_answer
from .candidates import collect_candidates
from ..formats.corpus import iter_corpus, write_corpus
from ..formats.labels import LabelRow, Labels, answer_key, resolve_copies
from .leaks import FLAG, DropPlan, LeakFinding, find_leaks, leak_action_of, plan_drops
from ..formats.sheets import ACCEPT, REJECT, SKIP, SheetVerdict, read_sheet
from .state import META_KEY, VerificationState


@dataclass
class ImportSummary:
    accepted: int = 0
    rejected: int = 0
    skipped: int = 0
    to_answerable: int = 0  # passages relabelled 1 -> 2
    to_partial: int = 0     # passages relabelled 2 -> 1
    aliases_added: list[tuple[str, str]] = field(default_factory=list)
    aliases_removed: list[tuple[str, str]] = field(default_factory=list)
    leaks: list[LeakFinding] = field(default_factory=list)
    leak_action: str = FLAG
    passages_dropped: int = 0
    questions_dropped: list[str] = field(default_factory=list)
    files_written: list[str] = field(default_factory=list)
    changed: bool = False

    def lines(self) -> list[str]:
        out = [f"verdicts: {self.accepted} accepted, {self.rejected} rejected, {self.skipped} skipped"]
        if not self.changed:
            return out + ["no changes: every verdict in the sheet is already applied"]
        out.append(f"labels: {self.to_answerable} passages 1 -> 2, {self.to_partial} passages 2 -> 1")
        out += [f"alias added: {qid}: {alias!r}" for qid, alias in self.aliases_added]
        out += [f"alias removed: {qid}: {alias!r}" for qid, alias in self.aliases_removed]
        out += [f"leak ({self.leak_action}): {f.qid} hint {f.hint} reveals {f.alias!r}" for f in self.leaks]
        if self.passages_dropped or self.questions_dropped:
            out.append(f"dropped {self.passages_dropped} passages and {len(self.questions_dropped)} questions"
                       + (f" ({', '.join(self.questions_dropped)})" if self.questions_dropped else ""))
        out.append(f"rewrote {', '.join(self.files_written)}" if self.files_written else "dry run: nothing written")
        return out


def _validate(verdicts: list[SheetVerdict], bench: Benchmark, rows: list[LabelRow], state: VerificationState,
              sheet: Path) -> tuple[dict[tuple[str, str], SheetVerdict], int]:
    """(qid, answer key) -> verdict for every row that decides something; raises on the first bad row."""
    cands = collect_candidates(rows, bench.questions, state)
    dropped = state.dropped_qids()
    seen: dict[tuple[str, str], int] = {}
    out: dict[tuple[str, str], SheetVerdict] = {}
    gone = 0
    for v in verdicts:
        where = {"file": sheet, "record": f"row {v.row}"}
        if v.qid in dropped:
            gone += 1  # dropped for a leak by an earlier round: nothing left to label
            continue
        if v.qid not in bench.questions:
            raise InputError(f"unknown question {v.qid!r}", field="qid", **where)
        key = answer_key(v.answer)
        if key is None or ((v.qid, key) not in cands and key not in state.verdicts.get(v.qid, {})):
            raise InputError(f"unknown answer {v.answer!r}: no labeller gave it for question {v.qid}",
                             field="answer", **where)
        if (v.qid, key) in cands and cands[(v.qid, key)].is_gold:
            raise InputError(f"answer {v.answer!r} is a gold answer of question {v.qid}; it is not reviewed",
                             field="answer", **where)
        if (v.qid, key) in seen:
            raise InputError(f"answer {v.answer!r} of question {v.qid} is also on row {seen[(v.qid, key)]}",
                             field="answer", **where)
        seen[(v.qid, key)] = v.row
        out[(v.qid, key)] = v
    return out, gone


def _relabel(rows: list[LabelRow], decided: dict[tuple[str, str], bool], summary: ImportSummary) -> bool:
    """Set `correct` from the verdicts, then labels from `correct`; True if anything changed."""
    touched: set[str] = set()
    for r in rows:
        for who, ans in r.answers.items():
            verdict = decided.get((r.qid, answer_key(ans) or ""))
            if verdict is not None and r.correct.get(who) is not verdict:
                r.correct[who] = verdict
                touched.add(r.pid)
    source = resolve_copies(rows)
    for r in rows:
        if source[r.pid].pid not in touched:
            continue
        new = source[r.pid].relabel()
        if new != r.label:
            if new == LABEL_ANSWERABLE:
                summary.to_answerable += 1
            else:
                summary.to_partial += 1
            r.label = new
    return bool(touched)


def _update_aliases(raw_questions: dict[str, dict], decided: dict[tuple[str, str], SheetVerdict],
                    state: VerificationState, summary: ImportSummary) -> None:
    for (qid, key), v in decided.items():
        q = raw_questions[qid]
        if v.verdict == ACCEPT and key not in {normalize_answer(a) for a in q["answers"]}:
            q["answers"].append(v.answer)
            state.added_aliases.setdefault(qid, []).append(v.answer)
            summary.aliases_added.append((qid, v.answer))
        elif v.verdict == REJECT and key in state.added_keys(qid):
            for alias in [a for a in state.added_aliases[qid] if normalize_answer(a) == key]:
                state.added_aliases[qid].remove(alias)
                q["answers"] = [a for a in q["answers"] if normalize_answer(a) != key]
                summary.aliases_removed.append((qid, alias))
            if not state.added_aliases[qid]:
                del state.added_aliases[qid]


def import_sheet(bench_dir: str | os.PathLike, sheet: str | os.PathLike, *, annotator: str,
                 fmt: str | None = None, leak_judge: Any = None, leak_action: str | None = None,
                 now: datetime | None = None, dry_run: bool = False) -> ImportSummary:
    """Apply the verdicts of `sheet` to the benchmark in `bench_dir`; see the module doc.

    `dry_run` validates the sheet and computes the summary without writing anything."""
    if not annotator.strip():
        raise InputError("the annotator's name is empty", field="annotator")
    sheet = Path(sheet)
    bench = Benchmark(bench_dir)
    meta = dict(bench.meta)
    state = VerificationState.from_meta(meta)
    verdicts = read_sheet(sheet, fmt)  # the file given is checked first
    rows = Labels.from_file(bench.path / "labels.jsonl")
    decided, gone = _validate(verdicts, bench, rows, state, sheet)

    summary = ImportSummary(leak_action=leak_action_of(meta, leak_action))
    summary.skipped = gone + sum(v.verdict == SKIP for v in decided.values())
    decided = {k: v for k, v in decided.items() if v.verdict != SKIP}
    summary.accepted = sum(v.verdict == ACCEPT for v in decided.values())
    summary.rejected = len(decided) - summary.accepted

    labels_changed = _relabel(rows, {k: v.verdict == ACCEPT for k, v in decided.items()}, summary)
    raw_questions = bench.question_objects()
    _update_aliases(raw_questions, decided, state, summary)

    summary.leaks = find_leaks(raw_questions, summary.aliases_added, state, leak_judge)
    drops = plan_drops(summary.leaks, summary.leak_action, raw_questions, state)
    summary.questions_dropped = sorted(drops.questions)

    new_verdicts = {qid: dict(d) for qid, d in state.verdicts.items()}
    for (qid, key), v in decided.items():
        new_verdicts.setdefault(qid, {})[key] = v.verdict
    summary.changed = bool(labels_changed or summary.aliases_added or summary.aliases_removed
                           or summary.leaks or new_verdicts != state.verdicts)
    if not summary.changed or dry_run:
        return summary
    state.verdicts = new_verdicts
    qrels = _relabelled_qrels(bench, rows, drops)
    summary.passages_dropped = sum(len(d) for d in bench.qrels.values()) - sum(len(d) for d in qrels.values())

    when = (now or datetime.now(timezone.utc)).isoformat(timespec="seconds")
    state.rounds.append({
        "annotator": annotator.strip(), "timestamp": when, "sheet": sheet.name,
        "sheet_sha256": sha256_file(sheet), "accepted": summary.accepted, "rejected": summary.rejected,
        "skipped": summary.skipped, "labels_1_to_2": summary.to_answerable, "labels_2_to_1": summary.to_partial,
        "aliases_added": len(summary.aliases_added), "aliases_removed": len(summary.aliases_removed),
        "leaks": len(summary.leaks), "leak_action": summary.leak_action,
        "leak_judge": getattr(leak_judge, "name", "string"), "passages_dropped": summary.passages_dropped,
        "questions_dropped": summary.questions_dropped,
    })
    meta[META_KEY] = state.to_dict()

    summary.files_written = _write_round(bench, meta, rows, qrels, raw_questions, drops)
    return summary


def _relabelled_qrels(bench: Benchmark, rows: list[LabelRow], drops: DropPlan) -> Qrels:
    """The benchmark's qrels with the labels of `rows`, without the passages `drops` drops."""
    new_labels = {r.pid: r.label for r in rows}
    qrels = Qrels()
    for qid, docs in bench.qrels.items():
        docs = {pid: new_labels.get(pid, lab) for pid, lab in docs.items() if not drops.drops(pid)}
        if docs:
            qrels[qid] = docs
    return qrels


def _write_round(bench: Benchmark, meta: dict, rows: list[LabelRow], qrels: Qrels, raw_questions: dict,
                 drops: DropPlan) -> list[str]:
    """The round's labels, qrels, questions (and corpus and splits when it drops any) with
    meta, as one benchmark write; returns the names of the files written."""
    with BenchmarkWrite(bench.path) as staged:
        Labels(r for r in rows if not drops.drops(r.pid)).to_file(staged.path("labels.jsonl"))
        qrels.to_file(staged.path("qrels.tsv"))
        write_questions(staged.path("questions.jsonl"),
                        (q for qid, q in raw_questions.items() if qid not in drops.questions))
        corpus = bench.path / "corpus.jsonl"
        if drops.any and corpus.exists():
            write_corpus(staged.path("corpus.jsonl"), (p for p in iter_corpus(corpus) if not drops.drops(p.id)))
        splits = None
        if drops.questions and (bench.path / "splits.json").exists():
            splits = {s: [q for q in qs if q not in drops.questions] for s, qs in bench.splits.items()}
            write_json(staged.path("splits.json"), splits)
        _update_counts(meta, raw_questions, drops.questions, qrels, splits)
        staged.commit(meta)
        return staged.names


def _update_counts(meta: dict, raw_questions: dict, dropped: set[str], qrels: Qrels,
                   splits: dict[str, list[str]] | None) -> None:
    """Keep the builder's totals in meta.json true after this round (the label counts are the commit's)."""
    counts = meta.get("counts")
    if isinstance(counts, dict):
        if "questions" in counts:
            counts["questions"] = sum(1 for q in raw_questions if q not in dropped)
        if "passages" in counts:
            counts["passages"] = sum(len(d) for d in qrels.values())
    if splits is not None and isinstance(meta.get("splits"), dict):
        meta["splits"] = {name: len(ids) for name, ids in splits.items()}
