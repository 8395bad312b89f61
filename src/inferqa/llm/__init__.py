"""LLM backends behind one interface, with an on-disk cache. Backends are `llm` plugins of
`inferqa.registry` and import their libraries lazily."""

from __future__ import annotations

import os
from typing import Any

from .base import LLM, GenerationParams, Message
from .cache import DEFAULT_CACHE, CachedLLM, LLMCache, default_cache_path, with_cache
from .spec import LLMSpec, check_spec, parse_spec

__all__ = ["LLM", "GenerationParams", "Message", "CachedLLM", "LLMCache", "default_cache_path",
           "load_llm", "open_backend", "parse_spec", "check_spec", "LLMSpec", "DEFAULT_CACHE", "with_cache"]


def open_backend(spec: str, **options: Any) -> LLM:
    """The backend named by `spec`, uncached; keyword options override the spec's query."""
    from .. import registry

    parsed = parse_spec(spec)
    plugin = registry.get("llm", parsed.backend)
    merged = {**parsed.options, **options}
    if parsed.base_url is not None:
        merged.setdefault("base_url", parsed.base_url)
    target = (parsed.target,) if plugin.meta.get("target", True) else ()
    return plugin.create(*target, **merged)


def load_llm(spec: str, *, cache: str | os.PathLike | LLMCache | None = DEFAULT_CACHE, **options: Any) -> LLM:
    """Open the backend named by `spec`; wrap it in the SQLite cache unless `cache=None`.

    `cache` is as in `with_cache` (default: the file `default_cache_path()` names); keyword
    options override the spec's query.
    """
    return with_cache(open_backend(spec, **options), cache)
