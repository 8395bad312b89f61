"""`inferqa doctor`: what in a run file would make its numbers mean something else."""

from __future__ import annotations



from pathlib import Path

from . import REQUIRED, Option, Stage

DOCTOR = Stage(
    "doctor", "Ids not in the corpus, missing questions, duplicates, title/id disagreements, tied scores (exit 1 "
    "on any; ties among the orderings of one hint set are by design and only noted).",
    entry="inferqa.evaluation.doctor:doctor_stage",
    options=(
        Option("run", Path, REQUIRED, "run file: TREC or Rankify/DPR JSON (told apart by content)", positional=True,
               metavar="RUN_FILE"),
        Option("bench", Path, REQUIRED, "benchmark directory the run is about", flags=("--bench",)),
        Option("split", str, None, "split the run covers; needed for JSON runs"),
        Option("tie_length", int, 10, "report runs of at least this many equal scores", min=2),
        Option("as_json", bool, False, "print the report as JSON", flags=("--json",)),
    ))
