"""`inferqa import-answers` and `inferqa stored-answers` (declared in
`inferqa.stages.stored_answers`): their printing."""

from __future__ import annotations

from typing import Any

import typer

from ..stages import Settings
from ..stages.stored_answers import IMPORT_ANSWERS, STORED_ANSWERS
from .output import echo_json
from .stage_command import stage_command


def show_import(counts: dict[str, int], _s: Settings, _fmt: str | None) -> None:
    typer.echo(", ".join(f"{k.replace('_', ' ')}: {v:,}" for k, v in counts.items()))


def _pct(values: dict, name: str = "") -> str:
    return ", ".join(f"{name}{k}: {100 * v:.2f}" for k, v in values.items())


def _paper_line(model: str, row: dict[str, Any]) -> str:
    line = (f"{model}: accuracy {_pct(row['accuracy'], 'labels ')}; optimal EM {_pct(row['optimal_em'], 'labels ')}; "
            f"hints of correct passages (oracle) {_pct(row['hint_contribution']['oracle'])}")
    if "oracle_reranker_em" in row:
        line += (f"; oracle reranker EM {_pct(row['oracle_reranker_em'])}; hints of correct top passages "
                 f"(run) {_pct(row['hint_contribution']['run'])}")
    return line


def _inferqa_line(model: str, row: dict[str, Any]) -> str:
    acc = ", ".join(f"label {k}: {100 * v:.2f}" for k, v in row["accuracy_per_label"].items())
    line = f"{model}: optimal EM {100 * row['optimal_em']:.2f}; accuracy {acc}"
    if "oracle_reranker_em" in row:
        line += "; oracle reranker EM " + ", ".join(f"k={k}: {100 * v:.2f}"
                                                    for k, v in row["oracle_reranker_em"].items())
    return line


def show_stored(payload: dict[str, Any], s: Settings, _fmt: str | None) -> None:
    if s.as_json:
        echo_json(payload)
        return
    line = _paper_line if s.protocol == "paper" else _inferqa_line
    for model, row in payload["models"].items():
        typer.echo(line(model, row))


stage_command(IMPORT_ANSWERS, show_import)
stage_command(STORED_ANSWERS, show_stored)
