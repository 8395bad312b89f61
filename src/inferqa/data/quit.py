"""The official QUIT release (DataScienceUIBK/InferentialQA, `results/dataset` on the hub).

train/dev/test JSON: a list of
  {"id", "question", "answers": [...], "hints": [{"hint": str, ...}] (the kept top 5, in rank order),
   "subsets": {"10110": {"320": {"gemma-3-1b": answer, "qwen-3-4b": answer, "llama-31-8b": answer,
                                  "llama-32-1b": ..., "gemma-3-4b": ..., "qwen-3-8b": ...}, ...}, ...}}
The release's own indexing script makes passage `{id}_{mask}_{perm}` (mask: one 0/1 per hint)
with the hints in `perm` order, kept verbatim here; the mask's bit order is inferred, so
each file must read one way throughout (left-to-right or right-to-left). It labels it 2 when an answer of one of the three labelling LLMs
(gemma-3-1b, qwen-3-4b, llama-31-8b) is among `answers`, else 1. We apply the same rule,
comparing with `normalize_answer` (so it also accepts case/punctuation variants the
release's exact-string test would miss); an explicit `"label"` in an ordering wins.
corpus.jsonl ({id, contents, title = question id}) is derived from these files, so
passages are rebuilt from the hints rather than read from it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..errors import InputError
from ..records import LABEL_ANSWERABLE, LABEL_PARTIAL, MASK_BITS, Hint, Question, mask_readings
from ..text import normalize_answer
from ._common import answers_field, check_unique, convergence_field, expect_list, get, record_name, text_field

LABELLERS = ("gemma-3-1b", "qwen-3-4b", "llama-31-8b")
READERS = ("llama-32-1b", "gemma-3-4b", "qwen-3-8b")
LABELS_KEY = "passage_labels"  # metadata key: {perm: label}, perm = source hint indices in passage order
MASK_BITS_KEY = "mask_bits"  # metadata key: the file's bit order of subset masks (records.MASK_BITS)


def looks_like(obj: Any) -> bool:
    return isinstance(obj, dict) and "subsets" in obj


def looks_like_corpus(obj: Any) -> bool:
    return isinstance(obj, dict) and "contents" in obj and "id" in obj


def ordering_label(entry: Any, gold: set[str], *, file: Path, record: str, field: str) -> int:
    if not isinstance(entry, dict):
        raise InputError("expected an object of model answers", file=file, record=record, field=field)
    if "label" in entry:
        label = entry["label"]
        if label not in (0, 1, 2):
            raise InputError(f"label {label!r} is not 0, 1 or 2", file=file, record=record, field=f"{field}.label")
        return int(label)
    for model in LABELLERS:
        answer = entry.get(model)
        if isinstance(answer, str) and normalize_answer(answer) in gold:
            return LABEL_ANSWERABLE
    return LABEL_PARTIAL


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
    split = file.stem if file.stem in ("train", "dev", "test") else None
    out = []
    fits = list(MASK_BITS)
    for i, obj in enumerate(expect_list(data, file, "questions")):
        rec = record_name(i, obj)
        qid = text_field(get(obj, "id", file=file, record=rec), file=file, record=rec, field="id")
        text = text_field(get(obj, "question", file=file, record=rec), file=file, record=rec, field="question")
        answers = answers_field(get(obj, "answers", file=file, record=rec), file=file, record=rec, field="answers")
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
            hints.append(Hint(text=text_field(h_text, file=file, record=rec, field=f"{f}.hint"), convergence=conv))
        subsets = get(obj, "subsets", file=file, record=rec)
        if not isinstance(subsets, dict):
            raise InputError("expected an object subset -> ordering -> answers", file=file, record=rec, field="subsets")
        gold = {normalize_answer(a) for a in answers}
        labels: dict[str, int] = {}
        for mask, perms in subsets.items():
            if not isinstance(perms, dict):
                raise InputError("expected an object ordering -> answers", file=file, record=rec,
                                 field=f"subsets.{mask}")
            for perm, entry in perms.items():
                f = f"subsets.{mask}.{perm}"
                _check_ordering(mask, perm, len(hints), fits, file=file, record=rec, field=f)
                labels[perm] = ordering_label(entry, gold, file=file, record=rec, field=f)
        meta = {k: obj[k] for k in ("type", "difficulty", "parametric") if k in obj}
        meta.update({"source_format": "quit", LABELS_KEY: labels})
        if split:
            meta["split"] = split
        out.append(Question(id=qid, text=text, answers=answers, hints=hints, metadata=meta))
    check_unique(out, file)
    for q in out:  # a file whose masks fit both readings (all symmetric) is read left-to-right
        q.metadata[MASK_BITS_KEY] = fits[0]
    return out
