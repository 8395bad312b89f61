"""`inferqa tune-diversify`: the adaptive diversification margin chosen on one split."""

from __future__ import annotations

from typing import Any

from ..stages import Settings
from ..stages.tune import TUNE_DIVERSIFY
from .stage_command import stage_command


def show(t: Any, _settings: Settings, fmt: str | None) -> None:
    from dataclasses import asdict

    from ..tabular import TextTable
    from .output import print_tables, rounded

    names = list(t.rows[0].scores)
    cells = tuple(("every query" if r.margin is None else str(rounded(r.margin)), f"{100 * r.share:.1f}",
                   *[f"{100 * r.scores[n]:.2f}" for n in names]) for r in t.rows)
    flags = f"--diversify {t.per_group} --diversify-by {t.by}"
    chosen = ("(every query: no margin)" if t.margin is None else
              f"--diversify-margin {rounded(t.margin)} (or, as a share: --diversify-share {t.share:.4g})")
    note = (f"best on {t.split}: {flags} {chosen}; score it on another split "
            f"(`inferqa retrieve` or `inferqa rerank` with these flags)")
    table = TextTable(f"{flags}: margins on {t.split} ({t.questions} questions), by {t.metric}",
                      ("margin", "diversified %", *names), cells, 1, note=note)
    payload = {**{k: v for k, v in asdict(t).items() if k != "rows"}, "margin": t.margin, "share": t.share,
               "rows": [asdict(r) for r in t.rows]}
    print_tables([table], fmt, payload)


stage_command(TUNE_DIVERSIFY, show, tables=True)
