"""One self-contained `report.html`: tables, matplotlib plots as data URIs, config, environment.
Nothing in it points outside (no scripts, fonts or stylesheets to fetch): it opens offline, mails as one file.
"""

from __future__ import annotations

import base64
import io
import os
import platform
import sys
from datetime import datetime, timezone
from html import escape
from importlib import metadata
from pathlib import Path
from typing import Any

from ..io import atomic_open
from ..tabular import MISSING
from ..evaluation.significance import format_p
from .comparisons import CORRECTION, SIGNIFICANT, significant, with_corrected_p
from .results import OPTIMAL, ORACLE_RERANKER, ORACLE_RETRIEVER, PIPELINE, ExperimentResults, run_label
from .tables import all_tables

_PACKAGES = ("inferqa", "numpy", "torch", "sentence-transformers", "transformers", "llama_cpp_python",
             "bm25s", "matplotlib")

_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:2em auto;max-width:1200px;
color:#222;padding:0 1em}
h1{font-size:1.6em}h2{font-size:1.25em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;margin:1em 0;font-size:.9em}caption{text-align:left;font-weight:600;padding:.3em 0}
th,td{border:1px solid #ccc;padding:.25em .6em}th{background:#f3f3f3}td.num{text-align:right;
font-variant-numeric:tabular-nums}figure{margin:1em 0}img{max-width:100%;border:1px solid #eee}
pre{background:#f7f7f7;padding:1em;overflow-x:auto;font-size:.85em}.muted{color:#666}
.ci{color:#777;font-size:.85em}sup.sig{color:#b3261e;font-weight:700;cursor:help}.note{color:#555;font-size:.85em;max-width:60em}
"""


def environment() -> dict[str, Any]:
    """Python, platform, CPU count and the versions of the packages that shape results."""
    versions = {}
    for pkg in _PACKAGES:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return {"python": sys.version.split()[0], "platform": platform.platform(), "machine": platform.machine(),
            "cpus": os.cpu_count(), "packages": versions,
            "created": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")}


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


# Every series of a plot differs from every other in colour and marker (and mostly in line
# style); a run keeps its look in every plot. Earlier series are drawn wider and below, so
# a series hidden under another still shows at its edges.
PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#bcbd22",
           "#7f7f7f", "#000000", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5")
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">", "h", "p", "d", "8", "H", "1")
LINESTYLES = ("-", "--", "-.", ":")
SETTING_COLOURS = {PIPELINE: "#4c72b0", ORACLE_RERANKER: "#dd8452", ORACLE_RETRIEVER: "#937860", OPTIMAL: "#55a868"}


def _reader_label(r, readers: list[str]) -> str:
    return run_label(r) + (f" / {r.reader}" if len(readers) > 1 else "")


def series_styles(results: ExperimentResults) -> dict[str, dict[str, Any]]:
    """Colour, marker and line style of every series label (ranked runs, then reader lines)."""
    readers = sorted({r.reader for r in results.reader})
    labels = [run_label(r) for r in results.ranking] + [_reader_label(r, readers) for r in results.reader]
    return {label: {"color": PALETTE[i % len(PALETTE)], "marker": MARKERS[i % len(MARKERS)],
                    "linestyle": LINESTYLES[i % len(LINESTYLES)]}
            for i, label in enumerate(dict.fromkeys(labels))}


def _layer(j: int, n: int) -> dict[str, Any]:
    """Series j of n: the first widest and lowest, the last thinnest and on top."""
    t = (n - 1 - j) / max(n - 1, 1)
    return {"linewidth": 1.0 + 2.2 * t, "markersize": 4.5 + 5.0 * t, "zorder": 2 + j,
            "markerfacecolor": "none", "markeredgewidth": 1.5}


def _legend_outside(ax) -> None:
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)


_CURVE_TICKS = (1, 2, 3, 5, 10, 20, 50, 100, 200, 500, 1000)


def hit_curve_figure(results: ExperimentResults):
    """Hit@k against every k for every ranked run (first-stage and reranked); None without data.
    Results saved before curves were kept fall back to their hit@k metrics."""
    import matplotlib.pyplot as plt

    styles = series_styles(results)
    series = []
    for r in results.ranking:
        if r.hit_curve:
            pts = [(k, v) for k, v in enumerate(r.hit_curve, 1) if v is not None and v == v]
        else:
            pts = sorted((int(m.split("@")[1]), v) for m, v in r.metrics.items()
                         if m.startswith("hit@") and v is not None)
        if pts:
            series.append((run_label(r), pts))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for j, (label, pts) in enumerate(series):
        ks = [k for k, _ in pts]
        marked = [i for i, k in enumerate(ks) if k in _CURVE_TICKS]
        ax.plot(ks, [100 * v for _, v in pts], label=label, markevery=marked or None, **styles[label],
                **_layer(j, len(series)))
    ax.set_xscale("log")
    top = max(k for _, pts in series for k, _ in pts)
    ticks = [k for k in _CURVE_TICKS if k <= top] or [top]
    ax.set_xticks(ticks, [str(k) for k in ticks])
    ax.minorticks_off()
    ax.set(xlabel="k (log scale)", ylabel="Hit@k (%)", ylim=(-2, 102), title="Hit@k per retriever and reranker")
    ax.grid(alpha=.3)
    _legend_outside(ax)
    return fig


def _zoomed(values: list[float], floor: float = -2.0, ceiling: float = 102.0) -> tuple[float, float]:
    """The data's range, padded by 8 % (at least 2 points), inside [floor, ceiling]: a marker at
    0 or 100 % is drawn whole."""
    lo, hi = min(values), max(values)
    pad = max(2.0, 0.08 * (hi - lo))
    return max(floor, lo - pad), min(ceiling, hi + pad)


def em_figure(results: ExperimentResults):
    """EM against k, a panel per strategy, a line per setting/run/reader, one legend. The EM axis spans
    the data; each line sits a little left or right of k so that equal values do not hide each other."""
    import matplotlib.pyplot as plt

    if not results.reader:
        return None
    styles = series_styles(results)
    strategies = sorted({r.strategy for r in results.reader})
    readers = sorted({r.reader for r in results.reader})
    fig, axes = plt.subplots(1, len(strategies), figsize=(5 * len(strategies) + 2.5, 4), squeeze=False,
                             sharey=True)
    for ax, strategy in zip(axes[0], strategies):
        lines: dict[str, list] = {}
        for r in results.reader:
            if r.strategy == strategy:
                lines.setdefault(_reader_label(r, readers), []).append(r)
        n = len(lines)
        for j, (label, rs) in enumerate(lines.items()):
            rs.sort(key=lambda r: r.k)
            dodge = (j - (n - 1) / 2) * min(0.06, 0.5 / max(n, 1))
            ax.plot([r.k + dodge for r in rs], [100 * r.em for r in rs], label=label, **styles[label],
                    **_layer(j, n))
        ax.set(title=f"EM by k — {strategy}", xlabel="k (passages given to the reader)",
               xticks=sorted({r.k for r in results.reader}))
        ax.grid(alpha=.3)
    axes[0][0].set(ylim=_zoomed([100 * r.em for r in results.reader]), ylabel="EM (%), axis zoomed to the data")
    _legend_outside(axes[0][-1])
    return fig


def gap_figure(results: ExperimentResults):
    """Best EM of each setting per reader, with its 95 % CI: how far the pipeline is from the oracles."""
    import matplotlib.pyplot as plt
    import numpy as np

    if not results.reader:
        return None
    settings = [s for s in (PIPELINE, ORACLE_RERANKER, ORACLE_RETRIEVER, OPTIMAL)
                if any(r.setting == s for r in results.reader)]
    readers = sorted({r.reader for r in results.reader})
    fig, ax = plt.subplots(figsize=(7.5, 4))
    width = 0.8 / max(len(settings), 1)
    x = np.arange(len(readers))
    tops = [0.0]
    for i, s in enumerate(settings):
        rows = [max((r for r in results.reader if r.setting == s and r.reader == rd), key=lambda r: r.em, default=None)
                for rd in readers]
        vals = [100 * r.em if r else 0.0 for r in rows]
        err = np.array([[100 * (r.em - r.ci[0]), 100 * (r.ci[1] - r.em)] if r and r.ci else [0, 0]
                        for r in rows]).T
        tops += [v + e for v, e in zip(vals, err[1])]
        bars = ax.bar(x + i * width - 0.4 + width / 2, vals, width, yerr=err, capsize=3,
                      color=SETTING_COLOURS.get(s), label=s)
        ax.bar_label(bars, labels=[f"{v:.1f}" for v in vals], fontsize=7, padding=2)
    ax.set_xticks(x, readers)
    ax.set(ylabel="best EM over runs, strategies and k (%)", title="Oracle vs pipeline gap (bars: 95 % CI)",
           ylim=(0, min(105.0, max(tops) * 1.1 + 3)))  # bars start at 0; the top follows the data
    _legend_outside(ax)
    ax.grid(axis="y", alpha=.3)
    return fig


def drawn_series(fig) -> list[dict[str, Any]]:
    """Each plotted series as matplotlib drew it: axis, label, colour, line style, marker (bars:
    face colour, 'bar'), number of points and the axis's y range."""
    from matplotlib.colors import to_hex

    out = []
    for n, ax in enumerate(fig.axes):
        ylim = [round(float(y), 3) for y in ax.get_ylim()]
        for line in ax.get_lines():
            if not line.get_label().startswith("_"):
                out.append({"axis": n, "label": line.get_label(), "color": to_hex(line.get_color()),
                            "linestyle": line.get_linestyle(), "marker": str(line.get_marker()),
                            "points": len(line.get_xdata()), "ylim": ylim})
        for bars in ax.containers:
            if getattr(bars, "patches", None) and not str(bars.get_label()).startswith("_"):
                out.append({"axis": n, "label": bars.get_label(), "color": to_hex(bars.patches[0].get_facecolor()),
                            "linestyle": "bar", "marker": "", "points": len(bars.patches), "ylim": ylim})
    return out


def figures(results: ExperimentResults) -> list[tuple[str, str, list[dict[str, Any]]]]:
    """(caption, data URI, drawn series) for every plot the results support."""
    import matplotlib
    matplotlib.use("Agg")
    out = []
    for caption, make in (("Hit@k curves", hit_curve_figure), ("Exact match by strategy and k", em_figure),
                          ("Oracle-vs-pipeline gap", gap_figure)):
        fig = make(results)
        if fig is not None:
            series = drawn_series(fig)  # before _png closes the figure
            out.append((caption, _png(fig), series))
    return out


_EMPHASIS_NOTE = ("Bold: the best pipeline value of a column (oracle rows are bounds, not candidates). "
                  f"† after a value: it differs from its baseline (the first-stage run a reranker reorders, the "
                  f"first retriever for a retriever) at p < {SIGNIFICANT} in the paired test below, the p-value "
                  f"{CORRECTION}-corrected over the tests of its column (as `inferqa compare` corrects); hover "
                  "for p.")


def _row_run(table, row) -> dict[str, Any]:
    """The setting, retriever and reranker a table row shows, as run_label needs them."""
    cells = dict(zip(table.columns, row))
    reranker = cells.get("reranker")
    return {"setting": cells.get("setting", PIPELINE), "retriever": cells.get("retriever"),
            "reranker": None if reranker in (None, MISSING) else reranker, "reader": cells.get("reader"),
            "strategy": cells.get("strategy")}


def emphasised(table, results: ExperimentResults):
    """`table` with its best pipeline values in bold and the significant differences marked
    (from `results.tests`, the pairs experiments.comparisons tested)."""
    from dataclasses import replace
    from types import SimpleNamespace

    if table.name.startswith("tests-"):
        return table
    runs = [_row_run(table, row) for row in table.rows]
    bold = set()
    for c in range(table.n_label_columns, len(table.columns)):
        if table.kind(c) != "score":
            continue
        cand = [(r, row[c]) for r, row in enumerate(table.rows)
                if runs[r]["setting"] == PIPELINE and isinstance(row[c], (int, float)) and row[c] == row[c]]
        top = max((v for _, v in cand), default=None)
        bold |= {(r, c) for r, v in cand if v == top}
    # the test of each (run, column, reader, strategy) cell; with_corrected_p: an older results.json holds p alone
    tested = {(t["a"], t["metric"] if t["family"] == "ranking" else f"EM@{t['k']}", t.get("reader"),
               t.get("strategy")): t for t in with_corrected_p(results.tests) if t["b"] != OPTIMAL and significant(t)}
    marks = {}
    for r, run in enumerate(runs):
        label = run_label(SimpleNamespace(**run))
        for c in range(table.n_label_columns, len(table.columns)):
            t = tested.get((label, table.columns[c], run["reader"], run["strategy"]))
            if t:
                family = f"{t['family_size']} test{'s' if t['family_size'] != 1 else ''}"
                marks[(r, c)] = ("†", f"p = {format_p(t['p_corrected'])} against {t['b']} (paired test, "
                                      f"{t['correction']}-corrected over {family})")
    return replace(table, bold=frozenset(bold), marks=marks)


def timings_table(timings: dict[str, float]) -> str:
    """Stage timings as an HTML table: stage, its hash, wall and CPU seconds; the total last."""
    rows = []
    for key, wall in timings.items():
        if key == "total" or key.endswith(" cpu"):
            continue
        name, _, digest = key.rpartition("-")
        cpu = timings.get(f"{key} cpu")
        rows.append(f'<tr><td class="lab">{escape(name or key)}</td><td class="lab muted">{escape(digest)}</td>'
                    f'<td class="num">{wall:.1f}</td><td class="num">{"" if cpu is None else f"{cpu:.1f}"}</td></tr>')
    if "total" in timings:
        rows.append(f'<tr><th class="lab">total</th><td></td><th class="num">{timings["total"]:.1f}</th><td></td></tr>')
    note = ('<p class="note">Stages computed by this run only; a stage taken from the cache is not listed.</p>')
    return ('<table id="table-timings"><caption>Stage timings (seconds)</caption><thead><tr><th>stage</th>'
            "<th>hash</th><th>wall</th><th>cpu</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table>" + note)


def render_report(results: ExperimentResults, config_text: str = "", explorer: str | None = None) -> str:
    """The page; `explorer`: a link (relative URL) to the explorer written beside it."""
    import json

    env = results.environment or environment()
    total = results.timings.get("total")
    parts = [f"<h1>inferqa experiment: {escape(results.name)}</h1>",
             f'<p class="muted">Created {escape(str(env.get("created", "")))}'
             + (f"; total wall time {total:.1f} s" if total is not None else "") + ". Scores in percent.</p>"]
    if explorer:
        parts.append(f'<p><a id="explorer-link" href="{escape(explorer)}">Explore the runs and answers question '
                     "by question</a> (explorer.html, beside this page).</p>")
    parts += ["<h2>Tables</h2>", f'<p class="note" id="emphasis-note">{escape(_EMPHASIS_NOTE)}</p>',
              *(emphasised(t, results).to_html() for t in all_tables(results))]
    figs = figures(results)
    if figs:
        parts.append("<h2>Plots</h2>")
        for caption, uri, series in figs:
            data = escape(json.dumps(series, ensure_ascii=False), quote=True)
            parts.append(f'<figure data-series="{data}"><img alt="{escape(caption)}" src="{uri}">'
                         f"<figcaption>{escape(caption)}</figcaption></figure>")
    cfg = config_text or json.dumps(results.config, indent=2)
    parts += ["<h2>Experiment config</h2>", f'<pre id="config">{escape(cfg)}</pre>',
              "<h2>Environment</h2>", f'<pre id="environment">{escape(json.dumps(env, indent=2))}</pre>']
    if results.timings:
        parts += ["<h2>Stage timings</h2>", timings_table(results.timings)]
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>inferqa: {escape(results.name)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")


def write_report(results: ExperimentResults, path: str | os.PathLike, config_text: str = "",
                 explorer: str | None = None) -> Path:
    with atomic_open(path) as fh:
        fh.write(render_report(results, config_text, explorer))
    return Path(path)
