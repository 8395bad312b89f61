"""Per-question statistics: bootstrap confidence intervals and every paired test.

All take per-question scores (a question's hit@10, or its EM under one setting), with NaN
where a metric is undefined for a question (the paper protocol's hit@k at label 2 without a
label-2 passage); those questions are left out, as in the means. Every function works on a
(rows × questions) matrix at once: rows share their resamples and sign flips, so the intervals and tests of
every metric and run of an experiment cost one pass, and they are seeded.

- `bootstrap_cis`: percentile bootstrap of the mean (one multinomial count matrix, then a
  matrix product).
- `paired_tests(a, b, test=...)`: A vs B, row by row, on the questions both define:
  - `randomisation` (default): two-sided paired randomisation (sign-flip) test of the mean
    difference (Fisher's test as used in IR, Smucker et al. 2007): under the null
    hypothesis, which setting produced which score of a question is a coin flip. Exact
    (every sign pattern) when at most `log2(resamples)` differences are non-zero, else Monte
    Carlo with the (count + 1) / (resamples + 1) estimate, which never returns 0. Its
    interval is the percentile bootstrap of the mean difference: a separate procedure,
    which only resamples the observed differences, so with few questions that differ it
    is too narrow and can exclude 0 while p >= 0.05 (read significance from p).
  - `t`: paired t-test; the interval is the t interval, so it excludes 0 exactly when
    p < 1 - confidence.
  - `bootstrap`: the percentile bootstrap of the mean difference, and as p twice the
    share of resampled means on the far side of 0 ((count + 1) / (resamples + 1)): the
    interval excludes 0 when p < 1 - confidence, up to the resampling's granularity.
- `adjust_p`: Holm or Bonferroni correction of a family of p-values; `format_p` prints one.

scipy.stats offers these (`bootstrap`, `permutation_test`, `ttest_rel`) one array at a
time; the tests check these against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Sequence

import numpy as np

from ..defaults import TEST_SEED
from ..errors import InputError
from ..parameters import CONFIDENCE, CORRECTIONS, RESAMPLES, TEST, TESTS
from ..tabular import MISSING

_BLOCK = 1_000  # resamples per block: bounds memory at block × questions
_TOL = 1e-12    # sums equal up to float noise count as "as extreme"


def _as_matrix(values) -> np.ndarray:
    m = np.asarray(values, dtype=float)
    return m[None, :] if m.ndim == 1 else m


def _bootstrap_means(m: np.ndarray, resamples: int, seed: int) -> np.ndarray:
    """(rows × resamples) means of each row over the same multinomial resamples (NaN left out)."""
    rows, n = m.shape
    defined = ~np.isnan(m)
    filled = np.where(defined, m, 0.0)
    rng = np.random.default_rng(seed)
    means = np.empty((rows, resamples))
    for start in range(0, resamples, _BLOCK):
        size = min(_BLOCK, resamples - start)
        counts = rng.multinomial(n, np.full(n, 1.0 / n), size=size).astype(float)  # size × n
        num = filled @ counts.T
        den = defined.astype(float) @ counts.T
        with np.errstate(invalid="ignore", divide="ignore"):
            means[:, start:start + size] = np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)
    return means


def _percentiles(means: np.ndarray, defined_rows: np.ndarray, confidence: float) -> np.ndarray:
    out = np.full((means.shape[0], 2), np.nan)
    alpha = (1.0 - confidence) / 2.0
    for i in np.flatnonzero(defined_rows):
        v = means[i][~np.isnan(means[i])]
        out[i] = np.quantile(v, [alpha, 1.0 - alpha])
    return out


def bootstrap_cis(values, *, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                  seed: int = TEST_SEED) -> np.ndarray:
    """(rows × 2) percentile-bootstrap intervals of each row's mean (NaN = left out).

    `values` is one vector or a (rows × questions) matrix aligned on the same questions;
    a row without defined values gets (NaN, NaN).
    """
    m = _as_matrix(values)
    if m.shape[1] == 0:
        return np.full((m.shape[0], 2), np.nan)
    return _percentiles(_bootstrap_means(m, resamples, seed), (~np.isnan(m)).any(axis=1), confidence)


@dataclass(frozen=True)
class PairedTest:
    """A vs B on the questions both define: means, difference A − B, its CI, p-value."""

    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    p: float
    exact: bool
    test: str = TEST.default

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def format_p(p: float | None) -> str:
    """A p-value as every table prints it: 3 decimals, below 0.001 as "<0.001"; None as MISSING."""
    return MISSING if p is None else "<0.001" if p < 0.001 else f"{p:.3f}"


def check_test(test: str) -> None:
    if test not in TESTS:
        raise InputError(f"unknown test {test!r} (use {', '.join(TESTS)})", field="test")


def check_correction(correction: str) -> None:
    if correction not in CORRECTIONS:
        raise InputError(f"unknown correction {correction!r} (use {', '.join(CORRECTIONS)})", field="correction")


def _randomisation_ps(d: np.ndarray, resamples: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Two-sided sign-flip p-values of each row's mean difference (0 = left out), and which are exact."""
    rows, n = d.shape
    nonzero = (d != 0).sum(axis=1)
    observed = np.abs(d.sum(axis=1))
    p = np.ones(rows)
    exact = 2.0 ** nonzero <= resamples
    for i in np.flatnonzero(exact & (nonzero > 0)):
        x = d[i][d[i] != 0]  # a zero difference is the same under either sign
        signs = np.array(list(product((1.0, -1.0), repeat=x.size)))
        p[i] = (np.abs(signs @ x) >= observed[i] - _TOL).sum() / len(signs)
    mc = np.flatnonzero(~exact)
    if mc.size:
        rng = np.random.default_rng(seed)
        extreme = np.zeros(mc.size)
        for start in range(0, resamples, _BLOCK):
            size = min(_BLOCK, resamples - start)
            signs = rng.choice((1.0, -1.0), size=(size, n))
            extreme += (np.abs(d[mc] @ signs.T) >= observed[mc, None] - _TOL).sum(axis=1)
        p[mc] = (extreme + 1) / (resamples + 1)
    return p, exact


def _t_tests(d: np.ndarray, keep: np.ndarray, n: np.ndarray, confidence: float):
    """p-values and t intervals of each row's mean difference (a row of equal differences:
    p 1 if they are 0, else 0, and the interval is that difference)."""
    from scipy import stats

    filled = np.where(keep, d, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = filled.sum(axis=1) / n
        var = (np.where(keep, d - mean[:, None], 0.0) ** 2).sum(axis=1) / (n - 1)
        se = np.sqrt(var / n)
        t = np.where(se > 0, mean / np.where(se > 0, se, 1.0), 0.0)
        p = 2 * stats.t.sf(np.abs(t), np.maximum(n - 1, 1))
        p = np.where(se > 0, p, np.where(mean == 0, 1.0, 0.0))
        half = stats.t.ppf(0.5 + confidence / 2, np.maximum(n - 1, 1)) * se
    p = np.where(n >= 2, p, np.nan)
    return p, np.stack([mean - half, mean + half], axis=1)


def paired_tests(a, b, *, test: str = TEST.default, resamples: int = RESAMPLES, seed: int = TEST_SEED,
                 confidence: float = CONFIDENCE) -> list[PairedTest]:
    """Row i of `a` against row i of `b` (vectors or rows × questions matrices, per question
    aligned; NaN = undefined): one `PairedTest` per row, by `test` (module docstring)."""
    check_test(test)
    a, b = _as_matrix(a), _as_matrix(b)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same questions: {a.shape} vs {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    n = keep.sum(axis=1)
    d = np.where(keep, a - b, np.nan)
    exact = np.zeros(len(a), dtype=bool)
    if test == "t":
        p, cis = _t_tests(d, keep, n, confidence)
    elif a.shape[1] == 0:
        p, cis = np.full(len(a), np.nan), np.full((len(a), 2), np.nan)
    else:
        means = _bootstrap_means(d, resamples, seed)
        cis = _percentiles(means, n > 0, confidence)
        if test == "bootstrap":
            below, above = (means <= 0).sum(axis=1), (means >= 0).sum(axis=1)
            p = np.minimum(1.0, 2 * (np.minimum(below, above) + 1) / (resamples + 1))
        else:
            p, exact = _randomisation_ps(np.where(keep, d, 0.0), resamples, seed)
    out = []
    nan = float("nan")
    for i in range(len(a)):
        if n[i] == 0:
            out.append(PairedTest(0, nan, nan, nan, nan, nan, nan, True, test))
            continue
        k = keep[i]
        out.append(PairedTest(int(n[i]), float(a[i, k].mean()), float(b[i, k].mean()), float(d[i, k].mean()),
                              float(cis[i, 0]), float(cis[i, 1]), float(p[i]), bool(exact[i]), test))
    return out


def adjust_p(p: Sequence[float], method: str = "holm") -> np.ndarray:
    """p-values of one family corrected for multiple comparisons: `holm` (step-down),
    `bonferroni` or `none`; NaN stays NaN and is not counted in the family."""
    check_correction(method)
    p = np.asarray(p, dtype=float)
    out = p.copy()
    ok = np.flatnonzero(~np.isnan(p))
    m = ok.size
    if method == "none" or m == 0:
        return out
    if method == "bonferroni":
        out[ok] = np.minimum(1.0, p[ok] * m)
        return out
    order = ok[np.argsort(p[ok], kind="stable")]
    stepped = np.maximum.accumulate((m - np.arange(m)) * p[order])
    out[order] = np.minimum(1.0, stepped)
    return out
