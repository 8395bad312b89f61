"""`inferqa download`: the QUIT release, TriviaHG or WikiHint from the hub."""

from __future__ import annotations

from pathlib import Path

import typer

from .app import app


@app.command("download")
def download_cmd(
    source: str = typer.Argument(..., help="quit (JamshidJDMY/InferentialQA) | triviahg (JamshidJDMY/TriviaHG) | "
                                 "wikihint (JamshidJDMY/WikiHint): dataset repositories on the hub."),
    what: str = typer.Option("dataset", "--what", help="dataset (quit: results/dataset/, the three splits) | "
                             "results (quit: all of results/, runs and reader outputs too) | all."),
    out: Path = typer.Option(..., "--out", "-o", help="New folder to download into; files stay as the hub "
                             "stores them (.zsd)."),
) -> None:
    """Download a dataset repository; resumes an interrupted download, fails in one line offline."""
    from ..data.download import download

    path, n = download(source, what, out, on_start=lambda line: typer.echo(line, err=True))
    typer.echo(f"{path}: {n:,} files")
