"""Parse backend spec strings (see inferqa.llm.base for the grammar).

Names come from the plugin registry: `NAME` for a plugin that needs no model (declared
with `target=False`, e.g. smollm2), `NAME:MODEL` for the others. A bare Hugging Face id
`ORG/NAME` is short for `transformers:ORG/NAME`. Query values stay text; the registry
converts and checks them against the backend's declared options.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from .. import registry
from ..errors import InputError


# A hub id: owner and repository name, one slash (no backend name has one, so none is shadowed).
HUB_ID = re.compile(r"[A-Za-z0-9][\w.-]*/[A-Za-z0-9][\w.-]*")
HUB_BACKEND = "transformers"


@dataclass
class LLMSpec:
    backend: str
    target: str  # model path, HF id or served model name
    base_url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


def check_spec(spec: str) -> LLMSpec:
    """Everything about `spec` short of loading it: the backend, its options (names and
    values) and, for a backend that runs a local model, a model written as a path exists."""
    from ..models import check_model_ref

    parsed = parse_spec(spec)
    plugin = registry.get("llm", parsed.backend)
    plugin.settings(parsed.options)
    if plugin.meta.get("target", True) and "base_url" not in plugin.options:  # a served model is no path here
        check_model_ref(parsed.target, "LLM model file or folder", "llm")
    return parsed


def parse_spec(spec: str) -> LLMSpec:
    spec = spec.strip()
    if not spec:
        raise InputError("empty LLM spec", field="llm")
    head, query = spec, ""
    if "?" in spec:
        head, query = spec.rsplit("?", 1)
    options = dict(parse_qsl(query, keep_blank_values=True))
    if HUB_ID.fullmatch(head):
        return LLMSpec(backend=HUB_BACKEND, target=head, options=options)
    backend, sep, rest = head.partition(":")
    try:
        plugin = registry.get("llm", backend)
    except InputError:
        plugins = registry.plugins("llm")
        bare = ", ".join(p.name for p in plugins if not p.meta.get("target", True))
        with_model = ", ".join(p.name for p in plugins if p.meta.get("target", True))
        raise InputError(f"unknown LLM spec {spec!r}: expected one of {bare}, BACKEND:MODEL "
                         f"with BACKEND in {with_model}, or a Hugging Face id ORG/NAME", field="llm") from None
    if not plugin.meta.get("target", True):
        if sep:
            raise InputError(f"LLM spec {spec!r}: {backend} names its own model; drop ':{rest}'", field="llm")
        return LLMSpec(backend=backend, target=backend, options=options)
    if not rest:
        raise InputError(f"LLM spec {spec!r} names no model (use {backend}:MODEL)", field="llm")
    base_url = None
    if "base_url" in plugin.options and "@" in rest:
        rest, base_url = rest.split("@", 1)
    return LLMSpec(backend=backend, target=rest, base_url=base_url, options=options)
