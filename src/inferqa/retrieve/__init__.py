"""Retrievers: one interface (`Retriever`), created through the plugin registry: `bm25`,
`dense`, `clue` and `colbert`, a module each (docs/retrieve.md).

A new retriever is one module in this package declaring itself with
`@inferqa.registry.plugin("retriever", NAME, Option(...), ...)`.
"""

from __future__ import annotations

from typing import Any

from .. import registry
from .base import Retriever, question_queries


def get_retriever(name: str, **options: Any) -> Retriever:
    """The retriever NAME with checked options (see `inferqa plugins retriever NAME`)."""
    return registry.create("retriever", name, **options)


def available() -> list[str]:
    return registry.available("retriever")


__all__ = ["Retriever", "get_retriever", "available", "question_queries"]
