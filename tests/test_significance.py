"""Bootstrap intervals and the paired randomisation test: hand-worked cases and scipy."""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from inferqa.evaluation.significance import bootstrap_cis, paired_tests

stats = pytest.importorskip("scipy.stats")


def _randomisation(diffs, **kw):
    """(p, exact) of the sign-flip test of mean(diffs) = 0, through `paired_tests` (diffs against 0)."""
    t = paired_tests(np.asarray(diffs, dtype=float), np.zeros(len(diffs)), **kw)[0]
    return t.p, t.exact


def _ci(values, **kw):
    """One vector's interval, through `bootstrap_cis`."""
    lo, hi = bootstrap_cis(values, **kw)[0]
    return float(lo), float(hi)


def _one(a, b, **kw):
    """One paired test of two vectors, through `paired_tests`."""
    return paired_tests(a, b, **kw)[0]


def test_randomisation_p_hand_worked():
    # d = (2, 1): sign sums 3, 1, -1, -3; |sum| >= 3 in 2 of 4 patterns
    assert _randomisation([2, 1]) == (0.5, True)
    # four questions A got right and B wrong, one both right: only all-plus / all-minus reach 4
    p, exact = _randomisation([1, 1, 1, 1, 0])
    assert exact and p == pytest.approx(2 / 16)
    # no difference at all
    assert _randomisation([0, 0, 0]) == (1.0, True)
    # d = (1, 1, -1): sums over 8 patterns are ±3 (2 of them) and ±1 (6); observed |1| -> p = 1
    assert _randomisation([1, 1, -1])[0] == 1.0


def test_randomisation_p_equals_scipy_exact():
    rng = np.random.default_rng(3)
    a = rng.random(11)
    b = a - rng.normal(0.15, 0.2, 11)
    ours, exact = _randomisation(a - b)
    ref = stats.permutation_test((a, b), lambda x, y: np.mean(x - y), permutation_type="samples",
                                 n_resamples=np.inf, alternative="two-sided")
    assert exact
    assert ours == pytest.approx(ref.pvalue, abs=1e-12)


def test_monte_carlo_p_is_close_to_exact_and_seeded():
    rng = np.random.default_rng(5)
    d = rng.normal(0.1, 1.0, 13)  # 8,192 patterns
    exact, is_exact = _randomisation(d, resamples=10_000)
    mc, mc_exact = _randomisation(d, resamples=4_000, seed=1)
    assert is_exact and not mc_exact
    assert mc == pytest.approx(exact, abs=0.03)
    assert _randomisation(d, resamples=4_000, seed=1) == (mc, False)


def test_bootstrap_constant_and_exact_enumeration():
    assert _ci([0.5, 0.5, 0.5]) == (0.5, 0.5)
    # n = 4: every one of the 4^4 resamples enumerated gives the exact bootstrap distribution
    x = np.array([0.0, 1.0, 1.0, 3.0])
    means = np.array([x[list(idx)].mean() for idx in product(range(4), repeat=4)])
    lo, hi = np.quantile(means, [0.025, 0.975])
    ours = _ci(x, resamples=40_000, seed=2)
    assert ours[0] == pytest.approx(lo, abs=0.13) and ours[1] == pytest.approx(hi, abs=0.13)


def test_bootstrap_agrees_with_scipy_percentile():
    rng = np.random.default_rng(7)
    em = (rng.random(60) < 0.4).astype(float)
    ours = _ci(em, seed=0)
    ref = stats.bootstrap((em,), np.mean, method="percentile", n_resamples=10_000, random_state=0).confidence_interval
    assert ours[0] == pytest.approx(ref.low, abs=0.02) and ours[1] == pytest.approx(ref.high, abs=0.02)
    assert ours[0] < em.mean() < ours[1]


def test_rows_share_resamples_and_nan_is_left_out():
    rng = np.random.default_rng(1)
    m = rng.random((3, 40))
    m[1, :10] = np.nan
    m[2, :] = np.nan
    both = bootstrap_cis(m, seed=4)
    assert np.allclose(both[0], bootstrap_cis(m[0], seed=4)[0])  # same seed, same resamples, row by row
    assert np.allclose(both[1], bootstrap_cis(m[1], seed=4)[0])
    assert np.isnan(both[2]).all()
    # leaving questions out is close to bootstrapping the defined ones alone
    alone = _ci(m[1, 10:], seed=4)
    assert both[1][0] == pytest.approx(alone[0], abs=0.03) and both[1][1] == pytest.approx(alone[1], abs=0.03)


def test_paired_test_record():
    a = [1, 1, 1, 1, 0, 1, np.nan]
    b = [0, 0, 0, 0, 0, 1, 1]
    t = _one(a, b)
    assert t.n == 6 and t.exact
    assert t.mean_a == pytest.approx(5 / 6) and t.mean_b == pytest.approx(1 / 6)
    assert t.diff == pytest.approx(4 / 6)
    assert t.p == pytest.approx(2 / 16)
    assert 0 < t.ci_low <= t.diff <= t.ci_high <= 1
    with pytest.raises(ValueError):
        _one([1, 0], [1])
