"""Rankify / DPR JSON runs: run format `rankify`.

A JSON array, one object per question in the split's dataset order (matched by position,
not by id): `{"question", "answers", "ctxs": [{"id", "score", "has_answer", "text",
"title"}]}`; reranker outputs add `"reranked_ctxs"`, which then is the ranking read. A
file is read as one when its first non-blank byte opens a JSON array.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import InputError
from ..io import atomic_open, read_json
from ..records import question_of
from ..registry import plugin
from ..text import answer_in_text
from .runs import RANKED_KEYS, RANKIFY, Findings, Run, RunFormat, Titles, checked_score

if TYPE_CHECKING:
    from .benchmark import Benchmark


def read_question_array(path: str | os.PathLike) -> list:
    """The JSON array of a Rankify-style file (run, reader output, baseline labels): at least one record."""
    data = read_json(path)
    if not isinstance(data, list):
        raise InputError(f"expected a JSON array of questions, got {type(data).__name__}", file=path)
    if not data:
        raise InputError("run file is empty (a JSON array of no question)", file=path)
    return data


def _check_question_count(found: int, expected: int, split: str | None, path: Any, partial_ok: bool) -> None:
    """A run matched by position holds no more questions than the split, and all of them unless `partial_ok`."""
    if found > expected:
        raise InputError(f"{found} questions in the run but {expected} in split {split!r}: wrong split?",
                         file=path)
    if found < expected and not partial_ok:
        raise InputError(f"{found} questions in the run but {expected} in split {split!r}: a run matched "
                         "by position must cover the whole split (--allow-partial reads the first ones)", file=path)


def _question_text(obj: dict, bench: "Benchmark | None", qid: str, split: str | None, path: Any,
                   rec: str) -> str | None:
    """The record's `question`, if given: a string, and the benchmark's text of question `qid`."""
    text = obj.get("question")
    if text is not None and not isinstance(text, str):
        raise InputError(f"expected a string, got {type(text).__name__}", file=path, record=rec,
                         field="question")
    if bench is not None and isinstance(text, str) and text.strip() != bench.questions[qid].text.strip():
        raise InputError(f"question text differs from {qid}'s in split {split!r}: runs are matched by "
                         "position, so the run and the split must hold the same questions in the same order",
                         file=path, record=rec, field="question")
    return text


def _ranking_of(ctxs: list, key: str | None, qid: str, path: Any, rec: str, findings: Findings,
                allow_duplicates: bool) -> tuple[list[tuple[str, float]], list[Any]]:
    """(the (passage id, score) pairs, their titles) of one record's list `key`; a passage
    without a score scores by its rank."""
    ranked, seen, titles = [], set(), []
    for r, ctx in enumerate(ctxs):
        f = f"{key}[{r}]"
        if not isinstance(ctx, dict) or "id" not in ctx:
            raise InputError("expected an object with an id", file=path, record=rec, field=f"{f}.id")
        if not isinstance(ctx["id"], (str, int)) or isinstance(ctx["id"], bool):
            raise InputError(f"expected a string, got {type(ctx['id']).__name__}", file=path, record=rec,
                             field=f"{f}.id")
        pid = str(ctx["id"])
        score = checked_score(ctx.get("score"), float(len(ctxs) - r), file=path, record=rec, field=f"{f}.score")
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
    return ranked, titles


def _ctxs(bench: "Benchmark", ranked: list[tuple[str, float]], answers: list[str], titles: list | None,
          with_text: bool) -> list[dict[str, Any]]:
    out = []
    for r, (pid, score) in enumerate(ranked):
        pq = question_of(pid)
        text = bench.passage_text(pid) if pq in bench.questions else ""
        ctx = {"id": pid, "score": score, "has_answer": answer_in_text(text, answers)}
        if with_text:
            ctx["text"] = text
        title = titles[r] if titles is not None and r < len(titles) else None
        ctx["title"] = (pid if pq is None else pq) if title is None else title
        out.append(ctx)
    return out


def write_rankify(run: Run, bench: "Benchmark", split: str, path: str | os.PathLike, with_text: bool = True, *,
                  reranked: bool = False, first_stage: Run | None = None, titles: Titles | None = None,
                  first_stage_titles: Titles | None = None) -> int:
    """A Rankify JSON run of `split` in dataset order (a question the run lacks: an empty list), `has_answer`
    by `text.answer_in_text`, `title` as `titles` has it (else the question id). With `reranked` (or a
    `first_stage`), the run is `reranked_ctxs`, `ctxs` the first stage (default: the run). Returns questions."""
    reranked = reranked or first_stage is not None
    qids = bench.split_qids(split)
    with atomic_open(path) as fh:
        fh.write("[\n")
        for i, qid in enumerate(qids):
            q = bench.questions[qid]
            ranked = _ctxs(bench, run.get(qid, []), q.answers, (titles or {}).get(qid), with_text)
            obj = {"question": q.text, "answers": q.answers, "ctxs": ranked}
            if reranked:
                obj["ctxs"] = ranked if first_stage is None else _ctxs(
                    bench, first_stage.get(qid, []), q.answers, (first_stage_titles or {}).get(qid), with_text)
                obj["reranked_ctxs"] = ranked
            fh.write(("" if i == 0 else ",\n") + json.dumps(obj, ensure_ascii=False))
        fh.write("\n]\n")
    return len(qids)


@plugin("run-format", RANKIFY, first_bytes=b"[", help="Rankify/DPR JSON, matched to a split by position")
class RankifyRun(RunFormat):
    def read(self, path: str | os.PathLike, bench: "Benchmark | None", split: str | None, *, findings: Findings,
             allow_partial: bool = False, allow_duplicates: bool = False, ranking: str | None = None,
             by_position: bool = False, texts: bool = False) -> tuple[Run, list[dict[str, Any]]]:
        """(the run, per question `{"qid", "question", "key", "titles"}`). Question i of the file is
        question i of `split` (its text, where given, must match); with `by_position` and no benchmark
        it is named `str(i)`. A record's ranking is `reranked_ctxs`, else `ctxs` (or the list `ranking`
        names); fewer questions than the split need `allow_partial`. `texts`: info keeps passage texts."""
        data = read_question_array(path)
        positional = by_position and bench is None
        if not positional and (bench is None or split is None):
            raise InputError("a Rankify/DPR JSON run is matched to questions by position: give --bench DIR and "
                             "--split SPLIT", file=path)
        qids = [str(i) for i in range(len(data))] if positional else bench.split_qids(split)
        _check_question_count(len(data), len(qids), split, path, allow_partial or not findings.strict)
        keys = RANKED_KEYS if ranking is None else (ranking,)
        run, info = Run(tag=Path(str(path)).stem), []
        for i, obj in enumerate(data):
            qid, rec = qids[i], (str(i) if positional else f"{i} (question {qids[i]})")
            if not isinstance(obj, dict):
                raise InputError(f"expected an object, got {type(obj).__name__}", file=path, record=rec)
            text = _question_text(obj, bench, qid, split, path, rec)
            key = next((k for k in keys if k in obj), None)
            if key is None:
                wanted = f"'{ranking}'" if ranking else "'ctxs' (or 'reranked_ctxs')"
                findings.add("records_without_ranking", qid, InputError(
                    f"no ranking: expected a list {wanted}", file=path, record=rec, field=keys[-1]))
            ctxs = obj.get(key) if key else []
            if not isinstance(ctxs, list):
                raise InputError(f"expected a list of passages, got {type(ctxs).__name__}", file=path, record=rec,
                                 field=key)
            run[qid], titles = _ranking_of(ctxs, key, qid, path, rec, findings, allow_duplicates)
            info.append({"qid": qid, "question": text, "key": key, "titles": titles})
            if texts:
                info[-1]["texts"] = [ctx.get("text") for ctx in ctxs]
        return run, info

    def write(self, run: Run, path: str | os.PathLike, *, tag: str | None = None, bench: "Benchmark | None" = None,
              split: str | None = None, **options: Any) -> None:
        """`write_rankify`'s file; `options` are its keywords (with_text, reranked, first_stage, titles...)."""
        if bench is None or split is None:
            raise InputError("a Rankify JSON run is written in a split's dataset order: give its benchmark and split "
                             "(bench=, split=; inferqa export rankify --bench DIR --split SPLIT)", file=path)
        write_rankify(run, bench, split, path, **options)
