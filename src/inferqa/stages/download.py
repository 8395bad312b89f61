"""`inferqa download`: the QUIT release, TriviaHG or WikiHint from the hub."""

from __future__ import annotations



from pathlib import Path

from . import REQUIRED, Option, Stage

DOWNLOAD = Stage(
    "download", "Download a dataset repository; resumes an interrupted download, fails in one line offline.",
    entry="inferqa.data.download:download_stage",
    output="self-checked folder",  # a new folder only: nothing is replaced
    options=(
        Option("source", str, REQUIRED, "quit (JamshidJDMY/InferentialQA) | triviahg (JamshidJDMY/TriviaHG) | "
               "wikihint (JamshidJDMY/WikiHint): dataset repositories on the hub", positional=True, metavar="SOURCE"),
        Option("what", str, "dataset", "dataset (quit: results/dataset/, the three splits) | results (quit: all of "
               "results/, runs and reader outputs too) | all"),
        Option("out", Path, REQUIRED, "new folder to download into; files stay as the hub stores them (.zsd)",
               flags=("--out", "-o")),
    ))
