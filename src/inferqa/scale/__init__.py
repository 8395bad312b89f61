"""Execution backends: the same batch jobs here (`local`) or on a Ray cluster (`ray`).

- `map_batches` / `imap_batches`: any function over items in batches, model loaded once
  per worker (Ray Data actor pool on `ray`), outputs in input order;
- `encode_texts`: dense passage encoding; `rerank_run`: per-question reranking;
- `RayLLM` / `load_scaled_llm`: any LLM stage (reading, labelling, LLM rerankers) with its
  calls spread over Ray actors; `generate`: bulk generation over Ray Data.

Ray is imported only when the `ray` backend is used (`pip install 'inferqa[ray]'`).
"""

from .backends import BACKENDS, check_backend, ensure_ray, imap_batches, map_batches
from .dense import embedding_worker, encode_texts
from .llm import RayLLM, generate, load_scaled_llm
from .rerank import rerank_run, reranker_worker

__all__ = ["BACKENDS", "check_backend", "ensure_ray", "imap_batches", "map_batches", "embedding_worker",
           "encode_texts", "RayLLM", "generate", "load_scaled_llm", "rerank_run", "reranker_worker"]
