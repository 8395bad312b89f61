"""Answer cleaning and scoring: EM with SQuAD normalisation, F1, contains, the LLM judge's vote."""

import pytest

from inferqa.errors import InputError
from inferqa.llm.base import LLM, GenerationParams
from inferqa.evaluation.exact_match import NO_ANSWER, clean_answer_ours as clean_answer, contains, exact_match, f1
from inferqa.reading import answer_judge


@pytest.mark.parametrize("pred,golds,expected", [
    ("The Beatles", ["Beatles"], True),              # article dropped
    ("beatles!", ["The Beatles"], True),             # case and punctuation
    ("  Mount   Everest ", ["mount everest"], True),  # whitespace
    ("Pelé", ["Pele"], True),                        # accents
    ("Ubbo-Sathla", ["Ubbosathla"], True),           # SQuAD drops punctuation, no space
    ("Paris", ["London", "paris, france", "Paris"], True),  # any alias
    ("Paris, France", ["Paris"], False),
    ("an apple", ["Apple Inc"], False),
    (NO_ANSWER, ["no answer"], False),               # abstention never matches
    ("", [""], False),
])
def test_exact_match(pred, golds, expected):
    assert exact_match(pred, golds) is expected


def test_f1_hand_worked():
    # pred tokens {paris, france}, gold {paris}: P=1/2, R=1, F1=2/3
    assert f1("Paris, France", ["Paris"]) == pytest.approx(2 / 3)
    # best over aliases
    assert f1("Paris, France", ["Lyon", "Paris France"]) == pytest.approx(1.0)
    # 'new york city' vs 'new york': P=2/3, R=1 -> 0.8
    assert f1("New York City", ["the New York"]) == pytest.approx(0.8)
    assert f1(NO_ANSWER, ["x"]) == 0.0
    assert f1("Rome", ["Paris"]) == 0.0


def test_contains_whole_words():
    assert contains("It is Mount Everest", ["Everest"])
    assert not contains("Everestine", ["Everest"])
    assert contains("the river Nile.", ["Nile"])
    assert not contains(NO_ANSWER, ["no answer"])


@pytest.mark.parametrize("raw,expected", [
    ("Mars", "Mars"),
    ("  \n\"Mars\"\n", "Mars"),
    ("Let me think.\nThe hints point to a planet.\nMars", "Mars"),  # last non-empty line
    ("[William Shakespeare]", "William Shakespeare"),
    ("Answer: 'Italy'.", "Italy"),
    ("The answer is Elephant.", "Elephant"),
    ("It is Mars", "Mars"),
    ("It's the Nile.", "the Nile"),
    ("Itzhak Perlman", "Itzhak Perlman"),
    ("It was discovered by a team of astronomers in Chile.", NO_ANSWER),
    ("NO ANSWER", NO_ANSWER),
    ("I don't know.", NO_ANSWER),
    ("Sorry, the hints are not enough to answer.", NO_ANSWER),
    ("unknown", NO_ANSWER),
    ("", NO_ANSWER),
    ("The hints describe a famous scientist who worked in physics and chemistry in France.", NO_ANSWER),
    ("It was discovered by a team of astronomers.", NO_ANSWER),  # full sentence
    ("The Lord of the Rings", "The Lord of the Rings"),
    ("St. Louis", "St. Louis"),
])
def test_clean_answer(raw, expected):
    assert clean_answer(raw) == expected


class ScriptedJudge(LLM):
    """A backend double that replies from a script and records the sampling seeds it got."""
    backend, model, mode = "scripted", "judge", "chat"

    def __init__(self, replies):
        self.replies = list(replies)
        self.seeds = []

    def complete(self, prompts, params=GenerationParams()):
        raise AssertionError("chat backend")

    def chat(self, conversations, params=GenerationParams()):
        self.seeds.append(params.seed)
        assert "Proposed answer: the red planet" in conversations[0][-1]["content"]
        return [self.replies.pop(0) for _ in conversations]

    def logprob(self, prompt, continuation):
        raise AssertionError


def vote(llm, question, pred, golds, **options):
    return answer_judge("llm", llm=llm, **options).correct(question, pred, golds)


def test_llm_answer_judge_majority_of_three():
    judge = ScriptedJudge(["Yes.", "no", "YES, they match"])
    assert vote(judge, "Which planet?", "the red planet", ["Mars"], samples=3, temperature=0.7)
    assert judge.seeds == [0, 1, 2]  # distinct samples: distinct cache entries
    judge = ScriptedJudge(["yes", "No", "maybe"])  # unparseable counts as no
    assert not vote(judge, "Which planet?", "the red planet", ["Mars"])
    judge = ScriptedJudge(["yes"])
    assert vote(judge, "Which planet?", "the red planet", ["Mars"], temperature=0.0)
    assert judge.seeds == [None]  # greedy: one sample is enough


def test_llm_answer_judge_short_circuits_and_checks_options():
    judge = ScriptedJudge([])
    assert vote(judge, "q", "Mars", ["mars"])  # exact match needs no call
    assert not vote(judge, "q", NO_ANSWER, ["mars"])
    assert judge.seeds == []
    with pytest.raises(InputError, match="answer-judge 'llm': option 'samples' takes an integer ≥ 1, not 0"):
        answer_judge("llm", llm=judge, samples=0)
    exact = answer_judge("exact-match")
    assert exact.correct("q", "The Mars", ["mars"]) and not exact.correct("q", "Venus", ["mars"])


def test_evaluate_answers_split_scores_only_that_splits_rows(tmp_path, monkeypatch, capsys, demo_bench_8q):
    import json

    from conftest import one_line_error, run_cli

    bench = demo_bench_8q
    test, train = bench.split_qids("test"), bench.split_qids("train")
    rows = [{"qid": q, "strategy": "union_norm", "k": 1, "prediction": bench.questions[q].answers[0]}
            for q in test[:2]] + [{"qid": q, "strategy": "union_norm", "k": 1, "prediction": "wrong"} for q in train[:3]]
    path = tmp_path / "answers.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    code, out, err = run_cli(monkeypatch, capsys, "evaluate-answers", path, "--bench", bench.path, "--json")
    assert code in (0, None), err
    assert json.loads(out)[0]["n"] == 5 and json.loads(out)[0]["em"] == pytest.approx(2 / 5)
    code, out, err = run_cli(monkeypatch, capsys, "evaluate-answers", path, "--bench", bench.path, "--split", "test",
                             "--json")
    assert code in (0, None), err
    assert json.loads(out)[0]["n"] == 2 and json.loads(out)[0]["em"] == 1.0
    code, _, err = run_cli(monkeypatch, capsys, "evaluate-answers", path, "--split", "test")
    one_line_error(code, err, "split needs a benchmark")
    code, _, err = run_cli(monkeypatch, capsys, "evaluate-answers", path, "--bench", bench.path, "--split", "dev")
    one_line_error(code, err, "no row of split 'dev'") if bench.split_qids("dev") else one_line_error(code, err, "dev")
