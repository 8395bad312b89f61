"""One row of each kind of the authors' tables, from released files (rules: QUIT-FORMATS).

Ranking metrics are the library's (`inferqa.evaluation.metrics`): the QUIT tables under the
paper protocol; the MS MARCO / Wikipedia comparison tables under ours, since those scripts
divide precision@k by k and count every question, with or without a relevant passage, as
ours does. A run is matched to its questions by position.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from ..errors import InputError
from ..evaluation import evaluate
from ..evaluation.metrics import per_query_scores
from ..evaluation.stored_metrics import HINT_COUNTS, Judged, hint_shares
from ..defaults import MIN_LABEL
from ..formats import Qrels, Run
from ..records import parse_passage_id
from .release import INDEX, Question, ReaderRecord


def _run(ranked: Sequence[Sequence[str]]) -> Run:
    return Run({str(i): [(pid, float(-r)) for r, pid in enumerate(ids)] for i, ids in enumerate(ranked)})


def _qrels(labels: Sequence[dict[str, int]]) -> Qrels:
    return Qrels({str(i): dict(lab) for i, lab in enumerate(labels)})


def check_positions(ranked: Sequence, n_questions: int, file: Path, against: str = INDEX) -> None:
    if len(ranked) > n_questions:
        raise InputError(f"{len(ranked)} questions, but {against} has {n_questions}: runs are matched to "
                         "questions by position", file=file, record=n_questions)


def ranking_row(index: Sequence[Question], ranked: Sequence[Sequence[str]], columns: Sequence[str],
                file: Path, min_label: int = MIN_LABEL.default) -> list[float]:
    """The authors' QUIT metrics of one run: its i-th list is judged by the labels of the i-th
    question of index/test/retriever.jsonl (passages of other questions: label 0)."""
    check_positions(ranked, len(index), file)
    labels = [index[i].labels() for i in range(len(ranked))]
    means = evaluate(_run(ranked), _qrels(labels), columns, min_label=min_label, protocol="paper")
    return [means[c] for c in columns]


def baseline_row(baseline: Sequence[dict[str, int]], ranked: Sequence[Sequence[str]], columns: Sequence[str],
                 file: Path, key: str) -> list[float]:
    """The comparison-corpus metrics: labels from baselines/baseline.json, where every passage
    a run holds must be listed (their scripts look each one up)."""
    check_positions(ranked, len(baseline), file, "baselines/baseline.json")
    for i, ids in enumerate(ranked):
        for r, pid in enumerate(ids):
            if pid not in baseline[i]:
                raise InputError(f"passage {pid} has no label in baselines/baseline.json", file=file, record=i,
                                 field=f"{key}[{r}].id")
    names = [_gain_exp(c) for c in columns]
    _, scores = per_query_scores(_run(ranked), _qrels(baseline[: len(ranked)]), names, min_label=1)
    return [round(float(scores[c].mean()), 4) for c in names]


def _gain_exp(column: str) -> str:
    """The authors' ndcg@k column gains 2^label - 1: inferqa's ndcg_exp@k (the paper protocol's
    nDCG does so by default, inferqa's is linear)."""
    return column.replace("ndcg@", "ndcg_exp@", 1) if column.startswith("ndcg@") else column


def em_row(file: Path, records: Sequence[ReaderRecord], readers: Sequence[str], method: str) -> list[float]:
    """Per reader: share of questions whose stored answer for `method` (un_1 ... uf_5) is, as
    stored, one of the question's answers."""
    return [round(sum(rec.stored_answer(model, method, file, i) in rec.answers
                      for i, rec in enumerate(records)) / len(records), 4) for model in readers]


def judged(index: Sequence[Question], model: str, file: str) -> Judged:
    """index/test/retriever.jsonl as `evaluate.stored_metrics` computes from it: the i-th question is
    `str(i)`, its passages' labels and stored answers (`rag_answers`) as released; every
    passage must hold an answer string of `model`."""
    for n, q in enumerate(index):
        for j, ctx in enumerate(q.contexts):
            if not isinstance(ctx.reader_answers.get(model), str):
                raise InputError("no answer string", file=file, record=f"line {n + 1}",
                                 field=f"contexts[{j}].rag_answers.{model}")
    qids = [str(n) for n in range(len(index))]
    return Judged(qids, {str(n): q.answers for n, q in enumerate(index)},
                  {str(n): q.labels() for n, q in enumerate(index)},
                  {ctx.id: ctx.reader_answers for q in index for ctx in q.contexts})


def checked_pid(pid: str, file: Path | str, record: object, field: str) -> str:
    """`pid` if it is qid_mask_perm with a mask naming the perm's hints (`parse_passage_id`), else InputError."""
    try:
        parse_passage_id(pid)
    except ValueError:
        raise InputError(f"passage id {pid!r} is not qid_mask_perm with a mask naming the perm's hints",
                         file=file, record=record, field=field) from None
    return pid


def shares(pids: Sequence[str]) -> list[float]:
    """Share of 0..5 hints among the correctly answered passages `pids` (all 0 without any)."""
    by_count = hint_shares(pids)
    return [round(by_count.get(h, 0.0), 4) for h in HINT_COUNTS]


def oracle_right(index: Sequence[Question], model: str, file: str) -> list[str]:
    """Every relevant passage of index/test/retriever.jsonl whose stored answer is right."""
    where = {ctx.id: (n, j) for n, q in enumerate(index) for j, ctx in enumerate(q.contexts)}
    return [checked_pid(pid, file, f"line {where[pid][0] + 1}", f"contexts[{where[pid][1]}].id")
            for pid in judged(index, model, file).right_passages(model)]


def top1_right(rag_file: Path, records: Sequence[ReaderRecord], run_file: Path,
               ranked: Sequence[Sequence[str]], key: str, model: str) -> list[str]:
    """The run's top passage of every question the reader answered right from the top-1
    union (un_1 of its rag.json), as their hint-contribution scripts count it."""
    check_positions(records, len(ranked), rag_file, str(run_file))
    out = []
    for i, rec in enumerate(records):
        if rec.stored_answer(model, "un_1", rag_file, i) in rec.answers:
            if not ranked[i]:
                raise InputError("empty ranking", file=run_file, record=i, field=key)
            out.append(checked_pid(ranked[i][0], run_file, i, f"{key}[0].id"))
    return out
