"""`inferqa annotate export|import`: people verify the labellers' accepted answers."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

from ..llm.base import LLM
from ..parameters import LEAK_JUDGE, LEAK_LLM_FLAG, LEAK_THRESHOLD_FLAG, MIN_F1, OVERWRITE, SHEET_FORMAT
from ..stage import Opt, stage

if TYPE_CHECKING:
    from .apply import ImportSummary
    from .export import ExportSummary

SheetFormat = Annotated["str | None", SHEET_FORMAT]


@stage("annotate export")
def annotate_export(bench: Annotated[Path, Opt("a labelled benchmark directory (has labels.jsonl)",
                                               metavar="BENCH")], *,
                    out: Annotated[Path, Opt("the review sheet to write", flags=("--out", "-o"))],
                    split: Annotated["str | None", Opt("only this split's questions (default: all)")] = None,
                    fmt: SheetFormat = None,
                    min_f1: Annotated[float, MIN_F1] = MIN_F1.default,
                    overwrite: Annotated[bool, OVERWRITE] = False) -> ExportSummary:
    """Write one row per question and distinct model answer that the judge accepted or that is contested."""
    from ..io import check_output
    from .export import export_sheet

    check_output(out)
    return export_sheet(bench, out, split=split, fmt=fmt, min_f1=min_f1)


@stage("annotate import")
def annotate_import(bench: Annotated[Path, Opt("the benchmark directory the sheet was exported from",
                                               metavar="BENCH")],
                    sheet: Annotated[Path, Opt("the review sheet with its verdict column filled (accept, reject or "
                                               "skip)", metavar="SHEET")], *,
                    annotator: Annotated[str, Opt("who reviewed the sheet (recorded in meta.json)")],
                    fmt: SheetFormat = None,
                    leak_judge: Annotated[str, replace(LEAK_JUDGE, help="judge for new aliases (the string rule always "
                                                       "runs first)", choices=("string", "embedding", "llm"))]
                    = LEAK_JUDGE.default,
                    leak_threshold: Annotated[float, LEAK_THRESHOLD_FLAG] = LEAK_THRESHOLD_FLAG.default,
                    leak_llm: Annotated["str | LLM", LEAK_LLM_FLAG] = LEAK_LLM_FLAG.default,
                    leak_action: Annotated["str | None", Opt("what to do with a hint a new alias leaks into (default: "
                                                             "the build's leak policy; its 'none' means flag)",
                                                             choices=("drop-hint", "drop-question", "flag"))] = None,
                    dry_run: Annotated[bool, Opt("check the sheet and print what would change; write nothing")]
                    = False) -> ImportSummary:
    """Apply verdicts: relabel the passages each answer decides, add accepted answers as aliases, re-run the
    leak filter."""
    from ..construct.leak_judges import leak_judge_of
    from ..io import check_output
    from .apply import import_sheet

    if not dry_run:
        check_output(bench / "labels.jsonl")
    return import_sheet(bench, sheet, annotator=annotator, fmt=fmt,
                        leak_judge=leak_judge_of(leak_judge, leak_threshold, leak_llm), leak_action=leak_action,
                        dry_run=dry_run)
