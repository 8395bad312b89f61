"""Reranker plumbing and logic: registry, run in/run out, resumability, the permutation parser,
sliding windows, and the LLM rerankers' prompts/scoring on a scripted fake LLM.

The fake LLM is a test double for logic only; the real SmolLM2 runs in test_rerank_llm.py.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from inferqa.formats.benchmark import Benchmark
from inferqa.errors import InputError
from inferqa.llm.base import LLM, GenerationParams
from inferqa.records import Hint, Question
from inferqa.formats import Run
from inferqa import registry
from inferqa.reranking import get_reranker, listwise_order, parse_permutation, sliding_windows
from inferqa.reranking.base import Reranker
from inferqa.reranking.permutation import order_to_scores

WORDS = ["alpha", "bravo", "charlie", "delta"]


@pytest.fixture
def make_bench(bench_factory):
    """`make_bench(n_questions=3, n_hints=3)`: every ordering of every hint subset, labelled 2
    when it holds every hint, else 1 when it holds hint 0, else 0."""
    def make(n_questions: int = 3, n_hints: int = 3) -> Benchmark:
        questions = []
        for q in range(n_questions):
            qid = f"q_{q}"  # an underscore in the id, as real ids may have
            hints = [Hint(f"hint {WORDS[h]} of question {q}") for h in range(n_hints)]
            questions.append(Question(qid, f"Which thing is question {q} about?", [f"answer {q}"], hints))
        return bench_factory(questions, top_k=n_hints, leak_policy="none",
                             relabel=lambda qid, order: 2 if len(order) == n_hints else int(0 in order))

    return make


def make_run(bench: Benchmark, per_question: int = 8) -> Run:
    run = Run(tag="test")
    for qid in bench.questions:
        pids = sorted(bench.qrels[qid])[:per_question]
        run[qid] = [(pid, float(len(pids) - i)) for i, pid in enumerate(pids)]
    return run


class LengthReranker(Reranker):
    """Scores a passage by its number of words: easy to check by hand."""

    name = "length"

    def __init__(self):
        self.calls: list[str] = []

    def score(self, query, texts):
        self.calls.append(query)
        return [float(len(t.split())) for t in texts]


# --- run in, run out ----------------------------------------------------------------------

def test_rerank_head_sorted_tail_kept_and_passage_set_kept(make_bench):
    bench = make_bench()
    run = make_run(bench, per_question=8)
    out = LengthReranker().rerank(run, bench, depth=5)
    assert list(out) == list(run)
    for qid, ranked in run.items():
        new = out[qid]
        assert sorted(p for p, _ in new) == sorted(p for p, _ in ranked)
        head = [p for p, _ in new[:5]]
        # expected head by hand: by word count, descending; ties keep the incoming order
        expect = sorted([p for p, _ in ranked[:5]], key=lambda p: -len(bench.passage_text(p).split()))
        assert head == expect
        assert [p for p, _ in new[5:]] == [p for p, _ in ranked[5:]]
        scores = [s for _, s in new]
        assert scores == sorted(scores, reverse=True)
        # tail keeps its score differences, sitting 1 below the head's lowest score
        assert new[5][1] == pytest.approx(new[4][1] - 1.0)
        assert new[6][1] - new[7][1] == pytest.approx(ranked[6][1] - ranked[7][1])


def test_rerank_output_round_trips_through_trec_file(make_bench, tmp_path):
    bench = make_bench()
    out = LengthReranker().rerank(make_run(bench), bench, depth=3)
    out.to_file(tmp_path / "r.trec")
    back = Run.from_file(tmp_path / "r.trec")  # Run.from_file rejects unsorted or duplicate lines
    assert {q: [p for p, _ in r] for q, r in back.items()} == {q: [p for p, _ in r] for q, r in out.items()}


def test_rerank_qids_subset_and_errors(make_bench):
    bench = make_bench()
    run = make_run(bench)
    out = LengthReranker().rerank(run, bench, depth=100, qids=["q_2", "q_0"])
    assert list(out) == ["q_2", "q_0"]
    with pytest.raises(InputError, match="not in the run"):
        LengthReranker().rerank(run, bench, qids=["nope"])
    with pytest.raises(InputError, match="depth"):
        LengthReranker().rerank(run, bench, depth=0)
    bad = Run({"zz": [("zz_100_0", 1.0)]})
    with pytest.raises(InputError, match="not in the benchmark"):
        LengthReranker().rerank(bad, bench)


def test_rerank_resumes_from_checkpoint(make_bench, tmp_path):
    bench = make_bench()
    run = make_run(bench)
    ckpt = tmp_path / "ckpt.jsonl"

    class Crashing(LengthReranker):
        def score(self, query, texts):
            if len(self.calls) == 2:
                raise KeyboardInterrupt
            return super().score(query, texts)

    with pytest.raises(KeyboardInterrupt):
        Crashing().rerank(run, bench, depth=4, checkpoint=ckpt)
    with open(ckpt, "a") as fh:
        fh.write('{"qid": "q_2", "rank')  # a torn line from a kill mid-write
    again = LengthReranker()
    resumed = again.rerank(run, bench, depth=4, checkpoint=ckpt)
    assert len(again.calls) == 1  # only the third question was scored again
    assert resumed == LengthReranker().rerank(run, bench, depth=4)
    # another depth, or another input ranking, is another computation: not reused
    fresh = LengthReranker()
    fresh.rerank(run, bench, depth=3, checkpoint=ckpt)
    assert len(fresh.calls) == 3
    reordered = Run({q: list(reversed(r)) for q, r in run.items()})
    other = LengthReranker()
    other.rerank(reordered, bench, depth=3, checkpoint=ckpt)
    assert len(other.calls) == 3


def test_registry_names_and_option_errors():
    assert {"llm-pointwise", "llm-listwise", "upr", "cross-encoder", "monot5", "rankt5", "lit5",
            "oracle"} <= \
        set(registry.available("reranker"))
    with pytest.raises(InputError, match="unknown reranker 'bm42'"):
        get_reranker("bm42")
    with pytest.raises(InputError, match="has no option 'windoww'; its options: model, batch_size"):
        get_reranker("cross-encoder", windoww=3)
    with pytest.raises(InputError, match="option 'llm_options' takes a mapping or null, not '\\[1\\]'"):
        get_reranker("llm-pointwise", llm_options="[1]")
    with pytest.raises(InputError, match="has no option 'model' \\(did you mean 'llm'\\?\\)"):
        get_reranker("upr", model="smollm2")
    rr = get_reranker("monot5", model="some/model", batch_size=None)  # None means the default, nothing loads
    assert rr.model_name == "some/model" and rr.batch_size == 16
    assert get_reranker("llm-pointwise", llm_options='{"cache": null}')._llm_options == {"cache": None}


# --- permutation parsing and windows -------------------------------------------------------

@pytest.mark.parametrize("text, n, expected", [
    ("[2] > [3] > [1]", 3, [1, 2, 0]),
    ("Sure! Here is the ranking of the 4 passages:\n[3] > [1] > [4] > [2]\nPassage [3] is best.", 4, [2, 0, 3, 1]),
    ("[2] > [2] > [1] > [3]", 3, [1, 0, 2]),                 # duplicate
    ("[2] > [9] > [0] > [1]", 3, [1, 0, 2]),                 # out of range (9, and 0 with 1-based ids)
    ("[3] > [1]", 4, [2, 0, 1, 3]),                          # missing ids follow in given order
    ("[4] > [2] > [", 5, [3, 1, 0, 2, 4]),                   # cut off mid-answer
    ("3 > 1 > 2", 3, [2, 0, 1]),                             # no brackets
    ("The most relevant is [2], then [1].", 3, [1, 0, 2]),   # prose, bracketed ids only
    ("2, 1, 3", 3, [1, 0, 2]),                               # comma list
    ("I cannot rank these passages.", 3, [0, 1, 2]),         # nothing usable: keep the order
    ("", 2, [0, 1]),
    ("In 2021 there were 7 items. Ranking: [1] > [3] > [2]", 3, [0, 2, 1]),
])
def test_parse_permutation_repairs(text, n, expected):
    assert parse_permutation(text, n) == expected


def test_sliding_windows_bottom_up():
    assert sliding_windows(100, 20, 10)[0] == (80, 100)
    assert sliding_windows(100, 20, 10)[-1] == (0, 20)
    assert len(sliding_windows(100, 20, 10)) == 9
    assert sliding_windows(25, 20, 10) == [(5, 25), (0, 15)]  # top always covered
    assert sliding_windows(7, 20, 10) == [(0, 7)]
    with pytest.raises(ValueError):
        sliding_windows(10, 3, 4)


def test_listwise_order_hand_worked():
    # relevance by original position; a perfect window ranker sorts each window
    rel = [1, 5, 2, 4, 3]
    order = listwise_order(5, 3, 2, lambda idx: sorted(range(len(idx)), key=lambda k: -rel[idx[k]]))
    # window (2,5): rel 2,4,3 -> 4,3,2 ; window (0,3): rel 1,5,4 -> 5,4,1  => 5,4,1,3,2
    assert [rel[i] for i in order] == [5, 4, 1, 3, 2]
    assert order_to_scores(order) == [3.0, 5.0, 1.0, 4.0, 2.0]
    with pytest.raises(ValueError):
        listwise_order(3, 3, 1, lambda idx: [0, 0, 1])


# --- LLM rerankers on a scripted fake ---------------------------------------------------------

class ScriptedLLM(LLM):
    """logprob: +1 per occurrence of `word` in the prompt for " yes", 0 for " no", and for
    UPR the negative prompt length; chat: ranks the window's passages by how often `word`
    occurs, optionally wrapped in prose and with a duplicate and a bogus id."""

    backend, model = "scripted", "fake"

    def __init__(self, word: str, messy: bool = False):
        self.word, self.messy = word, messy
        self.logprob_calls: list[tuple[str, str]] = []
        self.chats: list[list[dict]] = []

    def complete(self, prompts, params=GenerationParams()):
        raise AssertionError("rerankers do not use complete()")

    def chat(self, conversations, params=GenerationParams()):
        out = []
        for conv in conversations:
            self.chats.append(list(conv))
            passages = [m["content"] for m in conv if m["role"] == "user" and re.match(r"\[\d+\] ", m["content"])]
            ranked = sorted(range(len(passages)), key=lambda i: -passages[i].count(self.word))
            ids = " > ".join(f"[{i + 1}]" for i in ranked)
            if self.messy:
                ids = f"Here you go: {ids.replace(' > ', ' > [99] > ', 1)} > [{ranked[0] + 1}]. Done."
            out.append(ids)
        return out

    def logprob(self, prompt, continuation):
        self.logprob_calls.append((prompt, continuation))
        if continuation == " yes":
            return float(prompt.count(self.word))
        if continuation == " no":
            return 0.0
        return -float(len(prompt))


def test_llm_pointwise_scores_are_yes_minus_no(make_bench):
    bench = make_bench()
    run = make_run(bench, per_question=10)
    llm = ScriptedLLM("alpha")
    out = get_reranker("llm-pointwise", llm=llm).rerank(run, bench, depth=10, qids=["q_1"])
    for pid, score in out["q_1"]:
        assert score == bench.passage_text(pid).count("alpha")
    assert [s for _, s in out["q_1"]] == sorted((s for _, s in out["q_1"]), reverse=True)
    prompts = {p for p, _ in llm.logprob_calls}
    assert len(prompts) == 10 and len(llm.logprob_calls) == 20
    assert all("Which thing is question 1 about?" in p for p in prompts)


def test_upr_prefers_higher_likelihood_and_mean_equals_sum_order(make_bench):
    bench = make_bench()
    run = make_run(bench, per_question=10)
    llm = ScriptedLLM("alpha")
    summed = get_reranker("upr", llm=llm).rerank(run, bench, depth=10, qids=["q_0"])
    # the fake's log P(question | passage) is minus the prompt length: shortest passage first
    lengths = [len(bench.passage_text(p)) for p, _ in summed["q_0"]]
    assert lengths == sorted(lengths)
    assert all(c == " Which thing is question 0 about?" for _, c in llm.logprob_calls)
    mean = get_reranker("upr", llm=llm, reduction="mean").rerank(run, bench, depth=10, qids=["q_0"])
    assert [p for p, _ in mean["q_0"]] == [p for p, _ in summed["q_0"]]
    n_words = len("Which thing is question 0 about?".split())
    assert mean["q_0"][0][1] == pytest.approx(summed["q_0"][0][1] / n_words)
    with pytest.raises(InputError, match="option 'reduction' takes one of sum, mean, not 'max'"):
        get_reranker("upr", llm=llm, reduction="max")
    with pytest.raises(InputError, match="option 'window' takes an integer ≥ 2, not 0"):
        get_reranker("llm-listwise", llm=llm, window=0)


@pytest.mark.parametrize("messy", [False, True])
def test_llm_listwise_sliding_windows_bring_best_to_top(make_bench, messy):
    bench = make_bench(n_hints=3)
    run = make_run(bench, per_question=15)
    llm = ScriptedLLM("alpha", messy=messy)
    rr = get_reranker("llm-listwise", llm=llm, window=6, step=3)
    out = rr.rerank(run, bench, depth=12, qids=["q_0"])
    assert len(llm.chats) == len(sliding_windows(12, 6, 3)) == 3
    counts = [bench.passage_text(p).count("alpha") for p, _ in out["q_0"][:12]]
    before = [bench.passage_text(p).count("alpha") for p, _ in run["q_0"][:12]]
    # one bottom-up pass with a perfect window ranker puts the best (window - step) on top
    assert counts[:3] == sorted(before, reverse=True)[:3]
    assert sorted(counts) == sorted(before)
    assert [p for p, _ in out["q_0"][12:]] == [p for p, _ in run["q_0"][12:]]
    first = llm.chats[0]
    assert first[0]["role"] == "system" and "Which thing is question 0 about?" in first[-1]["content"]
    assert sum(1 for m in first if m["role"] == "user" and m["content"].startswith("[")) == 6


def test_llm_rerankers_config_names_the_model():
    llm = ScriptedLLM("x")
    assert get_reranker("llm-pointwise", llm=llm).config()["llm"] == "scripted:fake"
    assert get_reranker("llm-listwise", llm=llm).config()["window"] == 20
    assert json.dumps(get_reranker("upr", llm=llm).config())  # checkpoint header is JSON


def test_reranker_defaults_come_from_the_option_table(monkeypatch):
    """get_reranker(NAME) with no options is built from its declared defaults alone: its config
    reports them and its LLM is the declared spec (no constructor has a default of its own:
    test_registry.test_constructors_take_resolved_settings)."""
    import inferqa.llm

    loaded = []
    monkeypatch.setattr(inferqa.llm, "load_llm", lambda spec, **kw: loaded.append(spec) or ScriptedLLM("x"))
    for p in registry.plugins("reranker"):
        declared = {name: opt.default for name, opt in p.options.items()}
        config = get_reranker(p.name).config()
        assert config.pop("reranker") == p.name
        if "llm" in declared:
            assert config.pop("llm") == "scripted:fake" and loaded.pop() == declared["llm"]
        assert {k: declared[k] for k in config} == config, p.title


def test_cli_option_parsing():
    from inferqa.reranking.run import checkpoint_path
    from inferqa.option_values import parse_key_values

    assert parse_key_values(["window=10", "reduction=mean", "use-x=true", "t=0.5", "y=no"], "option") == \
        {"window": "10", "reduction": "mean", "use_x": "true", "t": "0.5", "y": "no"}  # typed by the registry
    with pytest.raises(InputError, match="--option expects KEY=VALUE"):
        parse_key_values(["window"], "option")
    assert checkpoint_path(Path("runs/x.trec")) == Path("runs/.x.trec.rerank-checkpoint.jsonl")
