"""Answerability labels: each labelling LLM answers from each passage with the reader protocol.

Label 2 when at least one labeller's answer is judged correct, else 1 (0 stays for
passages of other questions). Every labeller's cleaned answer is kept beside the label in
labels.jsonl, one row per passage:

  {"pid", "qid", "label": 1|2, "answers": {identity: answer}, "correct": {identity: bool},
   "copied_from": pid or null}

`mode="subsets"` asks about one ordering per hint subset (hints in ranked order) and
copies its label to the subset's other orderings (`copied_from` names the labelled one,
and the copied row's `answers` and `correct` are empty): an approximation, since the order
of the hints can change a reader's answer.

Each labeller asks its passages in trie order (inferqa.reading.reader.reading_order): questions
one after another, each question's passages depth-first over their hints, so a backend
keeping the longest shared prefix evaluates each prefix of hints once. Rows are written in
the qrels' order. With `stop_at_first_correct`, labellers are asked one after another and a
passage is no longer asked once one labeller is right: its label is the same (2 as soon as
one is right), the labellers it skipped are listed in the row's `not_asked` and have no
entry in `answers` and `correct`, and meta.json's labelling record says so.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any, Sequence

from ..formats.bench_write import BenchmarkWrite
from ..errors import InputError
from ..formats import Benchmark, LabelRow, Labels, Qrels
from ..progress import counter
from ..reading.answer_scoring import answer_judge
from ..reading.reader import Reader, reading_order
from ..records import answerability_label, parse_passage_id
from ..parameters import JUDGE_SAMPLES, JUDGE_TEMPERATURE, LABEL_MODE

if TYPE_CHECKING:
    from ..llm.base import LLM

MODES = ("full", "subsets")
NOT_ASKED_NOTE = ("labellers stop at the first correct one: a passage was not asked again once a labeller "
                  "answered it correctly; the labellers it skipped are in its row's not_asked")
SUBSETS_NOTE = ("subsets mode: one ordering per hint subset (hints in ranked order) was labelled; "
                "its label was copied to the subset's other orderings")


def representative(pid: str) -> str:
    """The subset's labelled ordering in subsets mode: its hints in ascending (ranked) order."""
    _, order = parse_passage_id(pid)
    return f"{pid.rsplit('_', 1)[0]}_{''.join(str(i) for i in sorted(order))}"


def judge_for(judge: "LLM | None", samples: int = JUDGE_SAMPLES.default,
              temperature: float = JUDGE_TEMPERATURE.default) -> Any:
    """The answer judge of a labelling run: exact match, or an LLM's majority vote."""
    if judge is None:
        return answer_judge("exact-match")
    return answer_judge("llm", llm=judge, samples=samples, temperature=temperature)


def label_benchmark(bench_dir: str | os.PathLike, labelers: Sequence["LLM"], mode: str = LABEL_MODE.default, *,
                    judge: "LLM | None" = None, judge_samples: int = JUDGE_SAMPLES.default,
                    judge_temperature: float = JUDGE_TEMPERATURE.default,
                    qids: Sequence[str] | None = None, meta: dict | None = None,
                    progress: bool = True, stop_at_first_correct: bool = False) -> dict[str, Any]:
    """Label the passages of `bench_dir` in place: rewrite qrels.tsv, write labels.jsonl.

    The labelling options go to `meta["labelling"]`: into `meta` when given (the builder's
    post-build hook writes it), else into the directory's meta.json. Restarts are cheap:
    every answer comes from the LLM cache. Returns the labelling record.
    """
    _check_label_options(mode, labelers)
    bench = Benchmark(bench_dir)
    qrels = bench.qrels
    wanted = list(qids) if qids is not None else [q for q in bench.questions if q in qrels]
    source = _label_sources(qrels, wanted, mode)
    asked = list(dict.fromkeys(source.values()))
    items = {pid: (bench.questions[parse_passage_id(pid)[0]].text, bench.hints_of(pid)) for pid in asked}
    got = _Answers(asked)
    judged = judge_for(judge, judge_samples, judge_temperature)
    in_trie_order = [asked[i] for i in reading_order([items[pid] for pid in asked])]
    for llm in labelers:
        _ask_labeller(llm, bench, in_trie_order, items, judged, got, stop_at_first_correct, progress)
    rows, new_qrels = _label_rows(source, got, qrels, stop_at_first_correct)
    record = {"labelers": [llm.identity for llm in labelers], "mode": mode,
              **_judge_record(judge, judge_samples, judge_temperature),
              "questions": len(wanted), "passages_asked": len(asked), "passages_labelled": len(source),
              "note": SUBSETS_NOTE if mode == "subsets" else None}
    if stop_at_first_correct:
        record.update(stop_at_first_correct=True, answers_not_asked=sum(map(len, got.not_asked.values())),
                      not_asked_note=NOT_ASKED_NOTE)
    target = meta if meta is not None else dict(bench.meta)
    target["labelling"], target["labelled_by"] = record, "llm"
    with BenchmarkWrite(bench_dir) as write:
        rows.to_file(write.path("labels.jsonl"))
        new_qrels.to_file(write.path("qrels.tsv"))
        write.commit(target)  # the label counts of the new qrels go into meta with them
    return record


def _judge_record(judge: "LLM | None", samples: int, temperature: float) -> dict[str, Any]:
    if judge is None:
        return {"judge": "exact_match", "judge_samples": None, "judge_temperature": None}
    return {"judge": judge.identity, "judge_samples": samples, "judge_temperature": temperature}


def _check_label_options(mode: str, labelers: Sequence["LLM"]) -> None:
    if mode not in MODES:
        raise InputError(f"label mode must be one of {', '.join(MODES)}, not {mode!r}", field="label-mode")
    if not labelers:
        raise InputError("labelling needs at least one --labeler LLM", field="labeler")


def _label_sources(qrels: Qrels, wanted: Sequence[str], mode: str) -> dict[str, str]:
    """pid -> the passage whose answers decide its label: itself, or its subset's representative."""
    source: dict[str, str] = {}
    for qid in wanted:
        for pid in qrels.get(qid, {}):
            source[pid] = pid if mode == "full" else representative(pid)
    return source


class _Answers:
    """Per asked passage: each labeller's answer, whether it is correct, the labellers not asked."""

    def __init__(self, asked: Sequence[str]):
        self.answers: dict[str, dict[str, str]] = {pid: {} for pid in asked}
        self.correct: dict[str, dict[str, bool]] = {pid: {} for pid in asked}
        self.not_asked: dict[str, list[str]] = {pid: [] for pid in asked}


def _ask_labeller(llm: "LLM", bench: Benchmark, in_trie_order: list[str], items: dict, judged: Any, got: _Answers,
                  stop_at_first_correct: bool, progress: bool) -> None:
    """One labeller answers its passages (trie order, `llm.parallel` at a time), each answer judged."""
    reader = Reader(llm)
    todo = []
    for pid in in_trie_order:
        if stop_at_first_correct and any(got.correct[pid].values()):
            got.not_asked[pid].append(llm.identity)
        else:
            todo.append(pid)
    step = max(1, llm.parallel)
    with counter(len(todo), f"labelling with {llm.identity}", "passage", progress) as bar:
        for i in range(0, len(todo), step):
            chunk = todo[i:i + step]
            for pid, out in zip(chunk, reader.read_batch([items[pid] for pid in chunk])):
                q = bench.questions[parse_passage_id(pid)[0]]
                got.answers[pid][llm.identity] = out.answer
                got.correct[pid][llm.identity] = judged.correct(q.text, out.answer, q.answers)
            bar.update(len(chunk))


def _label_rows(source: dict[str, str], got: _Answers, qrels: Qrels,
                stop_at_first_correct: bool) -> tuple[Labels, Qrels]:
    """(labels.jsonl's rows, in the qrels' order, and the relabelled qrels)."""
    label_of = {pid: answerability_label(correct.values()) for pid, correct in got.correct.items()}
    rows = Labels()
    new_qrels = Qrels({qid: dict(docs) for qid, docs in qrels.items()})
    for pid, src in source.items():
        qid, _ = parse_passage_id(pid)
        new_qrels[qid][pid] = label_of[src]
        copied = src != pid  # a copied row holds no answers of its own: they sit on `copied_from`
        extra = {"not_asked": [] if copied else got.not_asked[src]} if stop_at_first_correct else {}
        rows.append(LabelRow(pid=pid, qid=qid, label=label_of[src], answers={} if copied else got.answers[src],
                             correct={} if copied else got.correct[src], copied_from=src if copied else None,
                             extra=extra))
    return rows, new_qrels
