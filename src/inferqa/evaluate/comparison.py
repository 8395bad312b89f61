"""`compare`: runs against the first one, metric by metric, with paired tests (`inferqa compare`).

The questions are the first run's (cut to `split`); a question another run lacks counts as
an empty ranking there (`missing` says how many). Every other run is tested against the
first on each metric with `inferqa.evaluate.significance.paired_tests`, and the p-values of
one metric (one per run compared) are corrected together (`holm` by default).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ..defaults import TEST_SEED
from ..errors import InputError
from ..formats.coerce import as_qrels
from ..tabular import TextTable, markdown
from ..defaults import MIN_LABEL
from .metrics import check_min_label, check_protocol, per_query_scores, resolve, scored_run
from .significance import CONFIDENCE, RESAMPLES, adjust_p, check_correction, check_test, paired_tests

COMPARE_METRICS = ("hit@10", "mrr", "ndcg_exp@10")


@dataclass
class Comparison:
    """`rows[0]` is the baseline (means only); every other row adds, per metric, the
    difference to the baseline with its CI, the p-value and the corrected p-value."""

    metrics: list[str]
    test: str
    correction: str
    confidence: float
    questions: int
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def baseline(self) -> str:
        return self.rows[0]["run"]

    def to_dict(self) -> dict[str, Any]:
        return {"baseline": self.baseline, "metrics": self.metrics, "test": self.test,
                "correction": self.correction, "confidence": self.confidence, "questions": self.questions,
                "runs": self.rows}

    def header(self) -> list[str]:
        ci = f"Δ [{100 * self.confidence:g} % CI]"
        return ["run", *[c for m in self.metrics for c in (m, ci, "p")]]

    def cells(self) -> list[list[str]]:
        """One row of text per run, in percent: value, difference [CI] and corrected p per metric."""
        out = []
        for row in self.rows:
            cells = [row["run"] + (f" ({row['missing']} missing)" if row["missing"] else "")]
            for m in self.metrics:
                c = row["metrics"][m]
                if "diff" not in c:
                    cells += [_pct(c["mean"]), "", ""]
                    continue
                lo, hi = c["ci"]
                diff = "—" if c["diff"] is None else f"{100 * c['diff']:+.2f} [{_pct(lo)}, {_pct(hi)}]"
                p = c["p_corrected"]
                cells += [_pct(c["mean"]), diff, "—" if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")]
            out.append(cells)
        return out

    def note(self) -> str:
        """What p and the interval are, and what was corrected."""
        text = NOTES[self.test]
        if self.correction != "none":
            text += (f" p-values {self.correction}-corrected over the {len(self.rows) - 1} runs compared, per "
                     "metric; intervals are not.")
        return text

    def text_table(self, title: str = "") -> TextTable:
        """The table as `inferqa compare` prints it: a metric's three columns kept in one block."""
        return TextTable(title, tuple(self.header()), tuple(map(tuple, self.cells())), 1,
                         groups=(3,) * len(self.metrics), note=self.note())

    def to_markdown(self) -> str:
        return markdown(self.text_table())


NOTES = {
    "randomisation": "p: two-sided paired randomisation test; the interval is a percentile bootstrap of the mean "
                     "difference, a separate procedure that can exclude 0 while p >= 0.05 when few questions "
                     "differ: read significance from p.",
    "t": "p: two-sided paired t-test; the interval is its t interval (it excludes 0 exactly when the uncorrected "
         "p < 1 - confidence).",
    "bootstrap": "p and the interval from the same bootstrap resamples of the mean difference (the interval "
                 "excludes 0 when the uncorrected p < 1 - confidence).",
}


def _named(runs: Sequence[Any] | Mapping[str, Any]) -> list[tuple[str, Any]]:
    if isinstance(runs, Mapping):
        return list(runs.items())
    out, seen = [], set()
    for i, run in enumerate(runs):
        name = Path(run).stem if isinstance(run, (str, os.PathLike)) else (getattr(run, "tag", None) or f"run{i + 1}")
        if name in seen:
            name = str(run) if isinstance(run, (str, os.PathLike)) else f"{name}#{i + 1}"
        seen.add(name)
        out.append((name, run))
    return out


def compare(runs: Sequence[Any] | Mapping[str, Any], qrels: Any, metrics: Any = COMPARE_METRICS, *,
            split: str | None = None, test: str = "randomisation", correction: str = "holm",
            min_label: int = MIN_LABEL.default, protocol: str = "inferqa", allow_partial: bool = False,
            resamples: int = RESAMPLES,
            seed: int = TEST_SEED, confidence: float = CONFIDENCE) -> Comparison:
    """Each run against the first: `runs` are `Run`s or run files (a list, or a dict name -> run);
    `qrels` as in `evaluate` (a benchmark, for `split` and for JSON runs); every run is read
    as `evaluate` reads it (`scored_run`: `min_label`, `protocol`, `allow_partial`)."""
    check_test(test)
    check_correction(correction)
    check_protocol(protocol)
    named = _named(runs)
    if len(named) < 2:
        raise InputError("compare needs at least two runs (the first is the baseline)", field="runs")
    measures = resolve(metrics, min_label, protocol)  # names as in `evaluate`
    if not measures:
        raise InputError("give at least one metric", field="metrics")
    qrels, bench = as_qrels(qrels)
    check_min_label(min_label, qrels)
    loaded = [(name, scored_run(run, bench, split, min_label=min_label, protocol=protocol,
                                allow_partial=allow_partial)) for name, run in named]
    qids = list(loaded[0][1])
    if not qids:
        raise InputError(f"run {loaded[0][0]!r} has no question" + (f" of split {split!r}" if split else ""),
                         field="runs")
    scores, missing = [], []
    for _, run in loaded:
        aligned = run.only(qids, fill=True)
        missing.append(sum(q not in run for q in qids))
        scores.append(per_query_scores(aligned, qrels, measures, min_label, protocol)[1])
    names = list(scores[0])  # the metrics as keyed (the spelling asked for)
    rows = [{"run": loaded[0][0], "missing": missing[0],
             "metrics": {m: {"mean": _mean(scores[0][m])} for m in names}}]
    for name, miss, _ in zip((n for n, _ in loaded[1:]), missing[1:], scores[1:]):
        rows.append({"run": name, "missing": miss, "metrics": {}})
    for m in names:
        a = np.array([s[m] for s in scores[1:]])
        b = np.repeat(scores[0][m][None, :], len(scores) - 1, axis=0)
        tests = paired_tests(a, b, test=test, resamples=resamples, seed=seed, confidence=confidence)
        corrected = adjust_p([t.p for t in tests], correction)
        for row, s, t, pc in zip(rows[1:], scores[1:], tests, corrected):
            row["metrics"][m] = {"mean": _mean(s[m]), "diff": _num(t.diff), "ci": [_num(t.ci_low), _num(t.ci_high)],
                                 "p": _num(t.p), "p_corrected": _num(pc), "n": t.n, "exact": t.exact}
    return Comparison(names, test, correction, confidence, len(qids), rows)


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{100 * v:.2f}"


def _mean(v: np.ndarray) -> float | None:
    defined = v[~np.isnan(v)]
    return float(defined.mean()) if defined.size else None


def _num(x: float) -> float | None:
    return None if x is None or np.isnan(x) else float(x)
