"""`inferqa plugins [KIND] [NAME]`: what the registry holds and which options each plugin takes."""

from __future__ import annotations

from typing import Annotated, Optional

import typer

from .. import registry
from .app import app
from .output import echo_lines
from .stage_command import capitalized

KIND = typer.Argument(metavar="KIND", show_default=False,
                      help=capitalized(" | ".join(registry.KINDS) + " (default: every kind)."))
NAME = typer.Argument(metavar="NAME", show_default=False, help="One plugin: print its options with types and defaults.")


@app.command("plugins")
def plugins(kind: Annotated[Optional[str], KIND] = None, name: Annotated[Optional[str], NAME] = None) -> None:
    """List the plugins of every kind, or one plugin's options (pass them as KEY=VALUE)."""
    echo_lines(registry.describe([kind] if kind else None, name))
