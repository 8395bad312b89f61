"""Parse backend spec strings (see inferqa.llm.base for the grammar)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

from ..errors import InputError
from ..options import parse_scalar

BACKENDS = ("llama-cpp", "openai", "transformers")
SHORTCUTS = ("smollm2", "gemma3-270m")


@dataclass
class LLMSpec:
    backend: str
    target: str  # model path, HF id or served model name
    base_url: str | None = None
    options: dict[str, Any] = field(default_factory=dict)


def parse_spec(spec: str) -> LLMSpec:
    spec = spec.strip()
    if not spec:
        raise InputError("empty LLM spec", field="llm")
    head, query = spec, ""
    if "?" in spec:
        head, query = spec.rsplit("?", 1)
    options = {k: parse_scalar(v) for k, v in parse_qsl(query, keep_blank_values=True)}
    if head in SHORTCUTS:
        return LLMSpec(backend=head, target=head, options=options)
    backend, sep, rest = head.partition(":")
    if not sep or backend not in BACKENDS:
        raise InputError(f"unknown LLM spec {spec!r}: expected one of {', '.join(SHORTCUTS)} or "
                         f"BACKEND:MODEL with BACKEND in {', '.join(BACKENDS)}", field="llm")
    if not rest:
        raise InputError(f"LLM spec {spec!r} names no model", field="llm")
    base_url = None
    if backend == "openai" and "@" in rest:
        rest, base_url = rest.split("@", 1)
    return LLMSpec(backend=backend, target=rest, base_url=base_url, options=options)
