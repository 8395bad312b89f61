"""`build_benchmark`: questions → a QUIT-style benchmark directory, written atomically.

Steps: leakage policy → hint ranking (top k) → passages (all orderings of all subsets) →
labels (1 for every passage of a question, or the QUIT release's own labels) → splits.
corpus.jsonl and qrels.tsv are streamed question by question, so memory does not grow
with the corpus.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable, Sequence

from ..data.quit import ANSWERS_KEY, LABEL_MATCHES, LABELLERS, LABELS_KEY, MASK_BITS_KEY, labeller_correct
from ..errors import InputError
from ..formats.bench_write import BenchmarkWrite, refuse_existing
from ..formats.benchmark import questions_writer
from ..formats.corpus import corpus_writer
from ..formats.labels import LabelRow, Labels
from ..formats.qrels import Qrels
from ..io import sha256_file, write_json
from ..progress import track
from ..records import ID_SCHEME, LABEL_PARTIAL, LEFT_TO_RIGHT, Question, answerability_label
from ..parameters import LABEL_MATCH, LEAK_POLICY, SEED, BUILD_SPLIT as SPLIT, TOP_K
from ..version import __version__
from .leakage import LeakJudge, StringLeakJudge, apply_leak_policy
from .passages import n_orders, order_table
from .ranking import select_top
from .splits import SourceRoles, make_splits, parse_split

PostBuild = Callable[[Path, dict], None]


def _source_entry(src: Any) -> dict:
    entry = dict(src) if isinstance(src, dict) else {"path": str(src)}
    path = Path(entry["path"])
    if path.is_file():
        entry.setdefault("sha256", sha256_file(path))
        entry["path"] = str(path)
    return entry


def _release_row(sel: "Selected", pid: str, source_order: Sequence[int], match: str) -> tuple[int, LabelRow | None]:
    """A release passage's label and its labels.jsonl row (None where the release lists no answers)."""
    perm = "".join(map(str, source_order))
    explicit = (sel.release_labels or {}).get(perm)
    answers = (sel.release_answers or {}).get(perm)
    if answers is None:
        return (LABEL_PARTIAL if explicit is None else explicit), None
    correct = labeller_correct(answers, sel.question.answers, match)
    label = int(explicit) if explicit is not None else answerability_label(correct.values())
    if label not in (1, 2):
        return label, None
    return label, LabelRow(pid=pid, qid=sel.question.id, label=label, correct=correct,
                           answers={m: a for m, a in answers.items() if m in LABELLERS},
                           reader_answers={m: a for m, a in answers.items() if m not in LABELLERS})


@dataclass(frozen=True)
class Selected:
    """A question cut to its top-k hints; `source_indices[i]` is kept hint i's index in the source."""

    question: Question
    source_indices: list[int]
    release_labels: dict[str, int] | None  # QUIT release: explicit labels keyed by perm of source hint indices
    release_answers: dict[str, dict[str, str]] | None  # QUIT release: model -> answer, keyed the same way
    mask_bits: str  # bit order of the passage ids' masks (the release file's own, else left-to-right)


def select_questions(questions: Sequence[Question], top_k: int, leak_policy: str, leak_judge: LeakJudge,
                     strict: bool) -> tuple[list[Selected], dict]:
    """Apply the leakage policy, then ranking; return the kept questions and counts for meta.json."""
    leak = apply_leak_policy(questions, leak_judge, leak_policy)
    selected, skipped = [], []
    for q in leak.questions:
        top = select_top(q.hints, top_k)
        if top is None:
            if strict:
                raise InputError(f"only {len(q.hints)} usable hints, need {top_k} (--top-k); "
                                 "drop --strict to skip such questions", record=q.id, field="hints")
            skipped.append(q.id)
            continue
        kept = leak.kept_indices[q.id]
        labels, answers = q.metadata.get(LABELS_KEY), q.metadata.get(ANSWERS_KEY)
        if labels is not None or answers is not None:
            top = sorted(top)  # the release's own hint order, so its passage ids come out verbatim
        source_idx = [kept[j] for j in top]
        meta = {k: v for k, v in q.metadata.items() if k not in (LABELS_KEY, ANSWERS_KEY, MASK_BITS_KEY)}
        meta["source_hint_indices"] = source_idx  # provenance: kept hint i is source hint source_idx[i]
        selected.append(Selected(replace(q, hints=[q.hints[j] for j in top], metadata=meta), source_idx, labels,
                                 answers, q.metadata.get(MASK_BITS_KEY, LEFT_TO_RIGHT)))
    counts = {"questions_in": len(questions), "hints_in": sum(len(q.hints) for q in questions),
              **{f"leak_{k}": v for k, v in leak.counts().items()},
              "questions_skipped_few_hints": len(skipped), "questions": len(selected)}
    details = {"dropped_hints": dict(leak.dropped_hints), "dropped_questions": leak.dropped_questions,
               "skipped_few_hints": skipped, "common_word_answers": leak.common_word_answers}
    return selected, {"counts": counts, "details": details}


def _most_usable_hints(questions: Sequence[Question], details: dict) -> int:
    """The most hints any question keeps after the leakage filter (`select_questions`' details)."""
    gone = set(details["dropped_questions"])
    return max((len(q.hints) - len(details["dropped_hints"].get(q.id, ())) for q in questions if q.id not in gone),
               default=0)


def build_benchmark(questions: Sequence[Question] | str | os.PathLike | Sequence[str | os.PathLike],
                    out_dir: str | os.PathLike, *, top_k: int = TOP_K.default,
                    leak_policy: str = LEAK_POLICY.default, leak_judge: LeakJudge | None = None,
                    split: Any = SPLIT.default, seed: int = SEED.default, strict: bool = False,
                    sources: Sequence[Any] = (), post_build: PostBuild | None = None,
                    show_progress: bool = False, label_match: str = LABEL_MATCH.default,
                    overwrite: bool = False) -> dict:
    """Write questions.jsonl, corpus.jsonl, qrels.tsv, splits.json, meta.json and, for a QUIT release,
    labels.jsonl with every model's stored answer (labels by `label_match`: the release's exact
    membership, or `normalized`) into `out_dir`, atomically; return the meta dict. `questions` are
    `Question`s, or source files read with `inferqa.load_questions` (then the recorded `sources`
    unless given). `post_build(tmp_dir, meta)` runs in the temp directory before the rename and may
    rewrite qrels.tsv or update meta. An existing benchmark is refused unless `overwrite`; then only
    the files a build writes (`BUILD_FILES`) are replaced, in one transaction, and the rest of the
    folder (indexes, runs, notes) stays."""
    _check_build_options(top_k, label_match)
    refuse_existing(Path(out_dir), overwrite)
    split_spec = parse_split(split)
    origins: dict[str, str] = {}
    questions, sources = _read_sources(questions, sources, origins, split_spec)
    judge = leak_judge or StringLeakJudge()
    selected, info = _select_or_explain(questions, top_k, leak_policy, judge, strict)
    if isinstance(split_spec, SourceRoles):
        splits, left_out = split_spec.splits([s.question.id for s in selected], origins, seed)
        gone = set(left_out)
        selected = [s for s in selected if s.question.id not in gone]
        info["counts"]["questions_left_out"] = len(left_out)
        info["counts"]["questions"] = len(selected)
    else:
        splits = make_splits([s.question for s in selected], split_spec, seed)
    options = {"top_k": top_k, "leak_policy": leak_policy, "leak_judge": judge.name,
               "split": (split_spec.to_json() if isinstance(split_spec, SourceRoles)
                         else split_spec if isinstance(split_spec, str) else list(split_spec)),
               "seed": seed, "strict": strict, "label_match": label_match}
    with BenchmarkWrite(out_dir, remove_unstaged=True) as write:
        written = _write_passages(write.folder, selected, label_match, show_progress)
        write_json(write.path("splits.json"), splits)
        meta = _build_meta(sources, options, info, written, selected, splits)
        if post_build is not None:
            post_build(write.folder, meta)
        write.commit(meta)
    return meta


def _check_build_options(top_k: int, label_match: str) -> None:
    if label_match not in LABEL_MATCHES:
        raise InputError(f"--label-match must be one of {', '.join(LABEL_MATCHES)}, not {label_match!r}",
                         field="label-match")
    if not TOP_K.min <= top_k <= TOP_K.max:
        raise InputError(f"--top-k must be between {TOP_K.min} and {TOP_K.max}, got {top_k}", field="top-k")


def _read_sources(questions: Any, sources: Sequence[Any], origins: dict[str, str],
                  split_spec: Any = None) -> tuple[Sequence[Question], Sequence[Any]]:
    """(the questions, the sources to record): source files are read, and are the sources unless
    given; `origins` receives each question id's resolved source path. Per-source roles
    (`SourceRoles`) need source files (the questions' own, or `sources` naming them), each with
    a role, checked before any is read."""
    from ..data import load_sources

    if isinstance(questions, (str, os.PathLike)):
        questions = [questions]
    is_files = bool(questions) and all(isinstance(q, (str, os.PathLike)) for q in questions)
    found: dict[str, Any] = {}
    if isinstance(split_spec, SourceRoles):
        paths = list(questions) if is_files else [s["path"] if isinstance(s, dict) else s for s in sources]
        if not paths:
            raise InputError("per-source roles (a roles file as --split) need the questions as source files",
                             file=split_spec.origin, field="split")
        split_spec.check_sources(paths)
        if not is_files:  # questions already read (e.g. by the CLI): their sources say where each came from
            load_sources(paths, origins=found)
    if is_files:
        sources = sources or [str(q) for q in questions]
        questions = load_sources(questions, origins=found)
    origins.update({qid: str(Path(path).resolve()) for qid, path in found.items()})
    if not questions:
        raise InputError("no questions to build from")
    return questions, sources


def _select_or_explain(questions: Sequence[Question], top_k: int, leak_policy: str, leak_judge: LeakJudge,
                       strict: bool) -> tuple[list[Selected], dict]:
    """`select_questions`, or an InputError saying which --top-k would build something."""
    selected, info = select_questions(questions, top_k, leak_policy, leak_judge, strict)
    if not selected:
        most = _most_usable_hints(questions, info["details"])
        fix = f" (the most any has is {most}: --top-k {most} builds from them)" if most else ""
        raise InputError(f"no question has {top_k} usable hints after the leakage filter{fix}; nothing to build",
                         field="top-k")
    return selected, info


def _write_passages(tmp: Path, selected: list[Selected], label_match: str, show_progress: bool) -> tuple[int, int]:
    """questions.jsonl, corpus.jsonl, qrels.tsv and (for a QUIT release with stored answers)
    labels.jsonl in `tmp`, streamed question by question; returns (passages, labels.jsonl rows)."""
    passages = stored_rows = 0
    with questions_writer(tmp / "questions.jsonl") as write_question, \
            corpus_writer(tmp / "corpus.jsonl") as corpus, Qrels.writer(tmp / "qrels.tsv") as write_qrel, \
            Labels.writer(tmp / "labels.jsonl") as write_label:
        for sel in track(selected, "Building passages", show_progress, transient=True):
            q, source_idx = sel.question, sel.source_indices
            release = bool(sel.release_labels or sel.release_answers)
            write_question(q)
            orders = order_table(len(q.hints), sel.mask_bits)
            for order, pid in corpus.write_question(q.id, [h.text for h in q.hints], orders):
                label = LABEL_PARTIAL
                if release:
                    label, row = _release_row(sel, pid, [source_idx[i] for i in order], label_match)
                    if row is not None:
                        write_label(row)
                        stored_rows += 1
                write_qrel(q.id, pid, label)
                passages += 1
    if not stored_rows:
        (tmp / "labels.jsonl").unlink()
    return passages, stored_rows


def _build_meta(sources: Sequence[Any], options: dict, info: dict, written: tuple[int, int],
                selected: list[Selected], splits: dict[str, list[str]]) -> dict:
    """meta.json: what built the benchmark (version, time, sources with their hashes, options) and its counts."""
    from_release = any(s.release_labels or s.release_answers for s in selected)
    passages, stored_rows = written
    meta = {
        "inferqa_version": __version__,
        "created": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "sources": [_source_entry(s) for s in sources],
        "options": options,
        "counts": {**info["counts"], "passages": passages, "passages_per_question": n_orders(options["top_k"])},
        "id_scheme": {"name": ID_SCHEME, "mask_bits": sorted({s.mask_bits for s in selected})},
        "labels": {},  # the qrels' label counts, filled in by the commit
        "labelled_by": "quit-release" if from_release else "constant",
        "splits": {name: len(ids) for name, ids in splits.items()},
        "leakage": info["details"],
    }
    if from_release:
        meta["labelling"] = {"source": "quit-release", "labelers": list(LABELLERS), "match": options["label_match"],
                             "stored_answers": stored_rows}
    return meta
