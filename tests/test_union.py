"""Context merging: union_norm / union_freq / concat on hand-worked cases."""

import pytest

from inferqa.errors import InputError
from inferqa.reading import build_context, concat, merge, union_freq, union_norm


def test_union_norm_keeps_first_occurrence_order():
    assert union_norm([["a", "b"], ["c", "a"], ["b", "d"]]) == ["a", "b", "c", "d"]
    assert union_norm([]) == []
    assert union_norm([["x"]]) == ["x"]


def test_union_freq_hand_worked():
    # a: 0.6*1 + 0.4*1 = 1.0;  b: 0.6*(1 + 1/2) + 0.4*(1/2 + 1) = 1.5;  c: 0.6/2 + 0.4/2 = 0.5
    assert union_freq([["a", "b"], ["b", "c"]]) == ["b", "a", "c"]


def test_union_freq_alpha_beta_change_the_order():
    lists = [["a", "b", "c"], ["c", "d"], ["c"]]
    # alpha only: a=1, b=1, c=1+1/2+1/3, d=1/2  -> c, a, b (tie a/b by first occurrence), d
    assert union_freq(lists, alpha=1.0, beta=0.0) == ["c", "a", "b", "d"]
    # beta only: a=1, b=1/2, c=1/3+1+1=2.33, d=1/2 -> c, a, b, d (b before d: first occurrence)
    assert union_freq(lists, alpha=0.0, beta=1.0) == ["c", "a", "b", "d"]
    # defaults: a=0.6+0.4=1.0, b=0.6+0.2=0.8, c=0.6*(1+.5+.333)+0.4*(1/3+1+1)=2.0333, d=0.3+0.2=0.5
    assert union_freq(lists) == ["c", "a", "b", "d"]
    # s occurs twice, but always late inside its passages
    lists2 = [["p", "q", "r", "s"], ["x", "s"]]
    # alpha=1, beta=0: s = 1 + 1/2 = 1.5 beats p = 1
    assert union_freq(lists2, alpha=1.0, beta=0.0)[0] == "s"
    # alpha=0, beta=1: s = 1/4 + 1/2 = 0.75; p = x = 1 -> p (first seen), x, then s
    assert union_freq(lists2, alpha=0.0, beta=1.0)[:3] == ["p", "x", "s"]


def test_union_freq_ties_by_first_occurrence():
    # x and y appear once each in identical rank/position patterns mirrored: x (rank1,pos2), y (rank2,pos1)
    # x = 0.5*1 + 0.5*1/2 = 0.75, y = 0.5*1/2 + 0.5*1 = 0.75 -> tie, x first seen
    assert union_freq([["w", "x"], ["y"]], alpha=0.5, beta=0.5) == ["w", "x", "y"]


def test_concat_keeps_repeats():
    assert concat([["a", "b"], ["b"]]) == ["a b", "b"]


def test_merge_rejects_unknown_strategy():
    with pytest.raises(InputError, match="unknown strategy 'union_magic' \\(did you mean 'union_norm'\\?\\); available: concat, evidence_vote, union_freq, union_norm"):
        merge([["a"]], "union_magic")


class _Bench:
    """The one method build_context needs, with hints of question q1."""
    hints = ["h0", "h1", "h2", "h3", "h4"]

    def hints_of(self, pid):
        from inferqa.records import parse_passage_id
        _, order = parse_passage_id(pid)
        return [self.hints[i] for i in order]


def test_build_context_from_passage_ids():
    pids = ["q1_11000_10", "q1_11100_201"]  # [h1, h0], [h2, h0, h1]
    assert build_context(_Bench(), pids, "union_norm") == "- h1\n- h0\n- h2"
    # union_freq: h1: .6*(1+.5)+.4*(1+1/3)=1.4333, h0: .6*1.5+.4*(.5+.5)=1.3, h2: .3+.4=0.7
    assert build_context(_Bench(), pids, "union_freq") == "- h1\n- h0\n- h2"
    assert build_context(_Bench(), pids, "concat") == "- h1 h0\n- h2 h0 h1"
