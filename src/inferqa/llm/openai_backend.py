"""Any OpenAI-compatible server (vLLM, Ollama, llama.cpp's server, TGI, OpenAI itself).

The `openai` client does the timeouts and the bounded retries with exponential backoff;
this module maps its failures to one-line InputErrors. The API key is read from the
option or OPENAI_API_KEY and is kept out of `identity`, so out of every cache key and log.

A call's requests go out `concurrency` at a time (default 1) in trie order
(inferqa.llm.heads.trie_order), so requests sharing a prefix reach the server one after
another; answers come back in the caller's order. This pays only on a server that keeps
prefixes (docs/read.md, *Reader throughput*: vLLM, SGLang, `llama-server`).
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Sequence, TypeVar

from ..errors import InputError
from ..registry import Option, plugin
from .base import LLM, GenerationParams, Message
from .heads import text_lines, trie_order

OPENAI_URL = "https://api.openai.com/v1"
T = TypeVar("T")


@plugin("llm", "openai",
        Option("base_url", str, None, "server URL (also MODEL@URL in the spec; default $OPENAI_BASE_URL or OpenAI)"),
        Option("api_key", str, None, "API key (default $OPENAI_API_KEY; never logged)"),
        Option("timeout", float, 60.0, "seconds per request", min=0, min_open=True),
        Option("max_retries", int, 3, "retries with exponential backoff", min=0),
        Option("mode", str, "chat", "chat: /chat/completions; completion: /completions",
               choices=("chat", "completion")),
        Option("concurrency", int, 1, "requests in flight at once", min=1),
        extra=True, help="Any OpenAI-compatible server (vLLM, Ollama, llama.cpp's server, TGI, OpenAI).")
class OpenAILLM(LLM):
    backend = "openai"

    def __init__(self, model: str, *, base_url: str | None, api_key: str | None, timeout: float,
                 max_retries: int, mode: str, concurrency: int, **extra_body: Any):
        """Settings resolved by the registry (`load_llm`), which holds the defaults. Options
        this backend does not know (e.g. `repeat_penalty=1.0` for llama.cpp's server, `top_k`)
        are sent with every request as server-specific fields."""
        try:
            import openai
        except ImportError:
            raise InputError("the openai backend needs the 'openai' package (pip install 'inferqa[llm]')") from None
        self._openai = openai
        self.model = model
        self.base_url = (base_url or os.environ.get("OPENAI_BASE_URL") or OPENAI_URL).rstrip("/")
        key = api_key or os.environ.get("OPENAI_API_KEY")
        if not key:
            if self.base_url == OPENAI_URL:
                raise InputError("the openai backend needs an API key: set OPENAI_API_KEY")
            key = "no-key"  # local servers usually ignore it, but the client requires one
        self.mode = mode
        self.concurrency = int(concurrency)
        self.max_retries = int(max_retries)
        self.extra_body = {k: v for k, v in extra_body.items() if k not in ("n_ctx", "n_threads")}
        self._client = openai.OpenAI(api_key=key, base_url=self.base_url, timeout=float(timeout),
                                     max_retries=self.max_retries)

    @property
    def identity(self) -> str:
        extra = "&".join(f"{k}={v}" for k, v in sorted(self.extra_body.items()))
        return f"openai:{self.model}@{self.base_url}" + (f"?{extra}" if extra else "")

    @property
    def parallel(self) -> int:
        return self.concurrency

    def _call(self, fn: Callable[[], T]) -> T:
        o = self._openai
        try:
            return fn()
        except (o.APIConnectionError, o.APITimeoutError) as exc:
            n = self.max_retries + 1
            raise InputError(f"cannot reach the LLM server at {self.base_url} after {n} attempt{'s' * (n > 1)} "
                             f"({type(exc).__name__}): is it running?") from None
        except o.AuthenticationError:
            raise InputError(f"the LLM server at {self.base_url} rejected the API key") from None
        except o.NotFoundError:
            raise InputError(f"the LLM server at {self.base_url} does not serve model {self.model!r} "
                             "(or the URL lacks /v1)") from None
        except o.APIStatusError as exc:
            raise InputError(f"the LLM server at {self.base_url} answered HTTP {exc.status_code}: "
                             f"{str(exc.message)[:200]}") from None

    def _map(self, fn: Callable[[Any], T], items: Sequence[Any], key: Callable[[Any], Any]) -> list[T]:
        """`fn` over `items`, sent in trie order of `key` (prefix-sharing texts together), at
        most `concurrency` at a time; results in the order of `items`."""
        order = trie_order(items, key)
        out: list[Any] = [None] * len(items)
        if self.concurrency == 1 or len(items) <= 1:
            for i in order:
                out[i] = fn(items[i])
            return out
        with ThreadPoolExecutor(min(self.concurrency, len(items))) as pool:  # FIFO: sent in `order`
            for i, result in zip(order, pool.map(lambda i: fn(items[i]), order)):
                out[i] = result
        return out

    def _extra(self) -> dict[str, Any]:
        return {"extra_body": dict(self.extra_body)} if self.extra_body else {}

    def _sampling(self, params: GenerationParams) -> dict[str, Any]:
        out: dict[str, Any] = {"max_tokens": params.max_tokens, "temperature": params.temperature, **self._extra()}
        if params.stop:
            out["stop"] = list(params.stop)
        if params.seed is not None:
            out["seed"] = params.seed
        return out

    def complete(self, prompts: Sequence[str], params: GenerationParams = GenerationParams()) -> list[str]:
        def one(prompt: str) -> str:
            r = self._call(lambda: self._client.completions.create(
                model=self.model, prompt=prompt, **self._sampling(params)))
            return r.choices[0].text or ""
        return self._map(one, list(prompts), key=text_lines)

    def chat(self, conversations: Sequence[Sequence[Message]],
             params: GenerationParams = GenerationParams()) -> list[str]:
        if self.mode == "completion":
            raise InputError(f"openai backend {self.model!r} is in completion mode; chat() is not available")

        def one(messages: Sequence[Message]) -> str:
            r = self._call(lambda: self._client.chat.completions.create(
                model=self.model, messages=list(messages), **self._sampling(params)))
            return r.choices[0].message.content or ""
        return self._map(one, list(conversations),
                         key=lambda c: tuple((str(m.get("role")), text_lines(str(m.get("content")))) for m in c))

    def logprob(self, prompt: str, continuation: str) -> float:
        """Needs a server that echoes prompt logprobs (vLLM; llama.cpp's server with logits_all)."""
        text = prompt + continuation
        r = self._call(lambda: self._client.completions.create(
            model=self.model, prompt=text, max_tokens=1, temperature=0.0, echo=True, logprobs=1, **self._extra()))
        lp = r.choices[0].logprobs
        if lp is None or not lp.token_logprobs or lp.text_offset is None:
            raise InputError(f"the LLM server at {self.base_url} returns no prompt logprobs (echo); "
                             "logprob scoring needs a server that supports it")
        total = 0.0  # summed in order, not by sum(): Python 3.12's compensated sum gives other floats
        for offset, value in zip(lp.text_offset, lp.token_logprobs):
            if len(prompt) <= offset < len(text) and value is not None:
                total += float(value)
        return total

    def logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        return self._map(lambda pc: self.logprob(*pc), list(pairs), key=lambda pc: text_lines(pc[0] + pc[1]))

    def close(self) -> None:
        self._client.close()
