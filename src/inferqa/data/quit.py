"""The official QUIT release (DataScienceUIBK/InferentialQA, `results/dataset` on the hub).

train/dev/test JSON: a list of
  {"id", "question", "answers": [...], "hints": [{"hint": str, ...}] (the kept top 5, in rank order),
   "subsets": {"10110": {"320": {"gemma-3-1b": answer, "qwen-3-4b": answer, "llama-31-8b": answer,
                                  "llama-32-1b": ..., "gemma-3-4b": ..., "qwen-3-8b": ...}, ...}, ...}}
The release's own indexing script makes passage `{id}_{mask}_{perm}` (mask: one 0/1 per hint)
with the hints in `perm` order (text: `' '.join(hints).strip()` of the hint strings as written;
ids, questions, answers and hints are kept verbatim, never cleaned); the mask's bit order is inferred, so
each file must read one way throughout (left-to-right or right-to-left). It labels it 2
when an answer of one of the three labelling LLMs (gemma-3-1b, qwen-3-4b, llama-31-8b) is
among `answers` (exact, case-sensitive string membership), else 1. `release_label` applies
that rule (`match="exact"`, the default) or our `normalize_answer` comparison
(`match="normalized"`, which also accepts case/punctuation variants); an explicit
`"label"` in an ordering wins. Every model's answer is kept per ordering (ANSWERS_KEY).
corpus.jsonl ({id, contents, title = question id}) is derived from these files, so
passages are rebuilt from the hints rather than read from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..io import inner_path
from ..records import MASK_BITS, Hint, Question, answerability_label, mask_readings
from ..parameters import LABEL_MATCH
from ..text import normalize_answer
from ._common import answers_field, check_unique, convergence_field, expect_list, get, record_name, text_field

LABELLERS = ("gemma-3-1b", "qwen-3-4b", "llama-31-8b")
READERS = ("llama-32-1b", "gemma-3-4b", "qwen-3-8b")
LABELS_KEY = "passage_labels"  # metadata key: {perm: explicit label}, perm = source hint indices in passage order
ANSWERS_KEY = "passage_answers"  # metadata key: {perm: {model: answer}}, every ordering the release lists
LABEL_MATCHES = LABEL_MATCH.choices
MASK_BITS_KEY = "mask_bits"  # metadata key: the file's bit order of subset masks (records.MASK_BITS)


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and "subsets" in obj


def looks_like_corpus(obj: Any) -> bool:
    return isinstance(obj, dict) and "contents" in obj and "id" in obj


def ordering_entry(entry: Any, *, file: Path, record: str, field: str) -> tuple[int | None, dict[str, str]]:
    """(explicit label or None, model -> answer string) of one ordering."""
    if not isinstance(entry, dict):
        raise InputError("expected an object of model answers", file=file, record=record, field=field)
    label = entry.get("label")
    if label is not None and label not in (0, 1, 2):
        raise InputError(f"label {label!r} is not 0, 1 or 2", file=file, record=record, field=f"{field}.label")
    answers = {}
    for model, answer in entry.items():
        if model == "label":
            continue
        if not isinstance(answer, str):
            raise InputError("expected an answer string", file=file, record=record, field=f"{field}.{model}")
        answers[model] = answer
    return label, answers


def labeller_correct(answers: dict[str, str], gold: list[str], match: str = LABEL_MATCH.default) -> dict[str, bool]:
    """Per labelling model present: is its answer a gold answer (exact membership, or normalised)?"""
    if match not in LABEL_MATCHES:
        raise InputError(f"label match must be one of {', '.join(LABEL_MATCHES)}, not {match!r}",
                         field="label-match")
    if match == "exact":
        return {m: answers[m] in gold for m in LABELLERS if m in answers}
    golds = {normalize_answer(a) for a in gold}
    return {m: normalize_answer(answers[m]) in golds for m in LABELLERS if m in answers}


def release_label(explicit: int | None, answers: dict[str, str], gold: list[str],
                  match: str = LABEL_MATCH.default) -> int:
    if explicit is not None:
        return int(explicit)
    return answerability_label(labeller_correct(answers, gold, match).values())


def _check_ordering(mask: str, perm: str, n_hints: int, fits: list[str], *, file: Path, record: str,
                    field: str) -> None:
    """Narrow `fits` (the bit orders still possible for the file) by one ordering, or fail."""
    if len(mask) != n_hints or set(mask) - {"0", "1"}:
        raise InputError(f"subset key {mask!r} is not a {n_hints}-character 0/1 mask of the question's hints",
                         file=file, record=record, field=field)
    if not perm.isdigit() or len(set(perm)) != len(perm) or max(map(int, perm)) >= n_hints:
        raise InputError(f"ordering {perm!r} is not distinct hint indices below {n_hints}", file=file,
                         record=record, field=field)
    readings = mask_readings(mask, [int(c) for c in perm])
    if not readings:
        raise InputError(f"mask {mask!r} and ordering {perm!r} name different hints under either bit order",
                         file=file, record=record, field=field)
    left = [b for b in fits if b in readings]
    if not left:
        raise InputError(f"mask {mask!r} fits only {readings[0]} bit order, but earlier records of this file "
                         f"fit only {fits[0]}", file=file, record=record, field=field)
    fits[:] = left


def parse(data: Any, file: Path) -> list[Question]:
    stem = inner_path(file).stem  # the release's train.zsd holds the train split
    split = stem if stem in ("train", "dev", "test") else None
    out = []
    fits = list(MASK_BITS)
    for i, obj in enumerate(expect_list(data, file, "questions")):
        rec = record_name(i, obj)
        # Verbatim: the authors' files match questions by text, labels and EM by exact membership
        # in `answers`, and build passage text as ' '.join(hints).strip() of the strings as given.
        qid = text_field(get(obj, "id", file=file, record=rec), file=file, record=rec, field="id", verbatim=True)
        text = text_field(get(obj, "question", file=file, record=rec), file=file, record=rec, field="question",
                          verbatim=True)
        answers = answers_field(get(obj, "answers", file=file, record=rec), file=file, record=rec, field="answers",
                                verbatim=True)
        raw_hints = get(obj, "hints", file=file, record=rec)
        if not isinstance(raw_hints, list) or not raw_hints:
            raise InputError("expected a non-empty list of hints", file=file, record=rec, field="hints")
        hints = []
        for j, h in enumerate(raw_hints):
            f = f"hints[{j}]"
            h_text = h if isinstance(h, str) else get(h, "hint", file=file, record=rec, field=f"{f}.hint")
            conv = None
            if isinstance(h, dict):
                conv = convergence_field(h.get("convergence", (h.get("metrics") or {}).get("convergence")),
                                         file=file, record=rec, field=f"{f}.convergence")
            # No hint is dropped here: the release's subset ids index into this exact list.
            hints.append(Hint(text=text_field(h_text, file=file, record=rec, field=f"{f}.hint", verbatim=True),
                              convergence=conv))
        subsets = get(obj, "subsets", file=file, record=rec)
        if not isinstance(subsets, dict):
            raise InputError("expected an object subset -> ordering -> answers", file=file, record=rec, field="subsets")
        labels: dict[str, int] = {}
        stored: dict[str, dict[str, str]] = {}
        for mask, perms in subsets.items():
            if not isinstance(perms, dict):
                raise InputError("expected an object ordering -> answers", file=file, record=rec,
                                 field=f"subsets.{mask}")
            for perm, entry in perms.items():
                f = f"subsets.{mask}.{perm}"
                _check_ordering(mask, perm, len(hints), fits, file=file, record=rec, field=f)
                explicit, stored[perm] = ordering_entry(entry, file=file, record=rec, field=f)
                if explicit is not None:
                    labels[perm] = explicit
        meta = {k: obj[k] for k in ("type", "difficulty", "parametric") if k in obj}
        meta.update({"source_format": "quit", LABELS_KEY: labels, ANSWERS_KEY: stored})
        if split:
            meta["split"] = split
        out.append(Question(id=qid, text=text, answers=answers, hints=hints, metadata=meta))
    check_unique(out, file)
    for q in out:  # a file whose masks fit both readings (all symmetric) is read left-to-right
        q.metadata[MASK_BITS_KEY] = fits[0]
    return out
