"""Evidence-set reading: each hint-group of the top-k read alone, answers voted by score."""

from __future__ import annotations

import pytest

from inferqa.llm.base import LLM, GenerationParams
from inferqa.reading import NO_ANSWER, evidence_sets, read_with_llm, vote
from inferqa.records import Hint, passage_id, Question
from inferqa.formats import Run


class FirstWord(LLM):
    """A reader double: the meaning of the first word of the first hint line; counts prompts."""
    backend, model = "first", "word"
    MEANING = {"Red": "Mars", "Hot": "Venus", "Two": "Mars"}

    def __init__(self):
        self.mode, self.prompts = "chat", []

    def chat(self, conversations, params=GenerationParams()):
        out = []
        for c in conversations:
            self.prompts.append(c[-1]["content"])
            word = c[-1]["content"].rsplit("Hints:\n", 1)[1].split("\n")[0][2:].split()[0]
            out.append(self.MEANING.get(word, word))
        return out

    def complete(self, prompts, params=GenerationParams()):
        raise AssertionError

    def logprob(self, prompt, continuation):
        raise AssertionError


@pytest.fixture
def bench(bench_factory, tmp_path):
    qs = [Question("a", "Which planet?", ["Mars"], [Hint("Red dust"), Hint("Hot clouds"), Hint("Two moons")])]
    return bench_factory(qs, root=tmp_path, split=(1.0, 0.0, 0.0), leak_policy="none")


def test_vote_by_hand():
    assert vote(["Mars", "mars.", "Venus"], [1, 1, 1.5]) == 0  # normalised answers pool their weights
    assert vote(["Venus", "Mars"], [1, 1]) == 0                 # a tie goes to the higher-ranked group
    assert vote([NO_ANSWER, "Mars"], [5, 1]) == 1               # abstentions do not vote
    assert vote([NO_ANSWER], [1]) is None


def test_groups_read_once_and_voted(bench):
    hint = {h.text: i for i, h in enumerate(bench.questions["a"].hints)}
    pid = lambda *texts: passage_id("a", tuple(hint[t] for t in texts), 3)
    ranked = [(pid("Hot clouds"), 3.0), (pid("Red dust", "Two moons"), 2.0), (pid("Two moons", "Red dust"), 1.5),
              (pid("Red dust"), 1.0)]
    sets = evidence_sets(bench, ranked)
    assert [s.hints for s in sets] == [("Hot clouds",), ("Red dust", "Two moons"), ("Red dust",)]
    assert [s.weight for s in sets] == [2.0, 1.5, 1.0]  # best passage's score scaled into [1, 2]
    assert sets[1].pids == (pid("Red dust", "Two moons"), pid("Two moons", "Red dust"))
    llm = FirstWord()
    rows = read_with_llm(bench, Run({"a": ranked}), llm, ["evidence_vote"], [1, 2, 3, 4], progress=False)
    by_k = {r["k"]: r for r in rows}
    # k=4: Venus 2.0 against Mars 1.5 + 1.0; k=3: Venus 2.0 against Mars 1 + 0.5/1.5
    assert [by_k[k]["prediction"] for k in (1, 2, 3, 4)] == ["Venus", "Venus", "Venus", "Mars"]
    assert [by_k[k]["em"] for k in (1, 2, 3, 4)] == [0.0, 0.0, 0.0, 1.0]
    assert [v["answer"] for v in by_k[4]["votes"]] == ["Venus", "Mars", "Mars"]
    assert by_k[4]["pids"] == [p for p, _ in ranked]
    assert len(llm.prompts) == 3  # one prompt per distinct hint-group, shared across k
