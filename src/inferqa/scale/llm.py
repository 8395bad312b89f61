"""LLM calls spread over Ray actors, behind the same `LLM` interface every stage already uses.

`RayLLM` keeps a pool of actors alive (each loads the model once; a Ray Data pipeline per
call would reload it every time) and splits every call across them in contiguous slices, so
shared few-shot prefixes stay together on one actor and answers come back in order. Bulk jobs
with all prompts known up front can use `generate` (Ray Data). Outputs equal the local run's
however a call is sliced, as the llama-cpp backend cuts each prompt by its content
(inferqa.llm.llamacpp). The cache stays on the driver (`load_scaled_llm` wraps the proxy in
`CachedLLM`): one SQLite file, one key per prompt, shared with local runs of the same model.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from ..defaults import BACKEND, NUM_ACTORS
from ..errors import InputError
from ..llm import DEFAULT_CACHE
from ..llm.base import LLM, GenerationParams, Message
from .backends import check_backend, ensure_ray, load_failure, map_batches, unwrap_input_error

LLMFactory = Callable[[], LLM]


def _factory(llm: str | LLMFactory, options: dict[str, Any]) -> LLMFactory:
    def make() -> LLM:
        from ..llm import load_llm

        return load_llm(llm, cache=None, **options)

    return llm if callable(llm) else make


def _with_base_url(spec: str, url: str) -> str:
    from ..llm import parse_spec

    parsed = parse_spec(spec)
    if parsed.backend != "openai":
        raise InputError(f"several server URLs need an openai:MODEL spec, not {spec!r}", field="llm")
    query = spec.rsplit("?", 1)[1] if "?" in spec else ""
    return f"openai:{parsed.target}@{url}" + (f"?{query}" if query else "")


class _LLMActor:
    def __init__(self, factory: LLMFactory, remote: bool = False):
        self.llm, self.failed = None, None
        try:
            self.llm = factory()
        except Exception as exc:
            if not remote:
                raise
            self.failed = load_failure(exc)  # told by `info`, as one line, not as a dead actor's traceback

    def info(self) -> dict[str, Any]:
        if self.failed is not None:
            raise self.failed
        return {"identity": self.llm.identity, "model": self.llm.model, "mode": getattr(self.llm, "mode", None)}

    def call(self, method: str, requests: list, params: GenerationParams | None) -> list:
        if method == "logprobs":
            return self.llm.logprobs([tuple(r) for r in requests])
        return getattr(self.llm, method)(requests, params)


class RayLLM(LLM):
    """An `LLM` whose calls run on `num_actors` Ray actors. `llm` is a spec string (`smollm2`,
    `llama-cpp:/m.gguf`, `openai:MODEL@URL`, ...) or a zero-argument factory returning an `LLM`.
    With `base_urls` (openai specs only), actor i talks to `base_urls[i % len(base_urls)]`."""

    backend = "ray"

    def __init__(self, llm: str | LLMFactory, *, num_actors: int = NUM_ACTORS.default, ray_address: str | None = None,
                 num_cpus_per_actor: float = 1, num_gpus_per_actor: float = 0,
                 base_urls: Sequence[str] = (), **llm_options: Any):
        if num_actors < 1:
            raise InputError("num_actors must be at least 1", field="num_actors")
        ensure_ray(ray_address)
        import ray

        if base_urls:
            if callable(llm):
                raise InputError("base_urls needs an openai:MODEL spec, not a factory", field="llm")
            factories = [_factory(_with_base_url(llm, base_urls[i % len(base_urls)]), llm_options)
                         for i in range(num_actors)]
        else:
            factories = [_factory(llm, llm_options)] * num_actors
        remote = ray.remote(_LLMActor).options(num_cpus=num_cpus_per_actor, num_gpus=num_gpus_per_actor or None)
        self._ray = ray
        self._actors = [remote.remote(f, True) for f in factories]
        try:
            info = ray.get(self._actors[0].info.remote())
        except Exception as exc:
            raise unwrap_input_error(exc) from None
        self._identity = info["identity"]
        self.model = info["model"]
        if info["mode"]:
            self.mode = info["mode"]

    @property
    def identity(self) -> str:
        # The wrapped backend's identity: a Ray run and a local run share cache entries.
        return self._identity

    @property
    def parallel(self) -> int:
        return 8 * len(self._actors)  # a few prompts per actor, as load_scaled_llm's cache chunks

    def _scatter(self, method: str, requests: list, params: GenerationParams | None) -> list:
        if not requests:
            return []
        n = min(len(self._actors), len(requests))
        step, extra = divmod(len(requests), n)
        futures, start = [], 0
        for i in range(n):
            stop = start + step + (i < extra)
            futures.append(self._actors[i].call.remote(method, requests[start:stop], params))
            start = stop
        try:
            parts = self._ray.get(futures)
        except Exception as exc:
            raise unwrap_input_error(exc) from None
        return [out for part in parts for out in part]

    def complete(self, prompts: Sequence[str], params: GenerationParams = GenerationParams()) -> list[str]:
        return self._scatter("complete", list(prompts), params)

    def chat(self, conversations: Sequence[Sequence[Message]],
             params: GenerationParams = GenerationParams()) -> list[str]:
        return self._scatter("chat", [[dict(m) for m in c] for c in conversations], params)

    def logprob(self, prompt: str, continuation: str) -> float:
        return self.logprobs([(prompt, continuation)])[0]

    def logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return self._scatter("logprobs", [list(p) for p in pairs], None)

    def close(self) -> None:
        for actor in self._actors:
            self._ray.kill(actor)
        self._actors = []


def load_scaled_llm(spec: str, *, backend: str = BACKEND.default, num_actors: int = NUM_ACTORS.default,
                    ray_address: str | None = None, base_urls: Sequence[str] = (), cache: Any = DEFAULT_CACHE,
                    num_cpus_per_actor: float = 1, num_gpus_per_actor: float = 0, **options: Any) -> LLM:
    """`inferqa.llm.load_llm` for either backend; on Ray the driver keeps the cache. `cache`
    is as in `load_llm`: a path or an `LLMCache`, `DEFAULT_CACHE` (the default file) or None."""
    from ..llm import load_llm, with_cache

    check_backend(backend)
    if backend == "local":
        if base_urls:
            raise InputError("several server URLs need --backend ray (one actor per URL)", field="llm-url")
        return load_llm(spec, cache=cache, **options)
    proxy = RayLLM(spec, num_actors=num_actors, ray_address=ray_address, base_urls=base_urls,
                   num_cpus_per_actor=num_cpus_per_actor, num_gpus_per_actor=num_gpus_per_actor, **options)
    # One cache chunk is one scattered call: give every actor a few prompts per chunk.
    return with_cache(proxy, cache, chunk_size=8 * num_actors)


def llm_opener(cache: Any = None, no_cache: bool = False, backend: str = BACKEND.default,
               ray_address: str | None = None, num_actors: int = NUM_ACTORS.default,
               llm_urls: Sequence[str] | None = None) -> Callable[[str], LLM]:
    """spec -> LLM with the given call cache (None: the default file; `no_cache`: none) and
    execution backend: the options `inferqa.stages.llm` declares, checked before any model loads."""
    from ..io import check_output
    from ..llm import default_cache_path

    check_backend(backend)
    if cache is not None and not no_cache:
        check_output(cache)

    def open_llm(spec: str) -> LLM:
        return load_scaled_llm(spec, backend=backend, ray_address=ray_address, num_actors=num_actors,
                               base_urls=llm_urls or (), cache=None if no_cache else default_cache_path(cache))

    return open_llm


def generate(llm: str | LLMFactory, requests: Sequence, *, kind: str = "complete",
             params: GenerationParams = GenerationParams(), llm_options: dict[str, Any] | None = None,
             **map_options: Any) -> list:
    """Bulk generation with every request known up front (e.g. labelling every passage):
    Ray Data `map_batches` with one model per actor, or the same loop locally. `kind` is
    `complete`, `chat` or `logprobs` (requests are then (prompt, continuation) pairs)."""
    if kind not in ("complete", "chat", "logprobs"):
        raise InputError(f"unknown kind {kind!r} (complete, chat or logprobs)", field="kind")
    make_llm = _factory(llm, llm_options or {})

    def make_worker():
        actor = _LLMActor(make_llm)
        return lambda batch: actor.call(kind, batch, None if kind == "logprobs" else params)

    map_options.setdefault("desc", kind)
    map_options.setdefault("batch_size", 16)
    return map_batches(list(requests), make_worker, **map_options)
