"""LLM backends behind one interface, with an on-disk cache. Backends import lazily."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .base import LLM, GenerationParams, Message
from .cache import CachedLLM, LLMCache, default_cache_path
from .spec import LLMSpec, parse_spec

__all__ = ["LLM", "GenerationParams", "Message", "CachedLLM", "LLMCache", "default_cache_path",
           "load_llm", "parse_spec", "LLMSpec", "DEFAULT_CACHE"]


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT_CACHE"


DEFAULT_CACHE: Any = _Default()


def _backend(spec: LLMSpec, options: dict[str, Any]) -> LLM:
    if spec.backend in ("smollm2", "gemma3-270m"):
        from .. import models
        if spec.backend == "smollm2":
            path, mode = models.smollm2_path(), "chat"
        else:
            path, mode = models.gemma3_270m_path(), "completion"
        options.setdefault("mode", mode)
        from .llamacpp import LlamaCppLLM
        return LlamaCppLLM(path, **options)
    if spec.backend == "llama-cpp":
        from .llamacpp import LlamaCppLLM
        return LlamaCppLLM(spec.target, **options)
    if spec.backend == "openai":
        from .openai_backend import OpenAILLM
        return OpenAILLM(spec.target, base_url=spec.base_url, **options)
    from .hf import TransformersLLM
    return TransformersLLM(spec.target, **options)


def load_llm(spec: str, *, cache: str | os.PathLike | LLMCache | None = DEFAULT_CACHE, **options: Any) -> LLM:
    """Open the backend named by `spec`; wrap it in the SQLite cache unless `cache=None`.

    `cache` defaults to `default_cache_path()`; keyword options override the spec's query.
    """
    parsed = parse_spec(spec)
    merged = {**parsed.options, **options}
    llm = _backend(parsed, merged)
    if cache is None:
        return llm
    if cache is DEFAULT_CACHE:
        cache = default_cache_path()
    return CachedLLM(llm, cache if isinstance(cache, LLMCache) else LLMCache(Path(cache)))
