"""Thin command-line layer over the library. Each stage's commands live in their own module."""

from __future__ import annotations

import importlib
import sys

from ..errors import InputError
from .app import app

# Each module registers its commands on `app` when imported.
COMMAND_MODULES = [
    "build",
    "rerank",
    "retrieve",
    "evaluate",
    "experiments",
    "read",
    "annotate",
    "release",
    "plugins",
]

for _name in COMMAND_MODULES:
    importlib.import_module(f"{__name__}.{_name}")


def main() -> None:
    try:
        app()
    except InputError as exc:
        print(f"inferqa: error: {exc}", file=sys.stderr)
        sys.exit(2)
    except KeyboardInterrupt:
        print("inferqa: interrupted", file=sys.stderr)
        sys.exit(130)
