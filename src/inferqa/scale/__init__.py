"""Execution backends: the same batch jobs here (`local`) or on a Ray cluster (`ray`).

Below the stages, which take an `Executor` as a parameter:
- `Executor` / `map_batches` / `imap_batches`: any function over items in batches, model
  loaded once per worker (Ray Data actor pool on `ray`), outputs in input order;
- `RayLLM` / `load_scaled_llm`: any LLM (reading, labelling, LLM rerankers) with its calls
  spread over Ray actors; `generate`: bulk generation over Ray Data.

Ray is imported only when the `ray` backend is used (`pip install 'inferqa[ray]'`).
"""

from .backends import BACKENDS, LOCAL, Executor, check_backend, ensure_ray, imap_batches, map_batches
from .llm import RayLLM, generate, load_scaled_llm

__all__ = ["BACKENDS", "LOCAL", "Executor", "check_backend", "ensure_ray", "imap_batches", "map_batches",
           "RayLLM", "generate", "load_scaled_llm"]
