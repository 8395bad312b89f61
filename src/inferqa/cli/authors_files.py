"""The QUIT authors' file formats: `inferqa export` writes them, `import-answers` stores their
reader answers, `stored-answers` scores those (declared in `inferqa.exports` and
`inferqa.reading.stage`): their printing."""

from __future__ import annotations

from typing import Any

import typer

from .. import registry
from ..exports import export
from ..reading.stage import import_answers, stored_answers
from .output import echo_json
from .stage_command import stage_command


def show_export(written: int, s: Any, _fmt: str | None) -> None:
    counts = registry.get("export", s.kind).meta.get("counts")
    what = "passages" if counts == "passages" else f"questions of split {s.split or 'all'}"
    typer.echo(f"{s.out}: {written:,} {what}")


def show_import(counts: dict[str, int], _s: Any, _fmt: str | None) -> None:
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
    line = f"{model}: optimal EM {100 * row['optimal_em']:.2f}; accuracy {_pct(row['accuracy_per_label'], 'label ')}"
    if "oracle_reranker_em" in row:
        line += f"; oracle reranker EM {_pct(row['oracle_reranker_em'], 'k=')}"
    return line


def show_stored(payload: dict[str, Any], s: Any, _fmt: str | None) -> None:
    if s.as_json:
        echo_json(payload)
        return
    line = _paper_line if s.protocol == "paper" else _inferqa_line
    for model, row in payload["models"].items():
        typer.echo(line(model, row))


stage_command(export, show_export)
stage_command(import_answers, show_import)
stage_command(stored_answers, show_stored)
