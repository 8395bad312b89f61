"""Name → retriever class. A retriever module registers itself with `@register("name")`;
`get_retriever("name")` imports `inferqa.retrieve.<name>` on first use, so a new retriever is
one file in this package (or any module imported before the call)."""

from __future__ import annotations

import importlib
from typing import Any, Callable, TypeVar

from ..errors import InputError
from .base import Retriever

BUILTIN = ("bm25", "dense")
_REGISTRY: dict[str, type[Retriever]] = {}
T = TypeVar("T", bound=type[Retriever])


def register(name: str) -> Callable[[T], T]:
    def deco(cls: T) -> T:
        cls.name = name
        _REGISTRY[name] = cls
        return cls
    return deco


def get_retriever(name: str, **options: Any) -> Retriever:
    if name not in _REGISTRY:
        module = f"{__package__}.{name.replace('-', '_')}"
        try:
            importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
        if name not in _REGISTRY:
            raise InputError(f"unknown retriever {name!r} (available: {', '.join(available())})",
                             field="retriever")
    return _REGISTRY[name](**options)


def available() -> list[str]:
    return sorted(set(BUILTIN) | set(_REGISTRY))
