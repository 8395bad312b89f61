"""Answer leakage: a hint leaks when it names the answer (or an alias).

`StringLeakJudge` is the word-boundary rule: ignoring case, accents and punctuation, the
answer (without a leading article) occurs in the hint as whole words. Articles inside an
answer are kept ("The letter A" must not shrink to "letter", as SQuAD normalisation would).
Punctuation is compared two ways, deleted and turned into spaces, so that both
"AC/DC" ~ "ACDC" and "mirror/glass" ~ "mirror" are caught.

Answers made only of common function words (WikiHint test_62: the novel "It") cannot be
judged that way: every "It is ..." hint would leak. For them the rule matches only the
capitalised form, case-sensitively, and not as the first word of a sentence
("the novel It by Stephen King" leaks, "It is the first of ..." does not).

Semantic judges (embeddings, LLMs) implement the same `LeakJudge` protocol.
"""

from __future__ import annotations

import re
import string
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Iterable, Protocol, Sequence, runtime_checkable

from ..errors import InputError
from ..records import Question
from ..registry import plugin
from ..text import normalize_answer, strip_accents

LEAK_POLICIES = ("drop-hint", "drop-question", "none")

# Pronouns, determiners, auxiliaries, prepositions, conjunctions and other function words.
COMMON_WORDS = frozenset("""
i me my mine myself we us our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves what which who whom whose this
that these those am is are was were be been being have has had having do does did doing will would
shall should can could may might must a an the and but if or because as until while of at by for
with about against between into through during before after above below to from up down in out on
off over under again further then once here there when where why how all any both each few more
most other some such no nor not only own same so than too very just now one ones yes
""".split())

_PUNCT_RE = re.compile(f"[{re.escape(string.punctuation)}‘’“”–—…«»¿¡]")
_WS = re.compile(r"\s+")
_LEADING_ARTICLE = re.compile(r"^(a|an|the) ")
_SENTENCE_END = re.compile(r"(^|[.!?:;\"“”(\[]\s*)$")


@runtime_checkable
class LeakJudge(Protocol):
    name: str

    def leaks(self, hint: str, answers: Sequence[str]) -> bool:
        """True when `hint` gives away one of `answers`."""
        ...


def is_common_word_answer(answer: str) -> bool:
    words = normalize_answer(answer).split()
    return bool(words) and all(w in COMMON_WORDS for w in words)


def _leak_forms(s: str, is_answer: bool) -> tuple[str, str]:
    """(punctuation deleted, punctuation as spaces), lowercased and accent-free. Only an
    answer's leading article goes: "The letter A" must stay "letter a", not become "letter"."""
    s = strip_accents(s.lower())
    forms = []
    for repl in ("", " "):
        t = _WS.sub(" ", _PUNCT_RE.sub(repl, s)).strip()
        forms.append(_LEADING_ARTICLE.sub("", t) if is_answer else t)
    return forms[0], forms[1]


def _contains_words(haystack: str, needle: str) -> bool:
    return bool(needle) and f" {needle} " in f" {haystack} "


@lru_cache(maxsize=4096)
def _common_word_pattern(answer: str) -> re.Pattern:
    core = re.sub(r"^(a|an|the)\s+", "", strip_accents(answer).strip(), flags=re.IGNORECASE)
    core = core[:1].upper() + core[1:]
    return re.compile(r"(?<!\w)" + re.escape(core) + r"(?!\w)")


def _common_word_leaks(hint: str, answer: str) -> bool:
    text = strip_accents(hint)
    for m in _common_word_pattern(answer).finditer(text):
        before = re.sub(r"\b(a|an|the)\s*$", "", text[: m.start()], flags=re.IGNORECASE)
        if not _SENTENCE_END.search(before):
            return True
    return False


@plugin("leak-judge", "string")
class StringLeakJudge:
    """The word-boundary string rule: an answer written out in the hint, ignoring case and accents."""

    name = "string"

    def leaks(self, hint: str, answers: Sequence[str]) -> bool:
        hint_forms = _leak_forms(hint, is_answer=False)
        for answer in answers:
            if is_common_word_answer(answer):
                if _common_word_leaks(hint, answer):
                    return True
            elif any(_contains_words(h, a) for h, a in zip(hint_forms, _leak_forms(answer, is_answer=True))):
                return True
        return False


@dataclass
class LeakResult:
    """Questions after the policy, and what it removed (indices into each source question's hints)."""

    questions: list[Question]
    kept_indices: dict[str, list[int]]
    dropped_hints: dict[str, list[int]] = field(default_factory=dict)
    dropped_questions: list[str] = field(default_factory=list)
    common_word_answers: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {"hints_dropped": sum(len(v) for v in self.dropped_hints.values()),
                "questions_with_leaks": len(self.dropped_hints) + len(self.dropped_questions),
                "questions_dropped": len(self.dropped_questions)}


def leaking_hints(question: Question, judge: LeakJudge) -> list[int]:
    return [i for i, h in enumerate(question.hints) if judge.leaks(h.text, question.answers)]


def apply_leak_policy(questions: Iterable[Question], judge: LeakJudge | None = None,
                      policy: str = "drop-hint") -> LeakResult:
    """`drop-hint` removes leaking hints and keeps the question; `drop-question` drops any
    question with a leaking hint (the QUIT paper's choice); `none` keeps everything (for
    data already filtered, such as the QUIT release)."""
    if policy not in LEAK_POLICIES:
        raise InputError(f"unknown leak policy {policy!r} (choose from {', '.join(LEAK_POLICIES)})",
                         field="leak-policy")
    judge = judge or StringLeakJudge()
    result = LeakResult(questions=[], kept_indices={})
    for q in questions:
        if any(is_common_word_answer(a) for a in q.answers):
            result.common_word_answers.append(q.id)
        bad = leaking_hints(q, judge) if policy != "none" else []
        if bad and policy == "drop-question":
            result.dropped_questions.append(q.id)
            continue
        if bad:
            result.dropped_hints[q.id] = bad
        keep = [i for i in range(len(q.hints)) if i not in set(bad)]
        result.kept_indices[q.id] = keep
        result.questions.append(replace(q, hints=[q.hints[i] for i in keep]) if bad else q)
    return result
