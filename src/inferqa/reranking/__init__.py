"""Rerankers: one interface, a Run in and a Run out, created through the plugin registry.

    from inferqa.reranking import get_reranker
    reranker = get_reranker("llm-pointwise", llm="smollm2")
    run2 = reranker.rerank(run, bench, depth=100)
    run3 = rerank_run(run, bench, "cross-encoder", depth=100, executor=Executor("ray", num_actors=4))

`llm` names the LLM of the LLM rerankers (a spec or an instance); `model` the weights of
the others (HF id or local folder). Each model family is imported only when asked for, so
its extra is needed only then. A new reranker is one module in this package declaring
itself with `@inferqa.registry.plugin("reranker", NAME, Option(...), ...)`.

Its stage's function `rerank_run` is also `inferqa.rerank(run, bench, "cross-encoder")` (run
and benchmark as objects or paths).
"""

from __future__ import annotations

from typing import Any

from .. import registry
from .base import Reranker
from .permutation import listwise_order, parse_permutation, sliding_windows
from .run import rerank_run


def get_reranker(name: str, **options: Any) -> Reranker:
    """The reranker NAME with checked options (see `inferqa plugins reranker NAME`).
    Options set to None mean their defaults, so callers can pass unset CLI values on."""
    return registry.create("reranker", name, **options)


__all__ = ["Reranker", "get_reranker", "rerank_run", "parse_permutation", "sliding_windows",
           "listwise_order"]
