"""One self-contained `report.html`: tables, matplotlib plots as data URIs, config, environment.

Nothing in the page points outside it (no scripts, fonts or stylesheets to fetch), so it
opens offline and can be mailed as one file.
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
from .results import OPTIMAL, ORACLE, ORACLE_RERANKER, ORACLE_RETRIEVER, PIPELINE, ExperimentResults, run_label
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
.ci{color:#777;font-size:.85em}.note{color:#555;font-size:.85em;max-width:60em}
"""


def environment() -> dict[str, Any]:
    """Python, platform, CPU count and the versions of the packages that shape results."""
    versions = {}
    for pkg in _PACKAGES:
        try:
            versions[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            pass
    return {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "packages": versions,
        "created": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=110, bbox_inches="tight")
    import matplotlib.pyplot as plt
    plt.close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


_ORACLE_COLOUR = "#222222"
_STYLES = ("--", "-.", (0, (1, 1)), (0, (5, 1, 1, 1)))


def retriever_colours(results: ExperimentResults) -> dict[str, str]:
    """One colour per retriever, the same in every plot (the oracle retriever in black)."""
    from matplotlib import colormaps

    palette = colormaps["tab10"].colors
    names = [r.retriever for r in (*results.ranking, *results.reader) if r.retriever != ORACLE]
    colours = {name: palette[i % len(palette)] for i, name in enumerate(dict.fromkeys(names))}
    colours[ORACLE] = _ORACLE_COLOUR
    return colours


def _style(r, rerankers: list[str]) -> dict[str, Any]:
    """First stage solid with circles; each reranker its own dash; oracle settings dotted squares."""
    if r.setting == OPTIMAL:
        return {"linestyle": ":", "marker": "*", "markersize": 9}
    if r.setting == ORACLE_RERANKER:
        return {"linestyle": ":", "marker": "s"}
    if r.reranker is None:
        return {"linestyle": "-", "marker": "o"}
    return {"linestyle": _STYLES[rerankers.index(r.reranker) % len(_STYLES)] if r.reranker in rerankers else "--",
            "marker": "^"}


def _legend_outside(ax) -> None:
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0.0, frameon=False)


def _rerankers(results: ExperimentResults) -> list[str]:
    return list(dict.fromkeys(r.reranker for r in results.ranking if r.reranker and r.reranker != ORACLE))


def hit_curve_figure(results: ExperimentResults):
    """Hit@k against k for every ranked run (first-stage and reranked); None without hit metrics."""
    import matplotlib.pyplot as plt

    colours, rerankers = retriever_colours(results), _rerankers(results)
    series = []
    for r in results.ranking:
        pts = sorted((int(m.split("@")[1]), v) for m, v in r.metrics.items()
                     if m.startswith("hit@") and v is not None)
        if pts:
            series.append((r, pts))
    if not series:
        return None
    fig, ax = plt.subplots(figsize=(7.5, 4))
    for r, pts in series:
        ax.plot([k for k, _ in pts], [100 * v for _, v in pts], label=run_label(r), color=colours[r.retriever],
                **_style(r, rerankers))
    ax.set_xscale("log")
    ks = sorted({k for _, pts in series for k, _ in pts})
    ax.set_xticks(ks, [str(k) for k in ks])
    ax.minorticks_off()
    ax.set_xlabel("k (log scale)")
    ax.set_ylabel("Hit@k (%)")
    ax.set_ylim(-2, 102)
    ax.set_title("Hit@k per retriever and reranker")
    ax.grid(alpha=.3)
    _legend_outside(ax)
    return fig


def em_figure(results: ExperimentResults):
    """EM against k, one panel per strategy, one line per setting/run/reader; one shared legend."""
    import matplotlib.pyplot as plt

    if not results.reader:
        return None
    colours, rerankers = retriever_colours(results), _rerankers(results)
    strategies = sorted({r.strategy for r in results.reader})
    readers = sorted({r.reader for r in results.reader})
    fig, axes = plt.subplots(1, len(strategies), figsize=(5 * len(strategies) + 2.5, 4), squeeze=False,
                             sharey=True)
    for ax, strategy in zip(axes[0], strategies):
        lines: dict[str, list] = {}
        for r in results.reader:
            if r.strategy == strategy:
                label = run_label(r) + (f" / {r.reader}" if len(readers) > 1 else "")
                lines.setdefault(label, []).append(r)
        for label, rs in lines.items():
            rs.sort(key=lambda r: r.k)
            ax.plot([r.k for r in rs], [100 * r.em for r in rs], label=label, color=colours[rs[0].retriever],
                    **_style(rs[0], rerankers))
        ax.set_title(f"EM by k — {strategy}")
        ax.set_xlabel("k (passages given to the reader)")
        ax.set_xticks(sorted({r.k for r in results.reader}))
        ax.set_ylim(-2, 102)
        ax.grid(alpha=.3)
    axes[0][0].set_ylabel("EM (%)")
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
    best = {}
    for s in settings:
        for rd in readers:
            rows = [r for r in results.reader if r.setting == s and r.reader == rd]
            best[(s, rd)] = max(rows, key=lambda r: r.em, default=None)
    fig, ax = plt.subplots(figsize=(7.5, 4))
    width = 0.8 / max(len(settings), 1)
    x = np.arange(len(readers))
    greys = {PIPELINE: "#4c72b0", ORACLE_RERANKER: "#dd8452", ORACLE_RETRIEVER: "#937860", OPTIMAL: "#55a868"}
    for i, s in enumerate(settings):
        rows = [best[(s, rd)] for rd in readers]
        vals = [100 * r.em if r else 0.0 for r in rows]
        err = np.array([[100 * (r.em - r.ci[0]), 100 * (r.ci[1] - r.em)] if r and r.ci else [0, 0]
                        for r in rows]).T
        bars = ax.bar(x + i * width - 0.4 + width / 2, vals, width, yerr=err, capsize=3, color=greys.get(s),
                      label=s)
        ax.bar_label(bars, labels=[f"{v:.1f}" for v in vals], fontsize=7, padding=2)
    ax.set_xticks(x, readers)
    ax.set_ylabel("best EM over runs, strategies and k (%)")
    ax.set_ylim(0, 105)
    ax.set_title("Oracle vs pipeline gap (bars: 95 % CI)")
    _legend_outside(ax)
    ax.grid(axis="y", alpha=.3)
    return fig


def figures(results: ExperimentResults) -> list[tuple[str, str]]:
    """(caption, data URI) for every plot the results support."""
    import matplotlib
    matplotlib.use("Agg")
    out = []
    for caption, make in (("Hit@k curves", hit_curve_figure), ("Exact match by strategy and k", em_figure),
                          ("Oracle-vs-pipeline gap", gap_figure)):
        fig = make(results)
        if fig is not None:
            out.append((caption, _png(fig)))
    return out


def render_report(results: ExperimentResults, config_text: str = "") -> str:
    import json

    parts = [f"<h1>inferqa experiment: {escape(results.name)}</h1>"]
    env = results.environment or environment()
    total = results.timings.get("total")
    parts.append(f'<p class="muted">Created {escape(str(env.get("created", "")))}'
                 + (f"; total wall time {total:.1f} s" if total is not None else "") + ". Scores in percent.</p>")
    parts.append("<h2>Tables</h2>")
    for t in all_tables(results):
        parts.append(t.to_html())
    figs = figures(results)
    if figs:
        parts.append("<h2>Plots</h2>")
        for caption, uri in figs:
            parts.append(f'<figure><img alt="{escape(caption)}" src="{uri}"><figcaption>{escape(caption)}'
                         "</figcaption></figure>")
    parts.append("<h2>Experiment config</h2>")
    cfg = config_text or json.dumps(results.config, indent=2)
    parts.append(f'<pre id="config">{escape(cfg)}</pre>')
    parts.append("<h2>Environment</h2>")
    parts.append(f'<pre id="environment">{escape(json.dumps(env, indent=2))}</pre>')
    if results.timings:
        parts.append("<h2>Stage timings (s)</h2>")
        parts.append(f"<pre>{escape(json.dumps(results.timings, indent=2))}</pre>")
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>inferqa: {escape(results.name)}</title><style>{_CSS}</style></head><body>"
            + "\n".join(parts) + "</body></html>\n")


def write_report(results: ExperimentResults, path: str | os.PathLike, config_text: str = "") -> Path:
    path = Path(path)
    with atomic_open(path) as fh:
        fh.write(render_report(results, config_text))
    return path
