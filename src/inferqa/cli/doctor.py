"""`inferqa doctor` (declared in `inferqa.stages.doctor`): its printing; exit 1 on any finding."""

from __future__ import annotations

from typing import Any

import typer

from ..stages import Settings
from ..stages.doctor import DOCTOR
from .output import echo_json
from .stage_command import stage_command

# ties that are no problem, and why
_NOTES = {"tied_orderings": "hold the orderings of one hint set (by design: the same words)",
          "tied_same_label": "hold passages of one label (their order changes no score)"}


def _print_report(report: dict[str, Any], s: Settings) -> None:
    typer.echo(f"{s.run} ({report['format']}): {report['questions']} questions, {report['passages']} "
               f"passages, longest run of tied scores {report['longest_tie']}")
    for name, c in report["checks"].items():
        mark = "ok" if not c["count"] else f"{c['count']:,}"
        typer.echo(f"  {name.replace('_', ' ')}: {mark}" + (f"  e.g. {'; '.join(c['examples'])}" if c["count"] else ""))
    for name, what in _NOTES.items():
        c = report["info"][name]
        if c["count"]:
            typer.echo(f"  note: {c['count']:,} runs of tied scores {what}; not a problem. E.g. {c['examples'][0]}")


def show(report: dict[str, Any], s: Settings, _fmt: str | None) -> None:
    if s.as_json:
        echo_json(report)
    else:
        _print_report(report, s)
    if not report["ok"]:
        raise typer.Exit(1)


stage_command(DOCTOR, show)
