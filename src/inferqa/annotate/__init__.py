"""Label quality: people verify the labellers' accepted answers, and their verdicts flow back.

    export_sheet(bench_dir, out, split=None, fmt=None)   -> ExportSummary
    import_sheet(bench_dir, sheet, annotator=..., leak_judge=None, leak_action=None) -> ImportSummary
"""

from .apply import ImportSummary, import_sheet
from .export import ExportSummary, export_sheet
from .leaks import DROP_HINT, DROP_QUESTION, FLAG, LEAK_ACTIONS

__all__ = ["ExportSummary", "ImportSummary", "export_sheet", "import_sheet", "FLAG", "DROP_HINT",
           "DROP_QUESTION", "LEAK_ACTIONS"]
