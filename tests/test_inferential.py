"""Adaptive diversification: a query is diversified only when its top hint-group leads the
next group by less than the margin; margins worked by hand."""

from __future__ import annotations

import pytest

from inferqa.formats import Benchmark, Run
from inferqa.errors import InputError
from inferqa.hints import hint_group_key
from inferqa.records import Hint, Question, passage_id
from inferqa.diversification import diversify, group_margin


@pytest.fixture(scope="module")
def families(bench_factory) -> Benchmark:
    """q1 and q2 share 'It is red.' (one linked family); q3 shares nothing."""
    qs = [Question("q1", "Which planet?", ["Mars"], [Hint("It is red."), Hint("It is fourth."), Hint("It is dusty.")]),
          Question("q2", "Which fruit?", ["Apple"], [Hint("It is red."), Hint("It grows on trees."),
                                                     Hint("It keeps doctors away.")]),
          Question("q3", "Which metal?", ["Gold"], [Hint("It is yellow."), Hint("It is heavy."), Hint("It is rare.")])]
    return bench_factory(qs, leak_policy="none", split=(0.0, 0.0, 1.0))


def pid(qid, *order):
    return passage_id(qid, order, 3)


# qa: top family {q1,q2} at 5.0, next family q3 at 2.0 -> margin 3.0
QA = [(pid("q1", 0), 5.0), (pid("q2", 1), 4.0), (pid("q1", 1, 2), 3.0), (pid("q3", 0), 2.0)]
# qb: top family q3 at 3.0, next family {q1,q2} at 2.5 -> margin 0.5
QB = [(pid("q3", 0), 3.0), (pid("q3", 1, 2), 2.8), (pid("q1", 0), 2.5), (pid("q2", 1), 1.0)]


def test_margins_by_hand(families):
    key = hint_group_key(families, "linked")
    assert group_margin(QA, key) == pytest.approx(3.0)
    assert group_margin(QB, key) == pytest.approx(0.5)
    assert group_margin(QA[:3], key) == float("inf")  # one family only


@pytest.mark.parametrize("margin, diversified", [(None, {"q1", "q2"}), (4.0, {"q1", "q2"}), (1.0, {"q2"}),
                                                 (0.5, set()), (0.0, set())])
def test_gate_diversifies_only_queries_below_the_margin(families, margin, diversified):
    run = Run({"q1": QA, "q2": QB})
    out = diversify(run, families, 1, by="linked", margin=margin)
    full = {"q1": [pid("q1", 0), pid("q3", 0), pid("q2", 1), pid("q1", 1, 2)],
            "q2": [pid("q3", 0), pid("q1", 0), pid("q3", 1, 2), pid("q2", 1)]}
    for qid, ranked in run.items():
        expect = full[qid] if qid in diversified else [p for p, _ in ranked]
        assert [p for p, _ in out[qid]] == expect


@pytest.mark.parametrize("bad", [-0.1, "x"])
def test_margin_out_of_range_is_one_line(families, bad):
    with pytest.raises(InputError) as exc:
        diversify(Run({"q1": QA}), families, 1, by="linked", margin=bad)
    assert "diversify_margin" in str(exc.value) and "\n" not in str(exc.value)
