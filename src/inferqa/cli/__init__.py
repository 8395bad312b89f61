"""Thin command-line layer over the library. Each stage's commands live in their own module."""

from __future__ import annotations

import importlib
import sys

import typer

from ..errors import InputError
from .app import app

# Each module registers its commands on `app` when imported.
COMMAND_MODULES = ["build", "rerank", "retrieve", "evaluate", "experiments", "read", "tune", "diagnose",
                   "label", "annotate", "doctor", "authors_files", "download", "reproduce", "plugins"]

for _name in COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}")


# Outputs are written to a temporary file and renamed, so an interrupted command leaves none half-written.
INTERRUPTED = ("inferqa: interrupted: no output was left half-written; finished work is kept where the command "
               "keeps it (an index's progress, a rerank's checkpoint, the LLM call cache), so running "
               "the same command again resumes")


def _one_line(text: str) -> str:
    return " ".join(text.split())


def main() -> None:
    """Run the CLI: bad input of any kind (ours or a malformed command line) is one line on
    stderr and exit code 2."""
    try:
        from typer._click import exceptions as cx  # typer vendors its own click since 0.24
    except ImportError:  # pragma: no cover - older typer on plain click
        from click import exceptions as cx

    from ..progress import quiet_other_bars

    quiet_other_bars()
    try:
        code = app(standalone_mode=False)
    except InputError as exc:
        print(f"inferqa: error: {_one_line(str(exc))}", file=sys.stderr)
        sys.exit(2)
    except cx.NoArgsIsHelpError as exc:
        print(exc.format_message())
        sys.exit(2)
    except cx.UsageError as exc:
        cmd = exc.ctx.command_path if exc.ctx is not None else "inferqa"
        print(f"inferqa: error: {cmd}: {_one_line(exc.format_message())} (see {cmd} --help)", file=sys.stderr)
        sys.exit(2)
    except cx.ClickException as exc:
        print(f"inferqa: error: {_one_line(exc.format_message())}", file=sys.stderr)
        sys.exit(exc.exit_code)
    except (KeyboardInterrupt, typer.Abort):
        print(INTERRUPTED, file=sys.stderr)
        sys.exit(130)
    sys.exit(code if isinstance(code, int) else 0)
