"""Per-question statistics: bootstrap confidence intervals and the paired randomisation test.

Both take per-question scores (a question's hit@10, or its EM under one setting), with NaN
where a metric is undefined for a question (hit@k without a relevant passage); those
questions are left out, as in the means.

- `bootstrap_cis`: percentile bootstrap of the mean. All rows of one call share the same
  resamples (one multinomial count matrix, then a matrix product), so the intervals of
  every metric and run of an experiment cost one pass, and they are seeded.
- `paired_test`: two-sided paired randomisation (sign-flip) test of the mean difference
  (Fisher's test as used in IR, Smucker et al. 2007): under the null hypothesis, which
  setting produced which score of a question is a coin flip. Exact (every sign pattern)
  when there are at most `log2(resamples)` non-zero differences, else Monte Carlo with the
  (count + 1) / (resamples + 1) estimate, which never returns 0.

scipy.stats offers both (`bootstrap`, `permutation_test`) one array at a time; the tests
check these against it.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import Sequence

import numpy as np

RESAMPLES = 10_000
CONFIDENCE = 0.95
_BLOCK = 1_000  # resamples per block: bounds memory at block × questions
_TOL = 1e-12    # sums equal up to float noise count as "as extreme"


def _as_matrix(values) -> np.ndarray:
    m = np.asarray(values, dtype=float)
    return m[None, :] if m.ndim == 1 else m


def bootstrap_cis(values, *, confidence: float = CONFIDENCE, resamples: int = RESAMPLES,
                  seed: int = 0) -> np.ndarray:
    """(rows × 2) percentile-bootstrap intervals of each row's mean (NaN = left out).

    `values` is one vector or a (rows × questions) matrix aligned on the same questions;
    a row without defined values gets (NaN, NaN).
    """
    m = _as_matrix(values)
    rows, n = m.shape
    out = np.full((rows, 2), np.nan)
    if n == 0:
        return out
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
    alpha = (1.0 - confidence) / 2.0
    for i in range(rows):
        if defined[i].any():
            v = means[i][~np.isnan(means[i])]
            out[i] = np.quantile(v, [alpha, 1.0 - alpha])
    return out


def bootstrap_ci(values: Sequence[float], **kw) -> tuple[float, float]:
    lo, hi = bootstrap_cis(values, **kw)[0]
    return float(lo), float(hi)


@dataclass(frozen=True)
class PairedTest:
    """A vs B on the questions both define: means, difference A − B, its 95 % CI, p-value."""

    n: int
    mean_a: float
    mean_b: float
    diff: float
    ci_low: float
    ci_high: float
    p: float
    exact: bool

    def to_dict(self) -> dict:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def randomisation_p(diffs: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0) -> tuple[float, bool]:
    """Two-sided sign-flip p-value of mean(diffs) = 0, and whether it was exact."""
    d = np.asarray(diffs, dtype=float)
    d = d[d != 0]  # a zero difference is the same under either sign
    if d.size == 0:
        return 1.0, True
    observed = abs(d.sum())
    if 2 ** d.size <= resamples:
        signs = np.array(list(product((1.0, -1.0), repeat=d.size)))
        extreme = int((np.abs(signs @ d) >= observed - _TOL).sum())
        return extreme / len(signs), True
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, resamples, _BLOCK):
        size = min(_BLOCK, resamples - start)
        signs = rng.choice((1.0, -1.0), size=(size, d.size))
        extreme += int((np.abs(signs @ d) >= observed - _TOL).sum())
    return (extreme + 1) / (resamples + 1), False


def paired_test(a: Sequence[float], b: Sequence[float], *, resamples: int = RESAMPLES, seed: int = 0,
                confidence: float = CONFIDENCE) -> PairedTest:
    """Paired randomisation test and bootstrap CI of the difference, per question aligned."""
    a = np.asarray(a, dtype=float)
    b = np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired scores need the same questions: {a.shape} vs {b.shape}")
    keep = ~(np.isnan(a) | np.isnan(b))
    a, b = a[keep], b[keep]
    if a.size == 0:
        nan = float("nan")
        return PairedTest(0, nan, nan, nan, nan, nan, nan, True)
    d = a - b
    p, exact = randomisation_p(d, resamples=resamples, seed=seed)
    lo, hi = bootstrap_cis(d, confidence=confidence, resamples=resamples, seed=seed)[0]
    return PairedTest(int(a.size), float(a.mean()), float(b.mean()), float(d.mean()), float(lo), float(hi),
                      float(p), exact)
