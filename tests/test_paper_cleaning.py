"""The QUIT authors' answer cleaning (`clean_answer_paper`), one raw form per test, against
values worked out by hand from their steps: strip, keep what follows the last "\\n", drop one
leading "(", nothing more; empty / "no answer" / a clause -> NO ANSWER."""

from types import SimpleNamespace

import pytest

import inferqa.evaluation.exact_match as answers
from inferqa.evaluation.exact_match import NO_ANSWER, clean_answer_ours, clean_answer_paper, is_clause, paper_exact_match


@pytest.fixture(autouse=True)
def no_spacy(monkeypatch):
    """The clause step off (as without spaCy), so each test sees the string steps alone."""
    monkeypatch.setattr(answers, "_spacy", lambda: None)


def test_paren_then_space_keeps_the_space():
    assert clean_answer_paper("( X") == " X"
    assert clean_answer_ours("( X") == "X"
    assert not paper_exact_match("( X", ["X"])


def test_last_line_keeps_its_leading_space_and_closing_paren():
    assert clean_answer_paper("The answer is:\n (X)") == " (X)"


def test_carriage_return_does_not_split():
    assert clean_answer_paper("Sure.\rX") == "Sure.\rX"
    assert clean_answer_ours("Sure.\rX") == "X"


def test_crlf_splits_at_the_newline_only():
    assert clean_answer_paper("Sure.\r\nX") == "X"
    assert clean_answer_paper("X\r\nY\r") == "Y"


def test_unicode_line_separator_does_not_split():
    assert clean_answer_paper("X\u2028Y") == "X\u2028Y"


def test_one_leading_paren_only():
    assert clean_answer_paper("((X") == "(X"


def test_outer_whitespace_goes_before_the_paren_test():
    assert clean_answer_paper("  (Basalt)  ") == "Basalt)"


def test_inner_line_keeps_its_indent():
    assert clean_answer_paper("A\n  B") == "  B"


def test_trailing_blank_lines_are_stripped_first():
    assert clean_answer_paper("Let me see\nLyre \n\n") == "Lyre"


def test_lone_paren_is_empty_hence_no_answer():
    assert clean_answer_paper("A\n(\n") == NO_ANSWER
    assert clean_answer_paper("(") == NO_ANSWER


def test_empty_and_blank_are_no_answer():
    assert clean_answer_paper("") == clean_answer_paper("  \n ") == NO_ANSWER


def test_no_answer_anywhere_any_case():
    assert clean_answer_paper("There is No Answer.") == NO_ANSWER
    assert clean_answer_paper("(no answer)") == NO_ANSWER
    assert clean_answer_paper("Nobody") == "Nobody"


def test_exact_case_sensitive_membership():
    assert paper_exact_match("Basalt", ["Basalt"]) and not paper_exact_match("basalt", ["Basalt"])
    assert not paper_exact_match("( Sri Lanka", ["Sri Lanka"])  # cleaned to " Sri Lanka"
    assert paper_exact_match(" Sri Lanka ", ["Sri Lanka"])  # a raw generation is stripped first


def _doc(*sentences):
    """A parsed text as spaCy gives it: sentences of tokens with a dependency and a POS tag."""
    return SimpleNamespace(sents=[[SimpleNamespace(dep_=d, pos_=p) for d, p in s] for s in sentences])


@pytest.mark.parametrize("doc,clause", [
    (_doc([("nsubj", "PRON"), ("ROOT", "VERB"), ("dobj", "NOUN")]), True),        # "He plays chess"
    (_doc([("nsubjpass", "NOUN"), ("auxpass", "AUX"), ("ROOT", "VERB")]), True),  # "Rome was founded"
    (_doc([("nsubj", "PRON"), ("ROOT", "AUX"), ("acomp", "ADJ")]), False),        # "He is tall": root AUX
    (_doc([("nsubj", "NOUN")], [("ROOT", "VERB")]), False),                       # subject and verb apart
    (_doc([("ROOT", "PROPN")]), False),                                           # "Paris"
    (_doc([("ROOT", "PROPN")], [("nsubj", "PRON"), ("ROOT", "VERB")]), True),     # a clause in sentence 2
])
def test_clause_rule_is_per_sentence_subject_and_root_verb(monkeypatch, doc, clause):
    monkeypatch.setattr(answers, "_spacy", lambda: (lambda text: doc))
    assert is_clause("any text") is clause
    assert (clean_answer_paper("any text") == NO_ANSWER) is clause


def test_clause_rule_with_the_real_spacy_model(monkeypatch):
    monkeypatch.undo()
    if answers._spacy() is None:
        pytest.skip("spaCy with en_core_web_sm is not installed")
    assert clean_answer_paper("The cat chased the mouse.") == NO_ANSWER
    assert clean_answer_paper("Sri Lanka") == "Sri Lanka"
