"""The paper's three tables from result records, as Markdown, CSV, JSON and LaTeX.

- retrieval: one row per retriever, the metric set as columns;
- reranking: one row per retriever × reranker (oracle reranker, oracle retriever and
  optimal rows included);
- reader: EM per setting × retriever × reranker × reader × strategy, one column per k.

Scores are shown in percent with two decimals, as in the paper; the JSON keeps raw values.
"""

from __future__ import annotations

import csv
import io
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from ..io import atomic_open
from .results import ORACLE_RERANKER, ORACLE_RETRIEVER, OPTIMAL, PIPELINE, ExperimentResults

FORMATS = ("md", "csv", "json", "tex")
_SETTING_ORDER = {PIPELINE: 0, ORACLE_RERANKER: 1, ORACLE_RETRIEVER: 2, OPTIMAL: 3}


@dataclass(frozen=True)
class Table:
    name: str
    title: str
    columns: tuple[str, ...]
    rows: tuple[tuple[Any, ...], ...]
    n_label_columns: int  # leading text columns; the rest are scores in [0, 1]

    def cell(self, value: Any, col: int) -> str:
        if value is None:
            return "–"
        if col >= self.n_label_columns and isinstance(value, (int, float)):
            return f"{100 * value:.2f}"
        return str(value)

    def text_rows(self) -> list[list[str]]:
        return [[self.cell(v, i) for i, v in enumerate(row)] for row in self.rows]

    def to_markdown(self) -> str:
        head = "| " + " | ".join(self.columns) + " |"
        align = "|" + "|".join("---" if i < self.n_label_columns else "---:"
                               for i in range(len(self.columns))) + "|"
        body = ["| " + " | ".join(r) + " |" for r in self.text_rows()]
        return "\n".join([f"**{self.title}**", "", head, align, *body]) + "\n"

    def to_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for row in self.rows:
            w.writerow(["" if v is None else (f"{v:.6f}" if isinstance(v, float) else v) for v in row])
        return buf.getvalue()

    def to_json(self) -> str:
        records = [dict(zip(self.columns, row)) for row in self.rows]
        return json.dumps({"name": self.name, "title": self.title, "rows": records}, indent=2) + "\n"

    def to_latex(self) -> str:
        spec = "l" * self.n_label_columns + "r" * (len(self.columns) - self.n_label_columns)
        lines = [
            "\\begin{table}[t]", "\\centering", f"\\caption{{{latex_escape(self.title)}}}",
            f"\\label{{tab:{self.name}}}", f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
            " & ".join(latex_escape(c) for c in self.columns) + " \\\\", "\\midrule",
        ]
        lines += [" & ".join(latex_escape(c) for c in r) + " \\\\" for r in self.text_rows()]
        lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
        return "\n".join(lines) + "\n"

    def to_html(self) -> str:
        from html import escape
        head = "".join(f"<th>{escape(c)}</th>" for c in self.columns)
        body = []
        for r in self.text_rows():
            cells = "".join(f'<td class="{"num" if i >= self.n_label_columns else "lab"}">{escape(c)}</td>'
                            for i, c in enumerate(r))
            body.append(f"<tr>{cells}</tr>")
        return (f'<table id="table-{escape(self.name)}"><caption>{escape(self.title)}</caption>'
                f"<thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>")

    def render(self, fmt: str) -> str:
        return {"md": self.to_markdown, "csv": self.to_csv, "json": self.to_json, "tex": self.to_latex}[fmt]()


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}"}


def latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def _metric_names(results: ExperimentResults) -> list[str]:
    names: list[str] = []
    for r in results.ranking:
        for m in r.metrics:
            if m not in names:
                names.append(m)
    return names


def retrieval_table(results: ExperimentResults) -> Table:
    metrics = _metric_names(results)
    rows = [(r.retriever, *[r.metrics.get(m) for m in metrics])
            for r in results.ranking if r.setting == PIPELINE and r.reranker is None]
    return Table("retrieval", f"Retrieval on {results.name}", ("retriever", *metrics), tuple(rows), 1)


def reranking_table(results: ExperimentResults) -> Table:
    metrics = _metric_names(results)
    picked = [r for r in results.ranking if r.reranker is not None or r.setting != PIPELINE]
    picked.sort(key=lambda r: _SETTING_ORDER.get(r.setting, 9))
    rows = [(r.setting, r.retriever, r.reranker or "–", *[r.metrics.get(m) for m in metrics]) for r in picked]
    return Table("reranking", f"Reranking on {results.name}", ("setting", "retriever", "reranker", *metrics),
                 tuple(rows), 3)


def reader_table(results: ExperimentResults) -> Table:
    ks = sorted({r.k for r in results.reader})
    grouped: dict[tuple, dict[int, float]] = {}
    for r in results.reader:
        key = (r.setting, r.retriever, r.reranker or "–", r.reader, r.strategy)
        grouped.setdefault(key, {})[r.k] = r.em
    # within a setting: retriever, then its first-stage row before its reranked rows
    keys = sorted(grouped, key=lambda t: (_SETTING_ORDER.get(t[0], 9), t[1], t[2] != "–", *t[2:]))
    rows = [(*key, *[grouped[key].get(k) for k in ks]) for key in keys]
    return Table("reader", f"Reader exact match on {results.name}",
                 ("setting", "retriever", "reranker", "reader", "strategy", *[f"EM@{k}" for k in ks]),
                 tuple(rows), 5)


def all_tables(results: ExperimentResults) -> list[Table]:
    tables = [retrieval_table(results), reranking_table(results)]
    if results.reader:
        tables.append(reader_table(results))
    return [t for t in tables if t.rows]


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
