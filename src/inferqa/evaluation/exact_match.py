"""Answer scoring, the one home of it: the two answer cleaners, EM, token F1, containment.

- `clean_answer_ours` (the default protocol): the last non-empty line, without answer labels,
  brackets or quotes; refusals and sentences become NO_ANSWER. Scored with SQuAD-normalised
  EM, F1 and containment.
- `clean_answer_paper` (`--protocol paper`): the QUIT authors' steps and nothing else —
  strip, keep what follows the last "\\n", drop one leading "(", and turn an empty answer,
  one containing "no answer" (any case) or a clause into NO_ANSWER. A clause is a sentence
  (as spaCy's `en_core_web_sm` splits it) holding a subject (`nsubj`/`nsubjpass`) and a root
  token tagged VERB; where spaCy or that model is missing, that one step is skipped. Scored
  with `paper_exact_match`: exact, case-sensitive membership in the gold answers.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from typing import Sequence

from ..text import normalize_answer

NO_ANSWER = "NO ANSWER"

MAX_ANSWER_WORDS = 10  # longer replies are sentences, not short exact answers

_LABEL = re.compile(r"^\s*(?:final\s+)?(?:answer|a)\s*[:\-]\s*", re.IGNORECASE)
_THE_ANSWER_IS = re.compile(r"^(?:so\s+|therefore\s+)?(?:the\s+(?:correct\s+)?answer\s+is\s*:?|(?:it|this|that)"
                            r"(?:'s|\s+is|\s+was))\s+(.+)$", re.IGNORECASE)
_REFUSAL = re.compile(
    r"\b(no answer|not enough|cannot|can't|can not|unable to|don't know|do not know|not sure|"
    r"insufficient|sorry|not possible|no idea|not provided|not mentioned)\b", re.IGNORECASE)
_BARE_REFUSAL = {"unknown", "none", "n/a", "?", "idk"}
_WRAP = "\"'`“”‘’«»[](){}<>*_ "
_SENTENCE_END = ".!?"


def clean_answer_ours(raw: str) -> str:
    """Last non-empty line, without labels, brackets or quotes; refusals and sentences → NO ANSWER."""
    lines = [ln.strip() for ln in raw.splitlines() if ln.strip()]
    if not lines:
        return NO_ANSWER
    text = _LABEL.sub("", lines[-1]).strip()
    m = _THE_ANSWER_IS.match(text)
    if m:
        text = m.group(1)
    text = text.strip(_WRAP).rstrip(_SENTENCE_END + ",;:").strip(_WRAP)
    if not text or _REFUSAL.search(text) or text.lower() in _BARE_REFUSAL:
        return NO_ANSWER
    words = text.split()
    if len(words) > MAX_ANSWER_WORDS or (len(words) >= 6 and lines[-1].rstrip(_WRAP)[-1:] in _SENTENCE_END):
        return NO_ANSWER
    return text


@lru_cache(maxsize=1)
def _spacy():
    try:
        import spacy

        return spacy.load("en_core_web_sm", disable=["ner", "textcat"])
    except Exception:  # not installed, or no English model: the clause step is skipped
        return None


def is_clause(text: str) -> bool:
    """Some sentence of `text` has a nominal subject and a root token tagged VERB (False
    without spaCy and its English model)."""
    nlp = _spacy()
    if nlp is None:
        return False
    return any(any(t.dep_ in ("nsubj", "nsubjpass") for t in sent) and
               any(t.dep_ == "ROOT" and t.pos_ == "VERB" for t in sent) for sent in nlp(text).sents)


def clean_answer_paper(raw: str) -> str:
    """The QUIT authors' cleaning of a raw generation, step for step (see the module doc)."""
    text = (raw or "").strip().split("\n")[-1]
    if text.startswith("("):
        text = text[1:]
    if not text or "no answer" in text.lower() or is_clause(text):
        return NO_ANSWER
    return text


def paper_exact_match(raw: str, golds: Sequence[str]) -> bool:
    """The authors' EM of a raw generation: cleaned by `clean_answer_paper`, then exact,
    case-sensitive membership in the golds. (An answer they stored is compared as it is.)"""
    return clean_answer_paper(raw) in golds


def is_abstention(pred: str) -> bool:
    return pred.strip().upper() == NO_ANSWER or not normalize_answer(pred)


def exact_match(pred: str, golds: Sequence[str]) -> bool:
    """SQuAD-style EM: equal after normalisation to any gold answer. Abstentions never match."""
    if is_abstention(pred):
        return False
    p = normalize_answer(pred)
    return any(p == normalize_answer(g) for g in golds)


def _f1(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    common = Counter(pred_tokens) & Counter(gold_tokens)
    same = sum(common.values())
    if same == 0:
        return 0.0
    precision, recall = same / len(pred_tokens), same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def f1(pred: str, golds: Sequence[str]) -> float:
    """SQuAD token F1, best over the gold answers."""
    if is_abstention(pred):
        return 0.0
    p = normalize_answer(pred).split()
    return max((_f1(p, normalize_answer(g).split()) for g in golds if normalize_answer(g)), default=0.0)


def contains(pred: str, golds: Sequence[str]) -> bool:
    """A normalised gold answer occurs in the normalised prediction as whole words."""
    if is_abstention(pred):
        return False
    p = f" {normalize_answer(pred)} "
    return any(g and f" {g} " in p for g in (normalize_answer(x) for x in golds))


def score_row(pred: str, golds: Sequence[str]) -> dict[str, float]:
    """EM, token F1 and containment of one prediction (what `read_with_llm` writes in each row)."""
    return {"em": float(exact_match(pred, golds)), "f1": f1(pred, golds), "contains": float(contains(pred, golds))}
