"""Run files: TREC and Rankify/DPR JSON (plain or compressed), and `optimal`, read in one
place and checked against a benchmark.

Rankify / DPR JSON is a JSON array, one object per question in the split's dataset order
(matched by position, not by id): `{"question", "answers", "ctxs": [{"id", "score",
"has_answer", "text", "title"}]}`; reranker outputs add `"reranked_ctxs"`, which then is the
ranking read. `sniff` tells it from TREC by its first non-blank byte.

Every problem is an InputError naming file, record and field. With `strict=False` (the
doctor) the problems a file can still be read past are collected instead, by kind, in the
returned run's `findings`.
"""

from __future__ import annotations

import math
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..io import STDIN, check_file, first_byte, iter_lines, read_json
from ..records import Run, hint_mask, parse_passage_id, split_passage_id

if TYPE_CHECKING:
    from ..benchmark import Benchmark

TREC, RANKIFY = "trec", "rankify"
Titles = dict  # qid -> the `title` of each passage of its ranking, as a Rankify source gave them (None: none)
RANKED_KEYS = ("reranked_ctxs", "ctxs")  # a reranker's output holds both; its own ranking wins
OPTIMAL = "optimal"


class Findings(dict):
    """kind -> examples of the problems met while reading: raised at once when strict."""

    def __init__(self, strict: bool = True):
        super().__init__()
        self.strict = strict

    def add(self, kind: str, example: str, error: InputError) -> None:
        if self.strict:
            raise error
        self.setdefault(kind, []).append(example)


def sniff(path: str | os.PathLike) -> str:
    """`rankify` for a file whose first non-blank byte opens a JSON array, else `trec`."""
    return RANKIFY if first_byte(path) == b"[" else TREC


def read_trec(path: str | os.PathLike, findings: Findings | None = None, *, allow_duplicates: bool = False) -> Run:
    """A TREC run. Duplicate passages of a question (unless `allow_duplicates`: the QUIT
    authors' metrics keep them), unsorted ranks and NaN scores are errors (or findings
    `duplicate_ids`, `unsorted_ranks`, `nan_scores`, the entries kept)."""
    findings = Findings() if findings is None else findings
    run = Run()
    seen: dict[str, set[str]] = {}
    last: dict[str, tuple[int, float]] = {}
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        where = {"file": path, "record": f"line {lineno}"}
        parts = line.split()
        if len(parts) != 6:
            if not line.endswith("\n"):
                raise InputError(f"truncated: the last line ends mid-way ({len(parts)} of 6 columns)", **where)
            raise InputError("expected 6 columns 'qid Q0 pid rank score tag'", **where)
        qid, _, pid, rank_s, score_s, tag = parts
        try:
            rank, score = int(rank_s), float(score_s)
        except ValueError:
            raise InputError("rank must be an integer and score a number", field="rank/score", **where) from None
        example = f"{qid} rank {rank}: {pid}"
        if math.isnan(score):
            findings.add("nan_scores", example, InputError("score is NaN", field="score", **where))
        if pid in seen.setdefault(qid, set()) and not allow_duplicates:
            findings.add("duplicate_ids", example, InputError(f"duplicate passage {pid} for question {qid}",
                                                              field="pid", **where))
        if qid in last and (rank <= last[qid][0] or score > last[qid][1]):
            findings.add("unsorted_ranks", example, InputError(
                f"unsorted run for question {qid}: ranks must increase and scores must not increase",
                field="rank", **where))
        seen[qid].add(pid)
        last[qid] = (rank, score)
        run.setdefault(qid, []).append((pid, score))
        run.tag = tag
    if not run:
        raise InputError("run file is empty", file=path)
    return run


def split_order(bench: "Benchmark | None", split: str | None, path: Any) -> list[str]:
    if bench is None or split is None:
        raise InputError("a Rankify/DPR JSON run is matched to questions by position: give --bench DIR and "
                         "--split SPLIT", file=path)
    return bench.split_qids(split)


def read_rankify(path: str | os.PathLike, bench: "Benchmark | None", split: str | None, strict: bool = True,
                 *, allow_partial: bool = False, allow_duplicates: bool = False, findings: Findings | None = None
                 ) -> tuple[Run, list[dict[str, Any]]]:
    """(the run, per question `{"qid", "question", "key", "titles"}`) of a Rankify JSON file.

    Question i of the file is question i of `split`; its question text, where given, must be
    that question's. A record must hold `ctxs` (or `reranked_ctxs`); a file of fewer
    questions than the split is refused unless `allow_partial`. With `strict=False` duplicate
    passages and records without a ranking are collected in `findings` instead."""
    findings = Findings(strict) if findings is None else findings
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"expected a JSON array of questions, got {type(data).__name__}", file=path)
    if not data:
        raise InputError("run file is empty", file=path)
    qids = split_order(bench, split, path)
    if len(data) > len(qids):
        raise InputError(f"{len(data)} questions in the run but {len(qids)} in split {split!r}: wrong split?",
                         file=path)
    if len(data) < len(qids) and not allow_partial and findings.strict:
        raise InputError(f"{len(data)} questions in the run but {len(qids)} in split {split!r}: a run matched "
                         "by position must cover the whole split (--allow-partial reads the first ones)", file=path)
    run, info = Run(tag=Path(str(path)).stem), []
    for i, obj in enumerate(data):
        qid, rec = qids[i], f"{i} (question {qids[i]})"
        if not isinstance(obj, dict):
            raise InputError(f"expected an object, got {type(obj).__name__}", file=path, record=rec)
        text = obj.get("question")
        if text is not None and not isinstance(text, str):
            raise InputError(f"expected a string, got {type(text).__name__}", file=path, record=rec,
                             field="question")
        if isinstance(text, str) and text.strip() != bench.questions[qid].text.strip():
            raise InputError(f"question text differs from {qid}'s in split {split!r}: runs are matched by "
                             "position, so the run and the split must hold the same questions in the same order",
                             file=path, record=rec, field="question")
        key = next((k for k in RANKED_KEYS if k in obj), None)
        if key is None:
            findings.add("records_without_ranking", qid, InputError(
                "no ranking: expected a list 'ctxs' (or 'reranked_ctxs')", file=path, record=rec, field="ctxs"))
        ctxs = obj.get(key) if key else []
        if not isinstance(ctxs, list):
            raise InputError(f"expected a list of passages, got {type(ctxs).__name__}", file=path, record=rec,
                             field=key)
        ranked, seen, titles = [], set(), []
        for r, ctx in enumerate(ctxs):
            f = f"{key}[{r}]"
            if not isinstance(ctx, dict) or "id" not in ctx:
                raise InputError("expected an object with an id", file=path, record=rec, field=f)
            if not isinstance(ctx["id"], (str, int)) or isinstance(ctx["id"], bool):
                raise InputError(f"expected a string, got {type(ctx['id']).__name__}", file=path, record=rec,
                                 field=f"{f}.id")
            pid = str(ctx["id"])
            raw = ctx.get("score")
            if isinstance(raw, bool) or not isinstance(raw, (int, float, str, type(None))):
                raise InputError(f"score {raw!r} is not a number", file=path, record=rec, field=f"{f}.score")
            try:
                score = float(raw) if raw is not None else float(len(ctxs) - r)
            except (TypeError, ValueError):
                raise InputError(f"score {raw!r} is not a number", file=path, record=rec,
                                 field=f"{f}.score") from None
            if math.isnan(score):
                raise InputError("score is NaN", file=path, record=rec, field=f"{f}.score")
            title = ctx.get("title")
            if title is not None and not isinstance(title, (str, int)):
                raise InputError(f"expected a string, got {type(title).__name__}", file=path, record=rec,
                                 field=f"{f}.title")
            if pid in seen and not allow_duplicates:
                findings.add("duplicate_ids", f"{qid} rank {r + 1}: {pid}", InputError(
                    f"duplicate passage {pid}", file=path, record=rec, field=f"{f}.id"))
            seen.add(pid)
            ranked.append((pid, score))
            titles.append(title)
        run[qid] = ranked
        info.append({"qid": qid, "question": text, "key": key, "titles": titles})
    return run, info


def load_run(path: str | os.PathLike, bench: "Benchmark | None" = None, split: str | None = None, *,
             allow_partial: bool = False, allow_duplicates: bool = False, findings: Findings | None = None) -> Run:
    """A run file as it is (TREC, or Rankify JSON matched to `bench`'s `split`), not checked
    against a benchmark: `open_run` does that. Its `format`, `info` (Rankify: per question
    `titles`) and `findings` are set on the run."""
    if str(path) != STDIN:
        path = check_file(path)
    findings = Findings() if findings is None else findings
    fmt = sniff(path)
    if fmt == RANKIFY:
        run, info = read_rankify(path, bench, split, allow_partial=allow_partial, allow_duplicates=allow_duplicates,
                                 findings=findings)
    else:
        run, info = read_trec(path, findings, allow_duplicates=allow_duplicates), []
    run.format, run.info, run.findings = fmt, info, findings
    return run


def read_run_titles(path: str | os.PathLike, bench: "Benchmark", split: str | None, *,
                    allow_partial: bool = False) -> tuple[Run, Titles, bool]:
    """(run, its passages' titles, whether it is a reranker's output) of a run file (read and
    checked by `open_run`): a Rankify file's own titles and `reranked_ctxs`; a TREC run has
    neither. Passages listed twice are kept (the authors' files may hold them)."""
    run, _ = open_run(path, bench, split, allow_partial=allow_partial, allow_duplicates=True)
    return run, {d["qid"]: d["titles"] for d in run.info}, any(d["key"] == "reranked_ctxs" for d in run.info)


def check_run_ids(run: Run, bench: "Benchmark", file: str | os.PathLike | None = None,
                  findings: Findings | None = None) -> None:
    """Raise InputError on the first passage id that is malformed, of an unknown question, or
    names a hint the question does not keep (the corpus holds every ordering of kept hints).
    Lenient `findings` collect `questions_not_in_benchmark` and `ids_not_in_corpus` instead."""
    findings = Findings() if findings is None else findings
    questions = bench.questions
    n_hints = {qid: len(q.hints) for qid, q in questions.items()}
    one_reading = bench.mask_bits
    seen_ok: set[str] = set()
    for qid, ranked in run.items():
        if qid not in questions:
            findings.add("questions_not_in_benchmark", qid, InputError(
                f"question {qid!r} is not in the benchmark {bench.path} (a run made on another benchmark?)",
                file=file, record=f"{qid} rank 1", field="qid"))
        for rank, (pid, _) in enumerate(ranked, 1):
            if pid in seen_ok:
                continue
            example = f"{qid} rank {rank}: {pid}"
            try:
                pq, order = parse_passage_id(pid)
            except ValueError as exc:
                findings.add("ids_not_in_corpus", example, InputError(
                    f"unknown passage id: {exc}", file=file, record=f"{qid} rank {rank}", field="pid"))
                continue
            n = n_hints.get(pq)
            mask = split_passage_id(pid)[1]
            if n is None or len(mask) != n or (one_reading and mask != hint_mask(order, n, one_reading)):
                findings.add("ids_not_in_corpus", example, InputError(
                    f"unknown passage id {pid!r} (not in the corpus of {bench.path})", file=file,
                    record=f"{qid} rank {rank}", field="pid"))
                continue
            seen_ok.add(pid)


def check_same_questions(runs: list[Run], files: list[Any]) -> None:
    """Refuse runs over different question sets (fusing them would score some questions from
    fewer runs than others), naming the first file that differs from the first run."""
    first = set(runs[0])
    for run, file in zip(runs[1:], files[1:]):
        if set(run) != first:
            extra, missing = sorted(set(run) - first), sorted(first - set(run))
            what = (f"{len(missing)} of its questions missing (e.g. {missing[0]})" if missing else
                    f"{len(extra)} questions {files[0]} lacks (e.g. {extra[0]})")
            raise InputError(f"covers other questions than {files[0]}: {what}; give runs of the same questions "
                             "(or --allow-partial)", file=file, field="qid")


def open_run(run: str | os.PathLike, bench: "Benchmark | None" = None, split: str | None = None, *,
             min_label: int = 1, strict: bool = True, allow_partial: bool = False,
             allow_duplicates: bool = False) -> tuple[Run, list[str]]:
    """(run, question ids to work on) for every command that reads a run: a TREC or Rankify
    JSON file (plain or compressed, `-` for stdin), checked against `bench` (ids, questions),
    or `optimal` for every relevant passage sorted by label.

    With `split`, only the run's questions of that split; none at all is an error, so a run
    of another benchmark or split fails here, before any model loads. With `strict=False`
    (the doctor) problems are collected in the run's `findings` (kind -> examples);
    `allow_duplicates` keeps a passage listed twice (the paper protocol scores it so)."""
    if str(run) == OPTIMAL:
        if bench is None:
            raise InputError("the run 'optimal' is made from a benchmark's labels: give --bench DIR", field="run")
        from .oracles import optimal

        qids = bench.split_qids(split)
        if not qids:
            raise InputError(f"split {split!r} has no question", file=bench.path, field="split")
        out = optimal(bench, qids, min_label=min_label)
        out.format, out.info, out.findings = OPTIMAL, [], Findings(strict)
        return out, qids
    findings = Findings(strict)
    loaded = load_run(run, bench, split, allow_partial=allow_partial, allow_duplicates=allow_duplicates,
                      findings=findings)
    if bench is None:
        return loaded, list(loaded)
    check_run_ids(loaded, bench, run, findings)
    if split is None:
        return loaded, list(loaded)
    wanted = set(bench.split_qids(split))
    qids = [q for q in loaded if q in wanted]
    if not qids and strict:
        raise InputError(f"the run has no question of split {split!r} of {bench.path}", file=run, field="split")
    return loaded, qids
