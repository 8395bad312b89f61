"""Run files read in one place and checked against a benchmark: every format of the
`run-format` registry kind (built in: `trec`, `rankify`; plain or compressed) and `optimal`.

A file's format is the one whose declared `suffixes` hold its name's ending (before
.gz/.zst/.zsd), else the one whose `first_bytes` hold its first non-blank byte (Rankify
JSON: `[`), else TREC. `Run.save` picks its writer by the same suffixes.

Every problem is an InputError naming file, record and field. With `strict=False` (the
doctor) the problems a file can still be read past are collected instead, by kind, in the
returned run's `findings`.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from .. import registry
from ..errors import InputError
from ..io import STDIN, check_file, first_byte
from ..records import MIN_LABEL, Run, hint_mask, parse_passage_id, run_format_by_name, split_passage_id

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


class RunFormat:
    """A way of storing runs, registered with `@plugin("run-format", NAME, ...)` on a
    subclass; `suffixes=(".ext", ...)` and `first_bytes=b"..."` declare which files are its."""

    def read(self, path: str | os.PathLike, bench: "Benchmark | None", split: str | None, *, findings: Findings,
             allow_partial: bool = False, allow_duplicates: bool = False) -> tuple[Run, list[dict[str, Any]]]:
        """(the run, per question information kept as the run's `info`). A problem the file can
        be read past goes to `findings.add` (raised there when strict)."""
        raise InputError(f"run format {self.name!r} cannot be read", file=path)

    def write(self, run: Run, path: str | os.PathLike, *, tag: str | None = None, **context: Any) -> None:
        """`run` at `path`, atomically (`io.atomic_open`); `context` as the format needs (Rankify: bench, split)."""
        raise InputError(f"run format {self.name!r} cannot be written", file=path)


def sniff(path: str | os.PathLike) -> str:
    """The run format of a file (see the module's docstring): `rankify`, `trec` or a plugin's."""
    return run_format_by_name(path) or registry.claimed("run-format", "first_bytes", first_byte(path)) or TREC


def split_order(bench: "Benchmark | None", split: str | None, path: Any) -> list[str]:
    if bench is None or split is None:
        raise InputError("a Rankify/DPR JSON run is matched to questions by position: give --bench DIR and "
                         "--split SPLIT", file=path)
    return bench.split_qids(split)


def load_run(path: str | os.PathLike, bench: "Benchmark | None" = None, split: str | None = None, *,
             allow_partial: bool = False, allow_duplicates: bool = False, findings: Findings | None = None) -> Run:
    """A run file as it is (TREC, Rankify JSON matched to `bench`'s `split`, or another run
    format's), not checked against a benchmark: `open_run` does that. Its `format`, `info`
    (Rankify: per question `titles`) and `findings` are set on the run."""
    if str(path) != STDIN:
        path = check_file(path)
    findings = Findings() if findings is None else findings
    fmt = sniff(path)
    run, info = registry.create("run-format", fmt).read(path, bench, split, findings=findings,
                                                         allow_partial=allow_partial, allow_duplicates=allow_duplicates)
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
             min_label: int = MIN_LABEL.default, strict: bool = True, allow_partial: bool = False,
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
