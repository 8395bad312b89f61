"""`explorer.html`: one self-contained page to study a benchmark's runs and answers question by question:
its data embedded as one JSON block, rendered by inline JavaScript (what it shows: docs/experiments.md).

Compactness, so that a 1,728-question experiment stays a few MB:
- a passage is its hint order (`"302"`) for its own question, `"Q:302"` for another
  question's (Q indexes a shared table of questions and their hints), then its label;
- runs are cut to their top `depth`; the rank of the first label ≥ 1 and label-2 passage
  of the whole run is kept, so hit/miss filters work at any cut;
- a reader row is one string `answer;em;context;raw;passages`: answers and raw replies
  index a per-question table of distinct strings, the context is hint references merged by
  the reader's own context strategies (one mechanism), passages are `=` when they are the run's top k;
- labellers' answers (`copied;labeller.string±,...`) only for the passages shown, and other
  questions' hints only where a shown passage holds them.
"""

from __future__ import annotations

import json
import os
from importlib import resources
from pathlib import Path
from typing import Any, Iterable, Sequence

from ..formats.benchmark import Benchmark
from ..formats import Labels, Run, resolve_copies
from ..io import atomic_open
from ..reading.context import strategies
from ..parameters import EXPLORER_DEPTH
from ..records import parse_passage_id

DEPTH = EXPLORER_DEPTH.default


class _Refs:
    """Question table: evaluated questions first, others (foreign passages) appended on use."""

    def __init__(self, qids: Sequence[str]):
        self.index = {q: i for i, q in enumerate(qids)}
        self.foreign: list[str] = []
        self.used: dict[str, set[int]] = {}  # foreign question -> the hints its shown passages hold

    def qref(self, qid: str) -> int:
        if qid not in self.index:
            self.index[qid] = len(self.index)
            self.foreign.append(qid)
        return self.index[qid]

    def passage(self, pid: str, own: int) -> str:
        """`"302"` for the own question's passage, `"Q:302"` for question Q's."""
        qid, order = parse_passage_id(pid)
        perm = "".join(map(str, order))
        q = self.qref(qid)
        if q != own:
            self.used.setdefault(qid, set()).update(order)
        return perm if q == own else f"{q}:{perm}"

    def hint_refs(self, pid: str, own: int) -> list[str]:
        qid, order = parse_passage_id(pid)
        q = self.qref(qid)
        if q != own:
            self.used.setdefault(qid, set()).update(order)
        return [str(i) if q == own else f"{q}:{i}" for i in order]


class _Strings:
    """Per-question table of distinct strings (answers repeat across settings and passages)."""

    def __init__(self, n: int):
        self.tables: list[dict[str, int]] = [{} for _ in range(n)]

    def __call__(self, i: int, text: str) -> int:
        return self.tables[i].setdefault(text, len(self.tables[i]))

    def lists(self) -> list[list[str]]:
        return [list(t) for t in self.tables]


def _first_ranks(ranked: list[tuple[str, float]], labels: dict[str, int]) -> list[int | None]:
    """1-based rank of the first passage with label >= 1 and of the first with label 2."""
    return [next((rank for rank, (pid, _) in enumerate(ranked, 1) if labels.get(pid, 0) >= least), None)
            for least in (1, 2)]


def explorer_data(bench: Benchmark, runs: Sequence[tuple[str, str, Run]],
                  answers: Sequence[tuple[str, str | None, Iterable[dict]]], *, qids: Sequence[str] | None = None,
                  depth: int = DEPTH, alpha: float | None = None, beta: float | None = None,
                  title: str = "") -> dict[str, Any]:
    """The page's data. `runs`: (name, setting, Run); `answers`: (name, run name or None, rows); `qids`:
    by default those of both, in benchmark order; `alpha`, `beta`: union_freq's (None: its defaults)."""
    runs = list(runs)
    answers = [(name, run, list(rows)) for name, run, rows in answers]
    qids = _shown_questions(bench, runs, answers, qids)
    refs, strings = _Refs(qids), _Strings(len(qids))
    # in this order: each step appends the foreign questions and strings it meets to the shared tables
    out_runs, top_of = _encode_runs(runs, qids, refs, bench.qrels, depth)
    out_sets = _encode_answers(answers, qids, refs, strings, top_of, {"alpha": alpha, "beta": beta})
    labellers, lab_out = _encode_labels(bench, runs, answers, qids, refs, strings, depth)
    split_of = {q: name for name, ids in bench.splits.items() for q in ids}
    return {"title": title or f"inferqa explorer: {bench.path.name}", "depth": depth,
            "questions": [_question_entry(bench, q, split_of) for q in qids], "foreign": _foreign_entries(bench, refs),
            "runs": out_runs, "sets": out_sets, "labellers": labellers, "labels": lab_out,
            "strings": strings.lists(), "label_note": (bench.meta.get("labelling") or {}).get("note") or ""}


def _shown_questions(bench: Benchmark, runs: list, answers: list, qids: Sequence[str] | None) -> list[str]:
    """`qids` (default: those of the runs and answers, in benchmark order) that the benchmark holds."""
    if qids is None:
        seen = {q for _, _, r in runs for q in r} | {row["qid"] for _, _, rows in answers for row in rows}
        qids = [q for q in bench.questions if q in seen]
    return [q for q in qids if q in bench.questions]


def _encode_runs(runs: list, qids: list[str], refs: _Refs, qrels: dict, depth: int) -> tuple[list[dict], dict]:
    """(each run's page entry: its top `depth` passages and first-hit ranks per question,
    run name -> each question's ranked passage ids)."""
    out_runs = []
    top_of: dict[str, list[list[str]]] = {}
    for name, setting, run in runs:
        top, first = [], []
        for i, qid in enumerate(qids):
            ranked = run.get(qid, [])
            labels = qrels.get(qid, {})
            top.append(" ".join(f"{refs.passage(pid, i)}.{labels.get(pid, 0)}" for pid, _ in ranked[:depth]))
            first.append(_first_ranks(ranked, labels))
        top_of[name] = [[pid for pid, _ in run.get(qid, [])] for qid in qids]
        out_runs.append({"name": name, "setting": setting, "top": top, "first": first})
    return out_runs, top_of


def _encode_answers(answers: list, qids: list[str], refs: _Refs, strings: _Strings, top_of: dict,
                    options: dict[str, Any]) -> list[dict]:
    """Each answer set's page entry: per question, one row string per (strategy, k) setting."""
    merges = strategies([r["strategy"] for _, _, rows in answers for r in rows], options, strict=False)
    out_sets = []
    for name, run_name, rows in answers:
        keys = list(dict.fromkeys(f"{r['strategy']}|{int(r['k'])}" for r in rows))
        table: list[list[str | None] | None] = [None] * len(qids)
        for r in rows:
            i = refs.index.get(r["qid"])
            if i is None or i >= len(qids):
                continue
            own_top = top_of.get(run_name, [[]] * len(qids))[i] if run_name else None
            row = _reader_row(r, i, refs, strings, merges[r["strategy"]], own_top)
            table[i] = table[i] or [None] * len(keys)
            table[i][keys.index(f"{r['strategy']}|{int(r['k'])}")] = row
        out_sets.append({"name": name, "run": run_name, "keys": keys, "rows": table})
    return out_sets


def _reader_row(r: dict, i: int, refs: _Refs, strings: _Strings, merge: Any, own_top: list[str] | None) -> str:
    """`answer;em;context;raw;passages` of one answer row of question `i` (see the module's docstring)."""
    pids = list(r.get("pids") or [])
    # in this order: the refs and strings tables grow as they are met
    context = "|".join(line.replace(" ", ",") for line in merge([refs.hint_refs(p, i) for p in pids]))
    own = own_top is not None and own_top[:len(pids)] == pids
    passages = "=" if own else " ".join(refs.passage(p, i) for p in pids)
    pred, raw = str(r.get("prediction", "")), str(r.get("raw") or "")
    raw_ref = "" if raw.strip() == pred.strip() else str(strings(i, raw))
    return f"{strings(i, pred)};{int(bool(r.get('em')))};{context};{raw_ref};{passages}"


def _encode_labels(bench: Benchmark, runs: list, answers: list, qids: list[str], refs: _Refs, strings: _Strings,
                   depth: int) -> tuple[list[str], list[dict | None]]:
    """(the labellers, per question: shown passage -> `copied;labeller.string±,...`, None for none)."""
    label_rows = Labels.of(bench, qids)  # only the rows of these questions are shown
    labels = label_rows.by_pid()
    source = resolve_copies(label_rows)  # the row whose answers decide each passage
    labellers: list[str] = []
    lab_out: list[dict | None] = []
    read_pids: dict[str, set[str]] = {}
    if labels:
        for _, _, rows in answers:
            for r in rows:
                read_pids.setdefault(r["qid"], set()).update(r.get("pids") or [])
    for i, qid in enumerate(qids):
        shown = {pid for _, _, run in runs for pid, _ in run.get(qid, [])[:depth]} | read_pids.get(qid, set())
        entry = {}
        for pid in sorted(shown):  # a set: sorted, so the page does not depend on the hash seed
            row = labels.get(pid)
            if row is None or row.qid != qid:
                continue
            src = source[pid]
            given = []
            for who, ans in src.answers.items():
                if who not in labellers:
                    labellers.append(who)
                given.append(f"{labellers.index(who)}.{strings(i, str(ans))}{'+' if src.correct.get(who) else '-'}")
            copied = refs.passage(row.copied_from, i) if row.copied_from else ""
            entry[refs.passage(pid, i)] = f"{copied};{','.join(given)}"
        lab_out.append(entry or None)
    return labellers, lab_out


def _question_entry(bench: Benchmark, qid: str, split_of: dict[str, str]) -> dict:
    q = bench.questions[qid]
    return {"id": q.id, "text": q.text, "answers": q.answers, "type": q.metadata.get("type") or "",
            "difficulty": str(q.metadata.get("difficulty") or ""), "split": split_of.get(qid, ""),
            "hints": [h.text for h in q.hints], "conv": [h.convergence for h in q.hints]}


def _foreign_entries(bench: Benchmark, refs: _Refs) -> list[dict]:
    """The other questions whose passages were shown (appended while encoding runs, answers and
    labels), each with only the hints those passages hold."""
    return [{"id": qid, "hints": {str(h): bench.questions[qid].hints[h].text
                                  for h in sorted(refs.used.get(qid, ())) if h < len(bench.questions[qid].hints)}}
            if qid in bench.questions else {"id": qid, "hints": {}} for qid in refs.foreign]


def render_explorer(data: dict[str, Any]) -> str:
    template = resources.files(__package__).joinpath("explorer_template.html").read_text(encoding="utf-8")
    blob = json.dumps(data, ensure_ascii=False, separators=(",", ":")).replace("<", "\\u003c")
    from html import escape
    return template.replace("__TITLE__", escape(data["title"])).replace("__DATA__", blob)


def write_explorer(data: dict[str, Any], path: str | os.PathLike) -> Path:
    with atomic_open(path) as fh:
        fh.write(render_explorer(data))
    return Path(path)


def experiment_explorer(bench: Benchmark, results, stage_runs: dict[str, Run], stage_answers: dict[str, list[dict]],
                        qids: Sequence[str], path: str | os.PathLike, *, depth: int = DEPTH) -> Path:
    """The explorer of one `inferqa run`: every ranked run and reader setting of `results`;
    `stage_runs` and `stage_answers` (stage -> run, rows) as the runner read them."""
    from .results import run_label

    by_key = {(r.setting, r.retriever, r.reranker): run_label(r) for r in results.ranking}
    runs = [(run_label(r), r.setting, stage_runs[r.stage]) for r in results.ranking]
    answers, seen = [], set()
    for r in results.reader:
        if r.stage in seen:
            continue
        seen.add(r.stage)
        run_name = by_key.get((r.setting, r.retriever, r.reranker))
        answers.append((f"{run_name} / {r.reader}", run_name, stage_answers[r.stage]))
    opts = (results.config.get("readers") or [{}])[0].get("options") or {}
    return write_explorer(explorer_data(bench, runs, answers, qids=qids, depth=depth,
                                        alpha=opts.get("alpha"), beta=opts.get("beta"),
                                        title=f"inferqa explorer: {results.name}"), path)
