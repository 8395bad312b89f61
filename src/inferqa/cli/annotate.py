"""`inferqa annotate export|import`: people verify the labellers' accepted answers."""

from __future__ import annotations

from pathlib import Path
from typing import Optional

import typer

from ..stage_options import LEAK_LLM, LEAK_THRESHOLD, MIN_F1
from .app import InferqaTyper, app
from .flags import option_flag

annotate_app = InferqaTyper(
    help="Human verification of labels: export the distinct accepted or contested answers to a sheet, "
         "import the verdicts back into the benchmark.",
    no_args_is_help=True,
)
app.add_typer(annotate_app, name="annotate")

FORMAT_HELP = "csv or jsonl (default: from the file's suffix, csv otherwise)."


@annotate_app.command("export")
def export_cmd(
    bench: Path = typer.Argument(..., help="A labelled benchmark directory (has labels.jsonl)."),
    out: Path = typer.Option(..., "--out", "-o", help="The review sheet to write."),
    split: Optional[str] = typer.Option(None, "--split", help="Only this split's questions (default: all)."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
    min_f1: Optional[float] = option_flag(MIN_F1, "--min-f1"),
) -> None:
    """Write one row per question and distinct model answer that the judge accepted or that is contested."""
    from ..annotate import export_sheet
    from ..io import check_output

    check_output(out)
    typer.echo(export_sheet(bench, out, split=split, fmt=fmt, min_f1=min_f1).line())


@annotate_app.command("import")
def import_cmd(
    bench: Path = typer.Argument(..., help="The benchmark directory the sheet was exported from."),
    sheet: Path = typer.Argument(..., help="The review sheet with its verdict column filled "
                                           "(accept, reject or skip)."),
    annotator: str = typer.Option(..., "--annotator", help="Who reviewed the sheet (recorded in meta.json)."),
    fmt: Optional[str] = typer.Option(None, "--format", "-f", help=FORMAT_HELP),
    leak_judge: str = typer.Option("string", "--leak-judge", help="Judge for new aliases: string | embedding | llm "
                                                                  "(the string rule always runs first)."),
    leak_threshold: Optional[float] = option_flag(LEAK_THRESHOLD, "--leak-threshold", owner="embedding leak judge"),
    leak_llm: Optional[str] = option_flag(LEAK_LLM, "--leak-llm", owner="llm leak judge"),
    leak_action: Optional[str] = typer.Option(None, "--leak-action",
                                              help="drop-hint | drop-question | flag (default: the build's "
                                                   "leak policy; its 'none' means flag)."),
    dry_run: bool = typer.Option(False, "--dry-run", help="Check the sheet and print what would change; "
                                                          "write nothing."),
) -> None:
    """Apply verdicts: relabel the passages each answer decides, add accepted answers as aliases, re-run the leak filter."""
    from ..annotate import import_sheet
    from ..construct.leak_judges import leak_judge as make_leak_judge
    from ..io import check_output

    if not dry_run:
        check_output(bench / "labels.jsonl")
    judge = make_leak_judge(leak_judge, threshold=leak_threshold, llm=leak_llm)
    summary = import_sheet(bench, sheet, annotator=annotator, fmt=fmt, leak_judge=judge, leak_action=leak_action,
                           dry_run=dry_run)
    for line in summary.lines():
        typer.echo(line)
