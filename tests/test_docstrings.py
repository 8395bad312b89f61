"""Every name `inferqa` exports has a docstring and an entry in the API reference (docs/api.md,
rendered by mkdocstrings from `::: dotted.path` lines)."""

from __future__ import annotations

import importlib
import inspect
import re
import types
from pathlib import Path

import pytest

import inferqa

API = Path(__file__).resolve().parents[1] / "docs" / "api.md"
EXPORTED = [name for name in inferqa.__all__ if not name.startswith("__")]


def _path(obj) -> str:
    """Where `obj` is defined: a module's name, else module.qualname."""
    if isinstance(obj, types.ModuleType):
        return obj.__name__
    return f"{obj.__module__}.{obj.__qualname__}"


def _resolve(directive: str):
    """The object a `::: a.b.c` line documents: the longest importable module, then attributes."""
    parts = directive.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            target = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            target = getattr(target, attr, None)
        return target
    return None


def _covers(directive: str, obj, path: str) -> bool:
    """A `::: directive` documents `obj`: it names it, a module that defines it or lists it in
    `__all__`, or (for a stage package) one of the package's modules."""
    target = _resolve(directive)
    if directive == path or target is obj:
        return True
    if not isinstance(target, types.ModuleType):
        return False
    if isinstance(obj, types.ModuleType):
        return directive.startswith(path + ".")
    members = getattr(target, "__all__", ())
    return path.rpartition(".")[0] == directive or any(getattr(target, m, None) is obj for m in members)


@pytest.mark.parametrize("name", EXPORTED)
def test_every_exported_name_has_a_docstring(name):
    assert inspect.getdoc(getattr(inferqa, name)), f"inferqa.{name} has no docstring"


@pytest.mark.parametrize("name", EXPORTED)
def test_every_exported_name_is_in_the_api_reference(name):
    # `::: inferqa` renders the package docstring only: its names load lazily, unseen by mkdocstrings
    directives = [d for d in re.findall(r"^::: *(\S+)", API.read_text(encoding="utf-8"), re.M) if d != "inferqa"]
    obj = getattr(inferqa, name)
    path = _path(obj)
    assert any(_covers(d, obj, path) for d in directives), f"inferqa.{name} ({path}) has no entry in docs/api.md"
