"""Rerankers: one factory, one interface, a Run in and a Run out.

    from inferqa.rerank import get_reranker
    reranker = get_reranker("llm-pointwise", model="smollm2")
    run2 = reranker.rerank(run, bench, depth=100)

Each model family is imported only when asked for, so its extra is needed only then.
"""

from __future__ import annotations

import importlib
import inspect
from typing import Any

from ..errors import InputError
from .base import Reranker
from .permutation import listwise_order, parse_permutation, sliding_windows

# name -> "module:Class"
RERANKERS: dict[str, str] = {
    "llm-pointwise": "llm:PointwiseLLMReranker",
    "llm-listwise": "llm:ListwiseLLMReranker",
    "upr": "llm:UPRReranker",
    "cross-encoder": "cross_encoder:CrossEncoderReranker",
    "monot5": "t5:MonoT5Reranker",
    "rankt5": "t5:RankT5Reranker",
    "lit5": "t5:LiT5Reranker",
}


def reranker_class(name: str) -> type[Reranker]:
    if name not in RERANKERS:
        raise InputError(f"unknown reranker {name!r} (have: {', '.join(RERANKERS)})", field="reranker")
    module, cls = RERANKERS[name].split(":")
    return getattr(importlib.import_module(f"{__name__}.{module}"), cls)


def get_reranker(name: str, **options: Any) -> Reranker:
    """A reranker by registry name. `model` is an LLM spec or instance for the LLM rerankers,
    an HF id or local folder for the others; other options go to the class (see its docs).
    Options set to None are dropped, so callers can pass optional CLI values straight on."""
    cls = reranker_class(name)
    options = {k: v for k, v in options.items() if v is not None}
    unknown = sorted(set(options) - options_of(cls))
    if unknown:
        raise InputError(f"reranker {name!r} takes no option {', '.join(unknown)} "
                         f"(it takes: {', '.join(sorted(options_of(cls)))})", field="options")
    return cls(**options)


def options_of(cls: type) -> set[str]:
    """Keyword options a reranker class takes, its base classes' included."""
    names: set[str] = set()
    for klass in cls.__mro__:
        init = klass.__dict__.get("__init__")
        if init is not None and klass is not object:
            names |= {p for p, v in inspect.signature(init).parameters.items()
                      if v.kind not in (v.VAR_KEYWORD, v.VAR_POSITIONAL)}
    return names - {"self"}


__all__ = ["RERANKERS", "Reranker", "get_reranker", "reranker_class", "options_of", "parse_permutation",
           "sliding_windows", "listwise_order"]
