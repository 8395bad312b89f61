"""Text helpers shared by every stage: answer normalisation, hint cleaning and the one
"did you mean" suggestion of every error message that names an unknown word."""

from __future__ import annotations

import difflib
import re
import string
import unicodedata
from functools import lru_cache
from typing import Iterable, Mapping

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCT = frozenset(string.punctuation) | {"‘", "’", "“", "”", "–", "—", "…", "«", "»", "¿", "¡"}
_WS = re.compile(r"\s+")
# `[^1^]` (Bing-chat style, as in TriviaHG) and `[1]`-style numeric citation markers.
_CITATION = re.compile(r"\s*\[\^?\d+(?:\^)?\]")


# How alike a word must be to a known one to be suggested (difflib's ratio), everywhere.
SUGGEST_CUTOFF = 0.65  # 0.6 let 'oracle' suggest 'clue'


def close_matches(word: object, choices: Iterable[str], n: int = 1) -> list[str]:
    """The (at most `n`) choices closest to `word`, closest first: those a message suggests.
    Case is ignored (`BM25` means `bm25`); a choice equal but for case comes first."""
    lowered: dict[str, str] = {}
    for c in choices:
        lowered.setdefault(c.lower(), c)
    key = str(word).lower()
    if key in lowered:
        return [lowered[key]]
    return [lowered[m] for m in difflib.get_close_matches(key, list(lowered), n=n, cutoff=SUGGEST_CUTOFF)]


def did_you_mean(word: object, choices: Iterable[str] = (), *, n: int = 1, aliases: Mapping[str, str] = {},
                 matches: Iterable[str] | None = None, quote: bool = True, form: str = " ({})") -> str:
    """`form` holding "did you mean 'x'?" for the choice closest to `word` ('x' or 'y' ... for
    `n` > 1; unquoted with `quote=False`), or "" where none is close. `aliases` maps other words
    a user may mean a choice by to that choice (suggested from, never accepted); `matches`
    gives the suggestions already found instead."""
    found = close_matches(word, [*choices, *aliases], n) if matches is None else list(matches)
    if not found:
        return ""
    shown = [aliases.get(m, m) for m in found]
    return form.format(f"did you mean {' or '.join(map(repr, shown) if quote else shown)}?")


def strip_accents(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFKD", s) if not unicodedata.combining(c))


def normalize_answer(s: str) -> str:
    """SQuAD-style: lowercase, strip accents, drop punctuation and articles, collapse spaces.

    Punctuation is removed, not replaced by a space ("Ubbo-Sathla" -> "ubbosathla"),
    exactly as the SQuAD evaluation script does.
    """
    s = strip_accents(s.lower())
    s = "".join(c for c in s if c not in _PUNCT)
    s = _ARTICLES.sub(" ", s)
    return _WS.sub(" ", s).strip()


@lru_cache(maxsize=1)
def _ftfy_config():
    import ftfy

    # Repair mojibake and stray HTML entities, but keep curly quotes and ligatures as written.
    return ftfy.TextFixerConfig(uncurl_quotes=False, fix_latin_ligatures=False,
                                fix_character_width=False, normalization="NFC")


def repair_mojibake(s: str) -> str:
    """Undo UTF-8 text decoded as Latin-1/cp1252 (`cafÃ©` -> `café`)."""
    if s.isascii():
        return s
    import ftfy

    return ftfy.fix_text(s, _ftfy_config())


def strip_citations(s: str) -> str:
    """Remove citation markers such as `[^1^]` or `[2]` left by chat-generated hints."""
    return _CITATION.sub("", s)


def normalize_whitespace(s: str) -> str:
    return _WS.sub(" ", s).strip()


def clean_text(s: str) -> str:
    """Mojibake repair, citation-marker removal and whitespace normalisation, in that order."""
    return normalize_whitespace(strip_citations(repair_mojibake(s)))


def _answer_tokens(s: str) -> list[str]:
    """Uncased tokens of NFD text: runs of letters, digits and marks, and every other visible
    character alone (the DPR / Rankify SimpleTokenizer)."""
    out: list[str] = []
    word: list[str] = []
    for ch in unicodedata.normalize("NFD", s):
        kind = unicodedata.category(ch)[0]
        if kind in "LNM":
            word.append(ch)
            continue
        if word:
            out.append("".join(word).lower())
            word = []
        if kind not in "ZC":
            out.append(ch.lower())
    if word:
        out.append("".join(word).lower())
    return out


@lru_cache(maxsize=65536)
def _cached_answer_tokens(answer: str) -> list[str]:  # an answer is tested against many passages
    return _answer_tokens(answer)


def answer_in_text(text: str, answers: list[str]) -> bool:
    """`has_answer` of Rankify/DPR run files: some answer's tokens occur in the text's, in a row."""
    folded = unicodedata.normalize("NFD", text).lower()
    tokens: list[str] | None = None
    for answer in answers:
        want = _cached_answer_tokens(answer)
        if not want or want[0] not in folded:  # a token of the text is a substring of it: cheap test first
            continue
        tokens = _answer_tokens(text) if tokens is None else tokens
        n = len(want)
        if any(tokens[i:i + n] == want for i in range(len(tokens) - n + 1)):
            return True
    return False
