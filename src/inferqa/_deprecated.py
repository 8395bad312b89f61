"""Old import paths kept for one release after a module or package was renamed.

Importing an old path gives the new module itself (every name, monkeypatching included,
stays shared) with a DeprecationWarning naming the new path. An old package path maps its
submodules too: `inferqa.read.run` is `inferqa.reading.run`.

`inferqa.evaluate`, `inferqa.read` and `inferqa.rerank` are the stage functions now. An old
path below one of them (`import inferqa.read.run as run`, then `inferqa.read.run`) is reached
through the function, so the module is also set as the function's attribute when it loads.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import sys
import warnings
from types import FunctionType, ModuleType

# old path -> new path; these go in the next release
MOVED = {
    "inferqa.evaluate": "inferqa.evaluation",
    "inferqa.read": "inferqa.reading",
    "inferqa.rerank": "inferqa.reranking",
    "inferqa.evaluate.answers": "inferqa.evaluation.exact_match",
    "inferqa.evaluate.stored": "inferqa.evaluation.stored_metrics",
    "inferqa.read.answers": "inferqa.reading.answer_scoring",
    "inferqa.read.answer_rows": "inferqa.reading.answer_scoring",
    "inferqa.read.stored": "inferqa.reading.oracle_reader",
    "inferqa.tuning": "inferqa.tune.diversify",
    "inferqa.options": "inferqa.option_values",
}


def new_path(old: str) -> str | None:
    """Where the module `old` lives now; None when it did not move."""
    if old in MOVED:
        return MOVED[old]
    package, _, name = old.rpartition(".")
    parent = new_path(package) if package else None
    return f"{parent}.{name}" if parent else None


class OldPaths(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds the old paths of MOVED; loads each as the module at its new path."""

    def find_spec(self, fullname: str, path=None, target=None) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith("inferqa.") or new_path(fullname) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, self)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        new = new_path(spec.name)
        warnings.warn(f"{spec.name} is deprecated: import {new} instead (the old path goes in the next release)",
                      DeprecationWarning, stacklevel=2)
        module = importlib.import_module(new)
        spec.loader_state = module.__spec__
        return module

    def exec_module(self, module: ModuleType) -> None:
        # the import system gave the module the old path's spec: it gets its own back
        old = module.__spec__.name
        module.__spec__ = module.__spec__.loader_state
        _attach_to_stage_function(old, module)


def _attach_to_stage_function(old: str, module: ModuleType) -> None:
    """`inferqa.read.run` is looked up as an attribute of the function `inferqa.read`: give it one."""
    parts = old.split(".")
    if len(parts) != 3:
        return
    owner = getattr(sys.modules[parts[0]], parts[1], None)
    if isinstance(owner, FunctionType):
        setattr(owner, parts[2], module)


def install() -> None:
    """Make the old paths importable. First on sys.meta_path: the files of an old package's
    submodules exist under the new package and must not load a second time."""
    if not any(isinstance(finder, OldPaths) for finder in sys.meta_path):
        sys.meta_path.insert(0, OldPaths())
