"""The official QUIT release (DataScienceUIBK/InferentialQA, `results/dataset` on the hub).

train/dev/test JSON: a list of
  {"id", "question", "answers": [...], "hints": [{"hint": str, ...}] (the kept top 5, in rank order),
   "subsets": {"013": {"301": {"gemma-3-1b": answer, "qwen-3-4b": answer, "llama-31-8b": answer,
                                "llama-32-1b": ..., "gemma-3-4b": ..., "qwen-3-8b": ...}, ...}, ...}}
The release's own indexing script makes passage `{id}_{subset}_{perm}` with the hints in
`perm` order, and labels it 2 when an answer of one of the three labelling LLMs
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
from ..records import LABEL_ANSWERABLE, LABEL_PARTIAL, Hint, Question
from ..text import normalize_answer
from ._common import answers_field, check_unique, convergence_field, expect_list, get, record_name, text_field

LABELLERS = ("gemma-3-1b", "qwen-3-4b", "llama-31-8b")
READERS = ("llama-32-1b", "gemma-3-4b", "qwen-3-8b")
LABELS_KEY = "passage_labels"  # metadata key: {"{subset}_{perm}": label}, indices into the source hints


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


def parse(data: Any, file: Path) -> list[Question]:
    split = file.stem if file.stem in ("train", "dev", "test") else None
    out = []
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
        for subset, perms in subsets.items():
            if not isinstance(perms, dict):
                raise InputError("expected an object ordering -> answers", file=file, record=rec,
                                 field=f"subsets.{subset}")
            for perm, entry in perms.items():
                f = f"subsets.{subset}.{perm}"
                if not perm.isdigit() or "".join(sorted(perm)) != subset or max(map(int, perm)) >= len(hints):
                    raise InputError("ordering is not a permutation of its subset's hint indices",
                                     file=file, record=rec, field=f)
                labels[f"{subset}_{perm}"] = ordering_label(entry, gold, file=file, record=rec, field=f)
        meta = {k: obj[k] for k in ("type", "difficulty", "parametric") if k in obj}
        meta.update({"source_format": "quit", LABELS_KEY: labels})
        if split:
            meta["split"] = split
        out.append(Question(id=qid, text=text, answers=answers, hints=hints, metadata=meta))
    check_unique(out, file)
    return out
