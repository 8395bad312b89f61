"""Answer normalisation and hint cleaning, on hand-worked examples."""

from __future__ import annotations

import pytest

from inferqa.text import clean_text, normalize_answer, repair_mojibake, strip_citations


@pytest.mark.parametrize("raw,expected", [
    ("The Beatles", "beatles"),
    ("  A   Tale of Two Cities ", "tale of two cities"),
    ("Ubbo-Sathla", "ubbosathla"),               # punctuation removed, not spaced (SQuAD)
    ("Pokémon", "pokemon"),
    ("ÉCOLE", "ecole"),
    ("Theatre", "theatre"),                       # article only as a whole word
    ("an apple, the pear & a fig!", "apple pear fig"),
    ("“Mirror”", "mirror"),
    ("St. Peter’s", "st peters"),
    ("", ""),
])
def test_normalize_answer(raw, expected):
    assert normalize_answer(raw) == expected


def test_strip_citations_removes_bing_and_numeric_markers():
    assert strip_citations("It is a mineral[^1^]. It burns [^2^][^3^] well [4].") == "It is a mineral. It burns well."


def test_repair_mojibake_undoes_utf8_read_as_cp1252():
    broken = "café".encode("utf-8").decode("latin-1")
    assert broken == "cafÃ©"
    assert repair_mojibake(broken) == "café"
    assert repair_mojibake("Malmö ‘FF’") == "Malmö ‘FF’"      # correct text (curly quotes too) untouched


def test_clean_text_order_of_steps():
    raw = "  It is made of glassâ€”mostly[^1^].\n\tIt  reflects.  "
    assert clean_text(raw) == "It is made of glass—mostly. It reflects."


def test_suggestions_ignore_case_and_stay_quiet_rather_than_wrong():
    from inferqa.text import close_matches, did_you_mean

    retrievers = ["bm25", "dense", "clue", "colbert"]
    assert close_matches("BM25", retrievers) == ["bm25"] and did_you_mean("BM25", retrievers) == " (did you mean 'bm25'?)"
    assert close_matches("Dense", retrievers) == ["dense"]
    assert close_matches("oracle", retrievers) == []  # not 'clue': 0.6 alike, below the cutoff
    assert close_matches("colbrt", retrievers) == ["colbert"]
