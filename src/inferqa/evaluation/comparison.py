"""Runs against the first one, metric by metric, with paired tests: the `Comparison` that
`inferqa compare` (`inferqa.evaluation.stage.compare`, in Python `inferqa.compare`) returns.

The questions are those `evaluate` scores (`metrics.scored_questions`: every judged question
of `split`, or with `questions="run"` the first run's judged ones; under the paper protocol
the first run's); a question a run lacks counts as an empty ranking there (`missing` says how
many). Every other run is tested against the first on each metric with
`inferqa.evaluation.significance.paired_tests`, and the p-values of one metric (one per run
compared) are corrected together (`holm` by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..tabular import MISSING, TextTable, markdown, percent
from .significance import adjust_p, format_p, paired_tests

# The machine-readable rows (csv, json): one per (run, metric), numbers as fractions.
RECORD_COLUMNS = ("run", "metric", "value", "diff", "ci_low", "ci_high", "p", "p_corrected")


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
                    cells += [percent(c["mean"]), "", ""]
                    continue
                lo, hi = c["ci"]
                diff = MISSING if c["diff"] is None else f"{100 * c['diff']:+.2f} [{percent(lo)}, {percent(hi)}]"
                cells += [percent(c["mean"]), diff, format_p(c["p_corrected"])]
            out.append(cells)
        return out

    def note(self) -> str:
        """What p and the interval are, and what was corrected."""
        text = NOTES[self.test]
        if self.correction != "none":
            n = len(self.rows) - 1
            text += (f" p-values {self.correction}-corrected over the {n} run{'s' if n != 1 else ''} compared, per "
                     "metric; intervals are not.")
        return text

    def records(self) -> list[dict[str, Any]]:
        """One row per (run, metric): RECORD_COLUMNS, numbers as fractions (the baseline's
        difference, interval and p-values None)."""
        out = []
        for row in self.rows:
            for m in self.metrics:
                c = row["metrics"][m]
                lo, hi = c.get("ci", (None, None))
                out.append({"run": row["run"], "metric": m, "value": c["mean"], "diff": c.get("diff"),
                            "ci_low": lo, "ci_high": hi, "p": c.get("p"), "p_corrected": c.get("p_corrected")})
        return out

    def records_table(self, title: str = "") -> TextTable:
        """`records` as a table of plain numbers (`--format csv`)."""
        cells = tuple(tuple("" if r[c] is None else str(r[c]) for c in RECORD_COLUMNS) for r in self.records())
        return TextTable(title, RECORD_COLUMNS, cells)

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


def tested(names: list[str], scores: list[dict[str, np.ndarray]], missing: list[int], questions: int, *,
           test: str, correction: str, resamples: int, seed: int, confidence: float) -> Comparison:
    """Every run after the first tested against it, metric by metric, p-values corrected per metric."""
    metrics = list(scores[0])  # the metrics as keyed (the spelling asked for)
    rows = [{"run": names[0], "missing": missing[0], "metrics": {m: {"mean": _mean(scores[0][m])} for m in metrics}}]
    rows += [{"run": name, "missing": miss, "metrics": {}} for name, miss in zip(names[1:], missing[1:])]
    for m in metrics:
        a = np.array([sc[m] for sc in scores[1:]])
        b = np.repeat(scores[0][m][None, :], len(scores) - 1, axis=0)
        tests = paired_tests(a, b, test=test, resamples=resamples, seed=seed, confidence=confidence)
        corrected = adjust_p([t.p for t in tests], correction)
        for row, sc, t, pc in zip(rows[1:], scores[1:], tests, corrected):
            row["metrics"][m] = {"mean": _mean(sc[m]), "diff": _num(t.diff), "ci": [_num(t.ci_low), _num(t.ci_high)],
                                 "p": _num(t.p), "p_corrected": _num(pc), "n": t.n, "exact": t.exact}
    return Comparison(metrics, test, correction, confidence, questions, rows)


def _mean(v: np.ndarray) -> float | None:
    defined = v[~np.isnan(v)]
    return float(defined.mean()) if defined.size else None


def _num(x: float) -> float | None:
    return None if x is None or np.isnan(x) else float(x)
