"""Choosing the adaptive diversification margin on a dev split: a benchmark whose dev
rankings are worked by hand, and the chosen margin, shares and means checked against them
and against `evaluate(diversify(...))` of each margin."""

from __future__ import annotations

import math

import pytest

from inferqa.construct import build_benchmark
from inferqa.errors import InputError
from inferqa.evaluate import evaluate
from inferqa.formats import Benchmark, Run
from inferqa.records import Hint, Question, passage_id
from inferqa.retrieve.diversify import diversify
from inferqa.tuning import margin_at_share, query_margins, tune_margin


def pid(qid, *order):
    return passage_id(qid, order, 3)


@pytest.fixture(scope="module")
def five(tmp_path_factory) -> Benchmark:
    """Five questions with their own hints (five linked families, one per question); a, b, c
    are dev, d and e test. Every passage of a question is relevant to it (label 1)."""
    qs = [Question(q, f"Question {q}?", [q.upper()], [Hint(f"{q} hint {i}.") for i in range(3)],
                   metadata={"split": "dev" if q in "abc" else "test"}) for q in "abcde"]
    out = tmp_path_factory.mktemp("tune") / "bench"
    build_benchmark(qs, out, top_k=3, leak_policy="none", split="source")
    return Benchmark(out)


C_TEN = [(0,), (1,), (2,), (0, 1), (1, 0), (0, 2), (2, 0), (1, 2), (2, 1), (0, 1, 2)]
RUN = {
    # a: its own family leads e's by 5.0 - 4.0 = 1.0; diversifying keeps a relevant passage at rank 1
    "a": [(pid("a", 0), 5.0), (pid("a", 1), 4.9), (pid("a", 2), 4.8), (pid("e", 0), 4.0)],
    # b: ten passages of c's family, then b's own at rank 11: margin 3.0 - 2.5 = 0.5;
    # diversified, b's passage is 2nd
    "b": [*[(pid("c", *o), 3.0 - 0.05 * i) for i, o in enumerate(C_TEN)], (pid("b", 0), 2.5)],
    # c: no passage of its own: 0 on every measure either way; margin 6.0 - 4.0 = 2.0
    "c": [(pid("a", 0), 6.0), (pid("d", 0), 4.0)],
    # d (test): margin 0.05; it must not count
    "d": [(pid("e", 0), 1.0), (pid("d", 0), 0.95)],
}


def test_margins_of_the_dev_queries(five):
    assert query_margins(Run(RUN).only(["a", "b", "c"]), five, "linked") == pytest.approx(
        {"a": 1.0, "b": 0.5, "c": 2.0})


def test_default_grid_picks_the_smallest_best_margin_on_dev_only(five):
    t = tune_margin(Run(RUN), five, split="dev", by="linked", measures=("hit@1", "hit@10", "mrr"))
    assert (t.split, t.questions, t.metric, t.per_group, t.by) == ("dev", 3, "hit@10", 1, "linked")
    # shares 0, .1..1 of 3 queries diversify 0, 1, 2 or 3 of them (sorted margins 0.5, 1.0, 2.0)
    by_margin = {r.margin: r for r in t.rows}
    assert list(by_margin) == [0.75, 1.5, None, 0.0]  # hit@10 2/3 three times (smaller first), then 1/3
    assert {m: r.share for m, r in by_margin.items()} == pytest.approx({0.0: 0, 0.75: 1 / 3, 1.5: 2 / 3, None: 1})
    hand = {0.0: {"hit@1": 1 / 3, "hit@10": 1 / 3, "mrr": (1 + 1 / 11) / 3},
            0.75: {"hit@1": 1 / 3, "hit@10": 2 / 3, "mrr": (1 + 1 / 2) / 3}}
    hand[1.5] = hand[None] = hand[0.75]  # a and c score the same diversified
    for m, r in by_margin.items():
        assert r.scores == pytest.approx(hand[m])
    assert t.margin == 0.75 and t.best is t.rows[0]


@pytest.mark.parametrize("metric", ["ndcg@10", "ndcg_exp@10", "recall@5"])
def test_each_rows_means_are_evaluate_of_diversify(five, metric):
    dev = Run(RUN).only(["a", "b", "c"])
    t = tune_margin(Run(RUN), five, split="dev", margins=[0, 0.6, 1.2, 3.0, None], by="linked", metric=metric)
    for r in t.rows:
        direct = evaluate(diversify(dev, five, 1, by="linked", margin=r.margin), five, [metric])[metric]
        assert r.scores[metric] == pytest.approx(direct)
    assert [r.scores[metric] for r in t.rows] == sorted((r.scores[metric] for r in t.rows), reverse=True)
    # a's head loses relevant passages when diversified: nDCG prefers 0.6 (b alone) over every larger margin
    if metric.startswith("ndcg"):
        assert t.margin == 0.6 and {r.margin: r.share for r in t.rows}[1.2] == pytest.approx(2 / 3)


def test_shares_pick_the_margin_quantile(five):
    t = tune_margin(Run(RUN), five, split="dev", shares=[0.4], by="linked")
    assert [(r.margin, r.share) for r in t.rows] == [(0.75, pytest.approx(1 / 3))]


@pytest.mark.parametrize("margins, share, expect", [
    ([0.5, 1.0, 2.0], 0.0, 0.0), ([0.5, 1.0, 2.0], 0.5, 1.5), ([0.5, 1.0, 2.0], 1.0, None),
    ([0.5, 0.5, 2.0], 1 / 3, 1.25),  # a tie takes both in
    ([0.5, math.inf], 0.5, None), ([0.2, 0.4, math.inf], 2 / 3, None)])
def test_margin_at_share_by_hand(margins, share, expect):
    assert margin_at_share(margins, share) == (expect if expect is None else pytest.approx(expect))


@pytest.mark.parametrize("kw, field", [({"margins": [0.1, -0.2]}, "diversify_margin"),
                                       ({"margins": [float("nan")]}, "diversify_margin"),
                                       ({"shares": [1.5]}, "shares"), ({"margins": []}, "margins"),
                                       ({"margins": [0.1], "shares": [0.5]}, "margins"),
                                       ({"split": "valid"}, "valid"), ({"by": "famliy"}, "famliy"),
                                       ({"metric": "hit@10,mrr"}, "metric"), ({"per_group": 0}, "diversify")])
def test_bad_tuning_inputs_are_one_line(five, kw, field):
    with pytest.raises(InputError) as exc:
        tune_margin(Run(RUN), five, **{"split": "dev", **kw})
    assert field in str(exc.value) and "\n" not in str(exc.value)
