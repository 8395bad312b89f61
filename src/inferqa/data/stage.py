"""`inferqa download`: the QUIT release, TriviaHG or WikiHint from the hub (`inferqa.data.download`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

from ..stage import Opt, stage


@stage("download", output="self-checked folder")  # a new folder only: nothing is replaced
def download(source: Annotated[str, Opt("quit (JamshidJDMY/InferentialQA) | triviahg (JamshidJDMY/TriviaHG) | "
                                        "wikihint (JamshidJDMY/WikiHint): dataset repositories on the hub",
                                        metavar="SOURCE")], *,
             what: Annotated[str, Opt("dataset (quit: results/dataset/, the three splits) | results (quit: all of "
                                      "results/, runs and reader outputs too) | all")] = "dataset",
             out: Annotated[Path, Opt("new folder to download into; files stay as the hub stores them (.zsd)",
                                      flags=("--out", "-o"))]) -> tuple[Path, int]:
    """Download a dataset repository; resumes an interrupted download, fails in one line offline."""
    import sys

    from .download import download as fetch

    return fetch(source, what, out, on_start=lambda line: print(line, file=sys.stderr, flush=True))
