"""Retrievers: one interface (`Retriever`), created through the plugin registry.

- `bm25`: bm25s tokenizer/stemmer, compositional dedup of hint subsets (`dedup=False` runs
  plain bm25s over the expanded corpus);
- `dense`: sentence-transformers bi-encoder, memory-mapped float32 embeddings, FAISS flat or
  HNSW;
- `colbert`: late interaction (MaxSim over token vectors) with a model in PyLate's layout,
  over full passages or over each distinct hint once (`mode=clue`).

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
