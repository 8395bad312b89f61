"""Retrievers: one interface (`Retriever`), one registry (`get_retriever`).

- `bm25`: bm25s tokenizer/stemmer, compositional dedup of hint subsets (`dedup=False` runs
  plain bm25s over the expanded corpus);
- `dense`: sentence-transformers bi-encoder, memory-mapped float32 embeddings, FAISS flat or
  HNSW;
- `colbert`: late interaction (MaxSim over token vectors) with a model in PyLate's layout,
  over full passages or over each distinct hint once (`mode=clue`).
"""

from __future__ import annotations

from .base import Retriever, question_queries
from .registry import available, get_retriever, register

__all__ = ["Retriever", "get_retriever", "register", "available", "question_queries"]
