"""The word-boundary leakage rule and the two policies."""

from __future__ import annotations

import pytest

from inferqa.construct.leakage import LeakJudge, StringLeakJudge, apply_leak_policy, is_common_word_answer
from inferqa.errors import InputError
from inferqa.records import Hint, Question

judge = StringLeakJudge()


@pytest.mark.parametrize("hint,answers", [
    ("It was painted by LEONARDO.", ["Leonardo"]),                 # case
    ("Its home is Malmö FF.", ["Malmo"]),                          # accents in the hint
    ("Place de l'Etoile is nearby.", ["Étoile"]),                  # accents in the answer
    ("The band AC/DC toured.", ["ACDC"]),                           # punctuation deleted
    ("A mirror/glass surface.", ["Mirror"]),                        # punctuation as a space
    ("Cthulhu's cult grew.", ["Cthulhu"]),                          # possessive
    ("Owned by the Suez Canal Authority.", ["The Suez Canal"]),    # leading article of the answer
    ("They toured as The Beatles.", ["Beatles"]),                  # article in the hint
    ("Known as the Big Apple.", ["New York", "Big Apple"]),        # an alias leaks
    ("Home of 1,000 lakes.", ["1000"]),
    ("He wrote the novel It in 1986.", ["It"]),                    # common word, capitalised mid-sentence
])
def test_leaks(hint, answers):
    assert judge.leaks(hint, answers)


@pytest.mark.parametrize("hint,answers", [
    ("A catfish swims.", ["cat"]),                                 # word boundary
    ("Austro-Hungarian lands.", ["Austria"]),                       # different word
    ("It is the first letter of the English alphabet.", ["The letter A"]),  # inner article kept
    ("It is the first of a two-part adaptation.", ["It"]),         # pronoun at sentence start
    ("Made in 1928. It lives in the sea.", ["It"]),                # ... after a full stop
    ("Everyone fears it in the sewers.", ["It"]),                  # lowercase pronoun
    ("It is the fifth month.", ["May"]),
])
def test_does_not_leak(hint, answers):
    assert not judge.leaks(hint, answers)


def test_common_word_answers():
    assert is_common_word_answer("It") and is_common_word_answer("The Who") and is_common_word_answer("at")
    assert not is_common_word_answer("It Follows") and not is_common_word_answer("May Day")


def questions():
    return [
        Question("q1", "?", ["Paris"], [Hint("City of light."), Hint("Paris is big."), Hint("On the Seine.")]),
        Question("q2", "?", ["Rome"], [Hint("Eternal city."), Hint("Seven hills.")]),
        Question("q3", "?", ["It"], [Hint("It is a novel."), Hint("A clown called Pennywise.")]),
    ]


def test_drop_hint_policy_keeps_the_question_and_reports_indices():
    result = apply_leak_policy(questions())
    assert [q.id for q in result.questions] == ["q1", "q2", "q3"]
    assert [h.text for h in result.questions[0].hints] == ["City of light.", "On the Seine."]
    assert result.kept_indices == {"q1": [0, 2], "q2": [0, 1], "q3": [0, 1]}
    assert result.dropped_hints == {"q1": [1]}
    assert result.common_word_answers == ["q3"]
    assert result.counts() == {"hints_dropped": 1, "questions_with_leaks": 1, "questions_dropped": 0}


def test_drop_question_policy():
    result = apply_leak_policy(questions(), policy="drop-question")
    assert [q.id for q in result.questions] == ["q2", "q3"]
    assert result.dropped_questions == ["q1"]
    assert result.counts()["questions_dropped"] == 1


class EverythingLeaks:
    name = "paranoid"

    def leaks(self, hint, answers):
        return "city" in hint.lower()


def test_custom_judge_plugs_in_through_the_protocol():
    judge_ = EverythingLeaks()
    assert isinstance(judge_, LeakJudge) and isinstance(StringLeakJudge(), LeakJudge)
    result = apply_leak_policy(questions(), judge_)
    assert result.dropped_hints == {"q1": [0], "q2": [0]}


def test_unknown_policy():
    with pytest.raises(InputError, match="leak policy"):
        apply_leak_policy(questions(), policy="drop-all")


def test_real_wikihint_test_62_keeps_all_five_hints(wikihint_file):
    from inferqa.data import load_questions

    q = next(q for q in load_questions(wikihint_file) if q.id == "test_62")
    assert any(h.text.startswith("It is the first") for h in q.hints)
    assert not any(judge.leaks(h.text, q.answers) for h in q.hints)


def test_none_policy_keeps_leaking_hints():
    result = apply_leak_policy(questions(), policy="none")
    assert [len(q.hints) for q in result.questions] == [3, 2, 2] and result.counts()["hints_dropped"] == 0
