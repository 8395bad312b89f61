"""`inferqa plugins [KIND] [NAME]`: what the registry holds and which options each plugin takes."""

from __future__ import annotations

from typing import Optional

import typer

from ..registry import KINDS
from .app import app


@app.command("plugins")
def plugins_cmd(
    kind: Optional[str] = typer.Argument(None, help=" | ".join(KINDS) + " (default: every kind)."),
    name: Optional[str] = typer.Argument(None, help="One plugin: print its options with types and defaults."),
) -> None:
    """List the plugins of every kind, or one plugin's options (pass them as KEY=VALUE)."""
    from .. import registry

    for line in registry.describe([kind] if kind else None, name):
        typer.echo(line)
