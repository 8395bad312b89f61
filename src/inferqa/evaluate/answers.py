"""Answer-level numbers of the QUIT paper, computed from stored per-passage answers (no model).

The stored answers are a benchmark's labels.jsonl: for a QUIT release build every reader's
answer (`reader_answers`) and every labeller's (`answers`) of every passage; for our own
labelling, the labellers' answers. Rules as the authors' scripts apply them
(../shared/QUIT-FORMATS.md):

- paper EM: the cleaned answer is one of the gold answers, exact and case-sensitive;
- "optimal" EM: a question counts when any of its passages with a relevant label holds a
  stored answer that is a gold answer; divided by all questions asked about;
- accuracy per label: share of the passages with that label whose stored answer is gold;
- oracle reranker: the union of the top-k passages' hints is itself a passage of the
  question, so its stored answer stands in for a reader call.

Answer cleaning (`clean_answer`) follows the authors' steps except one: they also turn an
answer that spaCy parses as a clause (a subject and a root verb) into NO ANSWER. spaCy and
its English model are used when both are installed; otherwise that step is skipped, which
changes EM only where a gold answer is itself a clause.
"""

from __future__ import annotations

from functools import lru_cache
from typing import TYPE_CHECKING, Iterable, Sequence

from ..errors import InputError
from ..read.prompts import NO_ANSWER
from ..records import mask_readings, parse_passage_id, passage_id, split_passage_id

if TYPE_CHECKING:
    from ..benchmark import Benchmark
    from ..records import Run



@lru_cache(maxsize=1)
def _spacy():
    try:
        import spacy

        return spacy.load("en_core_web_sm")
    except Exception:  # not installed, or no English model: the clause step is skipped
        return None


def _is_clause(text: str) -> bool:
    nlp = _spacy()
    if nlp is None:
        return False
    doc = nlp(text)
    return any(t.dep_ in ("nsubj", "nsubjpass") for t in doc) and any(
        t.dep_ == "ROOT" and t.pos_ in ("VERB", "AUX") for t in doc)


def clean_answer(raw: str) -> str:
    """Strip, keep the last line, drop a leading "("; empty, "no answer" or a clause -> NO ANSWER."""
    text = (raw or "").strip()
    text = text.splitlines()[-1].strip() if text else ""
    if text.startswith("("):
        text = text[1:].strip()
    if not text or "no answer" in text.lower() or _is_clause(text):
        return NO_ANSWER
    return text


def paper_exact_match(raw: str, golds: Sequence[str]) -> bool:
    return clean_answer(raw) in golds


Store = dict  # pid -> model -> stored answer (readers' and labellers'), see `load_store`


def load_store(bench: "Benchmark", qids: Iterable[str]) -> Store:
    """Every stored answer of the passages of `qids`, readers' before labellers'."""
    out: Store = {}
    for pid, row in bench.stored_answers(qids).items():
        out[pid] = {**(row.get("reader_answers") or {}), **(row.get("answers") or {})}
    return out


def stored_models(store: Store) -> list[str]:
    """Every model with a stored answer, in first-seen order."""
    seen: dict[str, None] = {}
    for answers in store.values():
        seen.update(dict.fromkeys(answers))
    return list(seen)


def _check(store: Store, model: str, bench: "Benchmark") -> None:
    if not store:
        raise InputError("no stored answers for these questions: labels.jsonl is missing or holds none (build "
                         "a QUIT release, or label with `inferqa label`)", file=bench.path)
    if model not in stored_models(store):
        raise InputError(f"no stored answers of model {model!r} (have: {', '.join(stored_models(store))})",
                         file=bench.path / "labels.jsonl", field="model")


def optimal_em(bench: "Benchmark", qids: Iterable[str], model: str, min_label: int = 1,
               store: Store | None = None) -> float:
    """The paper's "optimal" EM: share of questions with a relevant passage answered correctly."""
    qids = list(qids)
    store = load_store(bench, qids) if store is None else store
    _check(store, model, bench)
    hit = 0
    for qid in qids:
        golds = bench.questions[qid].answers
        hit += any(store.get(pid, {}).get(model) in golds
                   for pid, lab in bench.qrels.get(qid, {}).items() if lab >= min_label)
    return hit / len(qids) if qids else 0.0


def accuracy_per_label(bench: "Benchmark", qids: Iterable[str], model: str,
                       store: Store | None = None) -> dict[int, float]:
    """label -> share of that label's passages (with a stored answer) whose answer is gold."""
    qids = list(qids)
    store = load_store(bench, qids) if store is None else store
    _check(store, model, bench)
    right: dict[int, int] = {}
    total: dict[int, int] = {}
    for qid in qids:
        golds = bench.questions[qid].answers
        for pid, lab in bench.qrels.get(qid, {}).items():
            ans = store.get(pid, {}).get(model)
            if ans is None:
                continue
            total[lab] = total.get(lab, 0) + 1
            right[lab] = right.get(lab, 0) + (ans in golds)
    return {lab: right[lab] / total[lab] for lab in sorted(total)}


def union_passage(bench: "Benchmark", pids: Sequence[str]) -> str | None:
    """The passage whose text is the union of `pids`' hints, first appearance first; None when
    they belong to different questions (no single passage holds them)."""
    if not pids:
        return None
    qid, mask, _ = split_passage_id(pids[0])
    first: tuple[int, ...] | None = None
    order: dict[int, None] = {}
    for pid in pids:
        pq, hints = parse_passage_id(pid)
        if pq != qid:
            return None
        first = hints if first is None else first
        order.update(dict.fromkeys(hints))
    bits = bench.mask_bits or mask_readings(mask, first)[0]
    return passage_id(qid, tuple(order), len(mask), bits)


def oracle_reader_em(run: "Run", bench: "Benchmark", model: str, ks: Sequence[int] = (1, 3, 5),
                     store: Store | None = None) -> dict[int, float]:
    """EM of `model` reading the union of each question's top-k passages of `run`, looked up
    in the stored answers (a question whose top k mix questions, or whose union has no
    stored answer, counts 0); over the run's questions."""
    store = load_store(bench, run) if store is None else store
    _check(store, model, bench)
    out = {}
    for k in ks:
        hit = 0
        for qid, ranked in run.items():
            pid = union_passage(bench, [p for p, _ in ranked[:k]])
            ans = store.get(pid, {}).get(model) if pid else None
            hit += ans is not None and ans in bench.questions[qid].answers
        out[k] = hit / len(run) if run else 0.0
    return out
