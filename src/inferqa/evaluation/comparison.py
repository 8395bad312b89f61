"""`compare`: runs against the first one, metric by metric, with paired tests (`inferqa compare`).

The questions are those `evaluate` scores (`metrics.scored_questions`: every judged question
of `split`, or with `questions="run"` the first run's judged ones; under the paper protocol
the first run's); a question a run lacks counts as an empty ranking there (`missing` says how
many). Every other run is tested against the first on each metric with
`inferqa.evaluation.significance.paired_tests`, and the p-values of one metric (one per run
compared) are corrected together (`holm` by default).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from ..defaults import MIN_LABEL
from ..errors import InputError
from ..formats.coerce import as_qrels, as_run_list
from ..stages import Settings
from ..parameters import COMPARE_METRICS
from ..stages.evaluate import COMPARE
from ..tabular import MISSING, TextTable, markdown, percent
from .metrics import (checked_min_label, named_runs, per_query_scores, resolve, scope_of, scored_questions,
                      scored_run)
from .significance import adjust_p, check_correction, check_test, paired_tests

_D = COMPARE.default
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
                p = c["p_corrected"]
                cells += [percent(c["mean"]), diff, MISSING if p is None else ("<0.001" if p < 0.001 else f"{p:.3f}")]
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


def compare(runs: Sequence[Any] | Mapping[str, Any], qrels: Any, metrics: Any = COMPARE_METRICS, *,
            split: str | None = None, test: str = _D("test"), correction: str = _D("correction"),
            min_label: int = MIN_LABEL.default, protocol: str = _D("protocol"), allow_partial: bool = False,
            resamples: int = _D("resamples"), seed: int = _D("seed"), confidence: float = _D("confidence"),
            questions: str = _D("questions")) -> Comparison:
    """Each run against the first: `runs` are `Run`s or run files (a list, or a dict name -> run);
    `qrels` as in `evaluate` (a benchmark, for `split` and for JSON runs); every run is read
    as `evaluate` reads it (`scored_run`: `min_label`, `protocol`, `allow_partial`) and scored
    on the questions `evaluate` scores (`questions`)."""
    return COMPARE.run(runs=runs if isinstance(runs, Mapping) else as_run_list(runs), bench=qrels, metrics=metrics,
                       split=split, test=test, correction=correction, min_label=min_label, protocol=protocol,
                       allow_partial=allow_partial, resamples=resamples, seed=seed, confidence=confidence,
                       questions=questions)


def compare_stage(s: Settings) -> Comparison:
    """The entry point of `COMPARE` (CLI and `compare` alike)."""
    check_test(s.test)
    check_correction(s.correction)
    named = named_runs(s.runs)
    if len(named) < 2:
        raise InputError("compare needs at least two runs (the first is the baseline)", field="runs")
    measures = resolve(s.metrics, s.min_label, s.protocol)  # names as in `evaluate`
    qrels, bench = as_qrels(s.bench)
    min_label = checked_min_label(s.min_label, qrels)
    scope = scope_of(bench, s.split)
    loaded = [(name, scored_run(run, bench, s.split, min_label=min_label, protocol=s.protocol,
                                allow_partial=s.allow_partial)) for name, run in named]
    if s.protocol == "paper":
        qids = list(loaded[0][1])
    else:
        qids = scored_questions(loaded[0][1], qrels, scope, s.questions)[0]
    if not qids:
        raise InputError(f"run {loaded[0][0]!r} has no judged question" + (f" of split {s.split!r}" if s.split else ""),
                         field="runs")
    scores, missing = [], []
    for _, run in loaded:
        missing.append(sum(q not in run for q in qids))
        scores.append(per_query_scores(run.only(qids, fill=True), qrels, measures, min_label, s.protocol)[1])
    return _tested([n for n, _ in loaded], scores, missing, s, len(qids))


def _tested(names: list[str], scores: list[dict[str, np.ndarray]], missing: list[int], s: Settings,
            questions: int) -> Comparison:
    """Every run after the first tested against it, metric by metric, p-values corrected per metric."""
    metrics = list(scores[0])  # the metrics as keyed (the spelling asked for)
    rows = [{"run": names[0], "missing": missing[0], "metrics": {m: {"mean": _mean(scores[0][m])} for m in metrics}}]
    rows += [{"run": name, "missing": miss, "metrics": {}} for name, miss in zip(names[1:], missing[1:])]
    for m in metrics:
        a = np.array([sc[m] for sc in scores[1:]])
        b = np.repeat(scores[0][m][None, :], len(scores) - 1, axis=0)
        tests = paired_tests(a, b, test=s.test, resamples=s.resamples, seed=s.seed, confidence=s.confidence)
        corrected = adjust_p([t.p for t in tests], s.correction)
        for row, sc, t, pc in zip(rows[1:], scores[1:], tests, corrected):
            row["metrics"][m] = {"mean": _mean(sc[m]), "diff": _num(t.diff), "ci": [_num(t.ci_low), _num(t.ci_high)],
                                 "p": _num(t.p), "p_corrected": _num(pc), "n": t.n, "exact": t.exact}
    return Comparison(metrics, s.test, s.correction, s.confidence, questions, rows)


def _mean(v: np.ndarray) -> float | None:
    defined = v[~np.isnan(v)]
    return float(defined.mean()) if defined.size else None


def _num(x: float) -> float | None:
    return None if x is None or np.isnan(x) else float(x)
