"""The paper's three tables from result records, as Markdown, CSV, JSON and LaTeX: retrieval (a
row per retriever, a column per metric), reranking (a row per retriever × reranker, oracle and
optimal rows included) and reader (EM per setting × retriever × reranker × reader × strategy, a
column per k). Scores show in percent with two decimals, as in the paper; the JSON keeps raw values.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from ..io import atomic_open
from ..evaluation.significance import format_p
from ..parameters import CORRECTION
from ..tabular import MISSING, TextTable, csv_text, json_text, latex, latex_escape, markdown  # noqa: F401 (latex_escape: kept importable here)
from .results import ORACLE_RERANKER, ORACLE_RETRIEVER, OPTIMAL, PIPELINE, ExperimentResults

FORMATS = ("md", "csv", "json", "tex")
_SETTING_ORDER = {PIPELINE: 0, ORACLE_RERANKER: 1, ORACLE_RETRIEVER: 2, OPTIMAL: 3}


@dataclass(frozen=True)
class Table:
    """Rows of values; `kinds` says how each column shows (text, score, diff, count, p): scores and
    differences are fractions, shown in percent; `cis[row][col]`: an optional (low, high) interval
    of that cell, shown in brackets and kept raw in CSV and JSON."""

    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    n_label_columns: int  # leading text columns; the rest are scores in [0, 1] unless `kinds` says
    kinds: tuple[str, ...] | None = None
    cis: tuple[tuple[Any, ...], ...] | None = None
    questions: int | None = None
    note: str = ""
    # HTML only: cells shown in bold, and (row, col) -> (mark, tooltip) after a cell's value
    bold: frozenset = frozenset()
    marks: dict = field(default_factory=dict)

    def kind(self, col: int) -> str:
        if self.kinds is not None:
            return self.kinds[col]
        return "text" if col < self.n_label_columns else "score"

    def ci(self, row: int, col: int):
        c = None if self.cis is None else self.cis[row][col]
        return None if c is None or any(x is None or x != x for x in c) else c

    def cell(self, value: Any, col: int, ci=None) -> str:
        if value is None or (isinstance(value, float) and value != value):
            return MISSING
        kind = self.kind(col)
        if kind not in ("score", "diff", "p") or not isinstance(value, (int, float)):
            return str(value)
        if kind == "p":
            return format_p(value)
        text = f"{100 * value:{'+' if kind == 'diff' else ''}.2f}"
        return text if ci is None else f"{text} {_ci_text(ci)}"

    def text_rows(self) -> list[list[str]]:
        return [[self.cell(v, i, self.ci(r, i)) for i, v in enumerate(row)] for r, row in enumerate(self.rows)]

    def numeric(self, col: int) -> bool:
        return self.kind(col) != "text"

    def text_table(self, groups: tuple[int, ...] = ()) -> TextTable:
        """The cells as shown (percent, intervals in brackets), for `inferqa.tabular`'s renderers;
        `groups`: runs of columns a boxed table keeps in one block (`TextTable.groups`)."""
        return TextTable(self.title, self.columns, tuple(map(tuple, self.text_rows())), self.n_label_columns,
                         groups=groups, note=self.note, aligns=tuple("right" if self.numeric(i) else "left"
                                                      for i in range(len(self.columns))))

    def to_markdown(self) -> str:
        return markdown(self.text_table())

    def raw_table(self) -> TextTable:
        """The values as stored (fractions to 6 decimals, each interval as two more columns), for CSV."""
        ci_cols = [c for c in range(len(self.columns))
                   if any(self.ci(r, c) is not None for r in range(len(self.rows)))]
        header = [*self.columns, *[f"{self.columns[c]} {end}" for c in ci_cols for end in ("ci_low", "ci_high")]]
        fmt = lambda v: "" if v is None else (f"{v:.6f}" if isinstance(v, float) else v)  # noqa: E731
        rows = [(*[fmt(v) for v in row], *[fmt(x) for c in ci_cols for x in (self.ci(r, c) or (None, None))])
                for r, row in enumerate(self.rows)]
        return TextTable(self.title, tuple(header), tuple(rows), self.n_label_columns)

    def to_csv(self) -> str:
        return csv_text(self.raw_table())

    def to_json(self) -> str:
        records = []
        for r, row in enumerate(self.rows):
            cis = {self.columns[c]: list(self.ci(r, c)) for c in range(len(self.columns)) if self.ci(r, c)}
            records.append({**dict(zip(self.columns, row)), **({"ci95": cis} if cis else {})})
        return json_text({"name": self.name, "title": self.title, "questions": self.questions, "rows": records})

    def to_latex(self) -> str:
        return latex(self.text_table(), label=self.name)

    def to_html(self) -> str:
        from html import escape
        head = "".join(f"<th>{escape(c)}</th>" for c in self.columns)
        body = []
        for r, row in enumerate(self.rows):
            cells = []
            for i, v in enumerate(row):
                ci = self.ci(r, i)
                main = escape(self.cell(v, i))
                if (r, i) in self.bold:
                    main = f"<b>{main}</b>"
                if (r, i) in self.marks:
                    mark, tip = self.marks[(r, i)]
                    main += f'<sup class="sig" title="{escape(tip)}">{escape(mark)}</sup>'
                if ci is not None and v is not None:
                    main += f' <span class="ci">{_ci_text(ci)}</span>'
                cells.append(f'<td class="{"num" if self.numeric(i) else "lab"}">{main}</td>')
            body.append(f"<tr>{''.join(cells)}</tr>")
        note = f'<p class="note">{escape(self.note)}</p>' if self.note else ""
        return (f'<table id="table-{escape(self.name)}"><caption>{escape(self.title)}</caption>'
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>{note}")

    def render(self, fmt: str) -> str:
        return {"md": self.to_markdown, "csv": self.to_csv, "json": self.to_json, "tex": self.to_latex}[fmt]()


def _title(what: str, results: ExperimentResults, n: int | None, with_ci: bool) -> str:
    split = results.config.get("split") if isinstance(results.config, dict) else None
    where = f"{n} {split} questions" if n is not None and split else (f"{n} questions" if n is not None else "")
    ci = "; 95 % bootstrap CI in brackets" if with_ci else ""
    return f"{what} on {results.name}" + (f" ({where}{ci})" if where or ci else "")


def _ci_text(ci) -> str:
    return f"[{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]"


def _ranking_table(name: str, what: str, results: ExperimentResults, picked, label_columns: tuple[str, ...],
                   labels) -> Table:
    metrics = list(dict.fromkeys(m for r in results.ranking for m in r.metrics))
    rows = [(*labels(r), *[r.metrics.get(m) for m in metrics]) for r in picked]
    n_lab = len(label_columns)
    cis = tuple((*([None] * n_lab), *[tuple(r.ci[m]) if m in r.ci else None for m in metrics]) for r in picked)
    return _scores_table(name, what, results, picked, (*label_columns, *metrics), n_lab, rows, cis)


def _scores_table(name: str, what: str, results: ExperimentResults, records, columns: tuple[str, ...],
                  n_labels: int, rows, cis) -> Table:
    """Scores of `records`, with their intervals where any record has one."""
    with_ci = any(r.ci for r in records)
    n = max((r.questions for r in records), default=None)
    return Table(name, _title(what, results, n, with_ci), columns, tuple(rows), n_labels,
                 cis=cis if with_ci else None, questions=n)


def retrieval_table(results: ExperimentResults) -> Table:
    picked = [r for r in results.ranking if r.setting == PIPELINE and r.reranker is None]
    return _ranking_table("retrieval", "Retrieval", results, picked, ("retriever",), lambda r: (r.retriever,))


def reranking_table(results: ExperimentResults) -> Table:
    picked = [r for r in results.ranking if r.reranker is not None or r.setting != PIPELINE]
    picked.sort(key=lambda r: _SETTING_ORDER.get(r.setting, 9))
    return _ranking_table("reranking", "Reranking", results, picked, ("setting", "retriever", "reranker"),
                          lambda r: (r.setting, r.retriever, r.reranker or MISSING))


def reader_table(results: ExperimentResults) -> Table:
    ks = sorted({r.k for r in results.reader})
    grouped: dict[tuple, dict[int, Any]] = {}
    for r in results.reader:
        grouped.setdefault((r.setting, r.retriever, r.reranker or MISSING, r.reader, r.strategy), {})[r.k] = r
    # within a setting: retriever, then its first-stage row before its reranked rows
    keys = sorted(grouped, key=lambda t: (_SETTING_ORDER.get(t[0], 9), t[1], t[2] != MISSING, *t[2:]))
    rows = tuple((*key, *[grouped[key][k].em if k in grouped[key] else None for k in ks]) for key in keys)
    cis = tuple((*([None] * 5), *[tuple(grouped[key][k].ci) if k in grouped[key] and grouped[key][k].ci else None
                                  for k in ks]) for key in keys)
    columns = ("setting", "retriever", "reranker", "reader", "strategy", *[f"EM@{k}" for k in ks])
    return _scores_table("reader", "Reader exact match", results, results.reader, columns, 5, rows, cis)


_TEST_NOTE = ("Two-sided paired randomisation test over the questions both runs answer (10,000 sign flips, "
              "exact below 14 differing questions); A − B in points with its 95 % percentile-bootstrap CI. "
              "The two are separate procedures: the interval only resamples the observed differences, so "
              "with few questions that differ it is too narrow and can exclude 0 while p ≥ 0.05 (read "
              "significance from p; `inferqa compare --test t` or `--test bootstrap` pair p with its own "
              f"interval). p ({CORRECTION}): p {CORRECTION}-corrected over the tests of one metric (reader EM: "
              "of one k), as `inferqa compare` corrects over the runs it compares; the report's † reads it.")


def significance_table(results: ExperimentResults, family: str) -> Table:
    """The paired tests of one family (`ranking` or `reader`) from `results.tests`."""
    from .comparisons import with_corrected_p  # not at import: the command line imports this module

    picked = [t for t in with_corrected_p(results.tests) if t["family"] == family]
    if family == "reader":
        keys, labels = ("reader", "strategy", "k", "a", "b"), ("reader", "strategy", "k", "A", "B", "EM A", "EM B")
        what = "Paired tests of reader EM"
    else:
        keys, labels = ("a", "b", "metric"), ("A", "B", "metric", "A score", "B score")
        what = "Paired tests of ranking metrics"
    cols = (*labels, "A − B", "p", f"p ({CORRECTION})", "n")
    rows = tuple(tuple(t[k] for k in (*keys, "mean_a", "mean_b", "diff", "p", "p_corrected", "n")) for t in picked)
    kinds = ("text",) * len(keys) + ("score", "score", "diff", "p", "p", "count")
    at = cols.index("A − B")
    cis = tuple(tuple((t["ci_low"], t["ci_high"]) if i == at else None for i in range(len(cols))) for t in picked)
    n = max((t["n"] for t in picked), default=None)
    return Table(f"tests-{family}", _title(what, results, n, False), cols, rows, kinds.count("text"), kinds=kinds,
                 cis=cis, questions=n, note=_TEST_NOTE)


def all_tables(results: ExperimentResults) -> list[Table]:
    tables = [retrieval_table(results), reranking_table(results), reader_table(results),
              significance_table(results, "ranking"), significance_table(results, "reader")]
    return [t for t in tables if t.rows]  # a table without rows (no reader, no tests) is left out


def write_tables(results: ExperimentResults, out_dir: str | os.PathLike,
                 formats: Sequence[str] = FORMATS) -> list[Path]:
    """Write `<table>.<fmt>` for every table and format; returns the paths written."""
    out_dir = Path(out_dir)
    written = []
    for table in all_tables(results):
        for fmt in formats:
            path = out_dir / f"{table.name}.{fmt}"
            with atomic_open(path) as fh:
                fh.write(table.render(fmt))
            written.append(path)
    return written
