"""Tables of text cells, written one way for every command and file: a boxed table that fits a
width without cutting a cell, a GitHub pipe table, CSV, booktabs LaTeX; and the one JSON writer
of table files. A boxed table too wide is cut into blocks of whole columns (each repeating the
row labels); where the labels and one column alone are too wide, each row prints as a record.
"""

from __future__ import annotations

import csv
import io
import json
import math
import textwrap
from dataclasses import dataclass, field
from typing import Any, Sequence

MISSING = "—"  # the one mark of a missing value in a table cell: no score, no p-value, no reranker


def percent(value: float | None, digits: int = 2) -> str:
    """A fraction in percent to `digits` decimals; undefined (None or NaN) as MISSING."""
    return MISSING if value is None or math.isnan(value) else f"{100 * value:.{digits}f}"


@dataclass(frozen=True)
class TextTable:
    """`rows` of text cells under `header`. The first `labels` columns name a row (left-aligned,
    repeated in every block); `groups` sizes the runs of the other columns that stay in one
    block while they fit (a metric's value, difference and p); `rules` are the row indexes a
    line is drawn above; `note` is printed under the table; `aligns` ("left" | "right" per
    column) overrides the default of labels left, the rest right."""

    title: str
    header: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    labels: int = 1
    groups: tuple[int, ...] = ()
    rules: frozenset = field(default_factory=frozenset)
    note: str = ""
    aligns: tuple[str, ...] = ()

    def left(self, col: int) -> bool:
        return self.aligns[col] == "left" if self.aligns else col < self.labels

    def __post_init__(self):
        object.__setattr__(self, "header", tuple(map(str, self.header)))
        object.__setattr__(self, "rows", tuple(tuple(map(str, r)) for r in self.rows))
        bad = [i for i, r in enumerate(self.rows) if len(r) != len(self.header)]
        if bad:
            raise ValueError(f"row {bad[0]} has {len(self.rows[bad[0]])} cells for {len(self.header)} columns")


def render(table: TextTable, fmt: str, width: int = 80) -> str:
    """`table` as `fmt` (table | md | csv | tex), ending in a newline; `width` bounds `table`."""
    renderers = {"table": lambda t: boxed(t, width), "md": markdown, "csv": csv_text, "tex": latex}
    if fmt not in renderers:
        raise ValueError(f"unknown table format {fmt!r} (one of {', '.join(renderers)})")
    return renderers[fmt](table)


# -- boxed, as rich draws it (heavy head, light body) -------------------------------------------

def _cell_len(text: str) -> int:
    from rich.cells import cell_len

    return cell_len(text)


def _pad(text: str, width: int, left: bool) -> str:
    gap = " " * (width - _cell_len(text))
    return text + gap if left else gap + text


def _line(cells: Sequence[str], widths: Sequence[int], lefts: Sequence[bool], bar: str) -> str:
    return bar + bar.join(f" {_pad(c, w, a)} " for c, w, a in zip(cells, widths, lefts)) + bar


def _rule(widths: Sequence[int], left: str, mid: str, right: str, fill: str) -> str:
    return left + mid.join(fill * (w + 2) for w in widths) + right


def _box(table: TextTable, cols: Sequence[int], widths: Sequence[int]) -> list[str]:
    w = [widths[c] for c in cols]
    lefts = [table.left(c) for c in cols]
    out = [_rule(w, "┏", "┳", "┓", "━"), _line([table.header[c] for c in cols], w, lefts, "┃"),
           _rule(w, "┡", "╇", "┩", "━")]
    for i, row in enumerate(table.rows):
        if i in table.rules and i > 0:
            out.append(_rule(w, "├", "┼", "┤", "─"))
        out.append(_line([row[c] for c in cols], w, lefts, "│"))
    out.append(_rule(w, "└", "┴", "┘", "─"))
    return out


def _span(widths: Sequence[int]) -> int:
    return sum(w + 3 for w in widths) + 1


def _units(table: TextTable) -> list[list[int]]:
    """The data columns in runs that stay together: `groups`, then one column per unit."""
    units, c = [], table.labels
    for size in table.groups:
        units.append(list(range(c, min(c + size, len(table.header)))))
        c += size
    units += [[i] for i in range(c, len(table.header))]
    return [u for u in units if u]


def blocks(table: TextTable, width: int) -> list[list[int]] | None:
    """The data columns of each block that fits `width` beside the label columns (a group
    split only where it alone is too wide); None where a single column does not fit."""
    widths = _widths(table)
    labels = widths[:table.labels]
    if table.labels == len(table.header):
        return [[]] if _span(labels) <= width else None
    fits = lambda cols: _span([*labels, *(widths[c] for c in cols)]) <= width  # noqa: E731
    out: list[list[int]] = []
    for unit in _units(table):
        pieces = [unit] if fits(unit) else [[c] for c in unit]
        for piece in pieces:
            if not fits(piece):
                return None
            if out and fits([*out[-1], *piece]):
                out[-1] += piece
            else:
                out.append(list(piece))
    return out


def _widths(table: TextTable) -> list[int]:
    return [max(_cell_len(t) for t in (h, *(r[i] for r in table.rows)))
            for i, h in enumerate(table.header)]


def _wrapped(text: str, width: int, center_in: int | None = None) -> list[str]:
    lines = []
    for para in text.splitlines() or [""]:
        lines += textwrap.wrap(para, width, break_long_words=False, break_on_hyphens=False) or [""]
    if center_in is not None:
        lines = [ln.center(center_in).rstrip() for ln in lines]
    return lines


def boxed(table: TextTable, width: int = 80) -> str:
    """The table in box characters, every line at most `width` long (unless a single cell is)."""
    widths = _widths(table)
    parts = blocks(table, width)
    out: list[str] = []
    if parts is None:
        out += _wrapped(table.title, width) if table.title else []
        out += _records(table, width)
    else:
        for n, cols in enumerate(parts):
            shown = [*range(table.labels), *cols]
            if n:
                out.append("")
            if table.title:
                title = "(continued)" if n else table.title
                out += _wrapped(title, width, center_in=min(width, _span([widths[c] for c in shown])))
            out += _box(table, shown, widths)
    if table.note:
        out += _wrapped(table.note, width)
    return "\n".join(out) + "\n"


def _records(table: TextTable, width: int) -> list[str]:
    """Every row as its labels, then one `column: value` line per other column."""
    out = []
    for i, row in enumerate(table.rows):
        out.append("─" * min(width, 40) if i == 0 or i in table.rules else "")
        out += _wrapped(" · ".join(row[:table.labels]) or f"row {i + 1}", width)
        out += [f"  {h}: {v}" for h, v in zip(table.header[table.labels:], row[table.labels:])]
    return out


# -- files: markdown, CSV, LaTeX ---------------------------------------------------------------

def _md_row(cells: Sequence[str]) -> str:
    return "| " + " | ".join(c.replace("|", "\\|") for c in cells) + " |"


def markdown(table: TextTable) -> str:
    """A GitHub pipe table (labels left-aligned, the rest right), the title in bold above it."""
    align = "|" + "|".join("---" if table.left(i) else "---:" for i in range(len(table.header))) + "|"
    top = [f"**{table.title}**", ""] if table.title else []
    tail = ["", table.note] if table.note else []
    return "\n".join([*top, _md_row(table.header), align, *map(_md_row, table.rows), *tail]) + "\n"


def csv_text(table: TextTable) -> str:
    """The header and the rows as CSV (RFC 4180: CRLF-free lines, quotes where needed); no title."""
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows([table.header, *table.rows])
    return buf.getvalue()


def json_text(obj: Any) -> str:
    """`obj` as a table file's JSON: indented by two, ASCII-escaped, ending in a newline."""
    return json.dumps(obj, indent=2) + "\n"


_LATEX_SPECIAL = {"&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_", "{": r"\{", "}": r"\}",
                  "~": r"\textasciitilde{}", "^": r"\textasciicircum{}", "\\": r"\textbackslash{}",
                  "<": r"\textless{}", ">": r"\textgreater{}", "Δ": r"$\Delta$", "≥": r"$\geq$",
                  "≤": r"$\leq$", "−": r"$-$", "–": "--", "—": "---", "×": r"$\times$", "→": r"$\to$"}


def latex_escape(text: str) -> str:
    """`text` with LaTeX's special characters (and the few symbols our tables print) escaped."""
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def latex(table: TextTable, label: str | None = None) -> str:
    """A `table` float holding a booktabs tabular; the title as its caption, `label` as tab:LABEL."""
    spec = "".join("l" if table.left(i) else "r" for i in range(len(table.header)))
    top = ["\\begin{table}[t]", "\\centering"]
    if table.title:
        top.append(f"\\caption{{{latex_escape(table.title)}}}")
    if label:
        top.append(f"\\label{{tab:{label}}}")
    lines = [*top, f"\\begin{{tabular}}{{{spec}}}", "\\toprule",
             " & ".join(map(latex_escape, table.header)) + " \\\\", "\\midrule"]
    for i, row in enumerate(table.rows):
        if i in table.rules and i > 0:
            lines.append("\\midrule")
        lines.append(" & ".join(map(latex_escape, row)) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\end{table}"]
    return "\n".join(lines) + "\n"
