"""`inferqa plugins [KIND] [NAME]`: what the registry holds and which options each plugin takes."""

from __future__ import annotations



from ..registry import KINDS
from . import Option, Stage

PLUGINS = Stage(
    "plugins", "List the plugins of every kind, or one plugin's options (pass them as KEY=VALUE).",
    entry="inferqa.registry:describe_stage",
    options=(
        Option("kind", str, None, " | ".join(KINDS) + " (default: every kind)", positional=True, metavar="KIND"),
        Option("name", str, None, "one plugin: print its options with types and defaults", positional=True,
               metavar="NAME"),
    ))
