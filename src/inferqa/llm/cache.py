"""On-disk cache of LLM calls: one SQLite file, WAL journal, one row per answer.

Keys hash the backend identity, the request kind, the full prompt (or messages) and the
generation parameters, so a restarted run repeats no call. Misses go to the backend in
chunks (`CachedLLM.chunk_size`, 8 by default) and each chunk's answers are committed in
one transaction as soon as the chunk returns; SQLite's journal makes a `kill -9` lose at
most the chunk in flight, never corrupt the file. Secrets never enter the identity, so
never a key.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

from ..io import json_hash
from ..models import user_cache_dir
from .base import LLM, GenerationParams, Message

CACHE_ENV = "INFERQA_LLM_CACHE"


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT_CACHE"


DEFAULT_CACHE: Any = _Default()  # as a `cache` argument: the file `default_cache_path()` names


def default_cache_path(given: str | os.PathLike | None = None) -> Path:
    """The LLM call cache's file: `given` where set (an experiment's `llm_cache`, `--cache`), else
    `$INFERQA_LLM_CACHE`, else `$INFERQA_CACHE/llm.sqlite`, else `~/.cache/inferqa/llm.sqlite`."""
    if given is not None:
        return Path(given)
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    return user_cache_dir() / "llm.sqlite"


@dataclass
class CacheStats:
    hits: int = 0
    misses: int = 0  # each miss is one backend call (one prompt, conversation or logprob pair)


class LLMCache:
    """A key → JSON value store in SQLite, shareable between processes."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(self.path), timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        # NORMAL is durable against process death (kill -9); only power loss can drop
        # the last commits, which merely means recomputing them.
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute(
            "CREATE TABLE IF NOT EXISTS calls (key TEXT PRIMARY KEY, identity TEXT, kind TEXT,"
            " value TEXT NOT NULL, created REAL)"
        )
        self._db.commit()

    def get_many(self, keys: Sequence[str]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                chunk = list(keys[i:i + 500])
                marks = ",".join("?" * len(chunk))
                for key, value in self._db.execute(f"SELECT key, value FROM calls WHERE key IN ({marks})", chunk):
                    out[key] = json.loads(value)
        return out

    def put_many(self, items: Sequence[tuple[str, Any]], identity: str, kind: str) -> None:
        """Store (key, value) pairs in one transaction."""
        now = time.time()
        with self._lock:
            self._db.executemany("INSERT OR REPLACE INTO calls VALUES (?, ?, ?, ?, ?)",
                                 [(k, identity, kind, json.dumps(v), now) for k, v in items])
            self._db.commit()

    def add_missing(self, rows: Sequence[tuple[str, str, str, Any]]) -> int:
        """Store (key, identity, kind, value) rows whose key is absent, in one transaction (the
        rows already stored win; `created` 0 marks them as copied in); returns how many were added."""
        with self._lock:
            before = self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]
            self._db.executemany("INSERT OR IGNORE INTO calls VALUES (?, ?, ?, ?, 0)",
                                 [(k, identity, kind, json.dumps(v)) for k, identity, kind, v in rows])
            self._db.commit()
            return self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0] - before

    def rows(self) -> list[tuple[str, str, str, Any]]:
        """Every stored (key, identity, kind, value), sorted by key."""
        with self._lock:
            return [(k, i, kind, json.loads(v))
                    for k, i, kind, v in self._db.execute("SELECT key, identity, kind, value FROM calls ORDER BY key")]

    def __len__(self) -> int:
        with self._lock:
            return self._db.execute("SELECT COUNT(*) FROM calls").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def cache_key(identity: str, kind: str, request: Any, params: GenerationParams | None) -> str:
    return json_hash(_payload(identity, kind, request, params))


def _payload(identity: str, kind: str, request: Any, params: GenerationParams | None) -> dict:
    return {"identity": identity, "kind": kind, "request": request,
            "params": asdict(params) if params is not None else None}


def _key_before_0_2(identity: str, kind: str, request: Any, params: GenerationParams | None) -> str:
    """The key 0.1 stored an answer under: read through, so no cached call is made again."""
    blob = json.dumps(_payload(identity, kind, request, params), sort_keys=True, ensure_ascii=False, default=list)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


class CachedLLM(LLM):
    """Wraps any backend; only cache misses reach it, in one batch per call."""

    def __init__(self, inner: LLM, cache: LLMCache | str | os.PathLike, chunk_size: int = 8):
        self.inner = inner
        # Misses reach the backend in chunks committed one by one: a killed run loses
        # (and repeats) at most the chunk in flight.
        self.chunk_size = max(1, int(chunk_size))
        self.cache = cache if isinstance(cache, LLMCache) else LLMCache(cache)
        self.stats = CacheStats()
        self.backend = inner.backend
        self.model = inner.model

    @property
    def identity(self) -> str:
        return self.inner.identity

    @property
    def parallel(self) -> int:
        return self.inner.parallel

    def _cached(self, kind: str, requests: Sequence[Any], params: GenerationParams | None,
                compute: Callable[[list[Any]], list[Any]]) -> list[Any]:
        keys = [cache_key(self.identity, kind, r, params) for r in requests]
        found = self.cache.get_many(list(dict.fromkeys(keys)))
        older = {_key_before_0_2(self.identity, kind, r, params): k for k, r in zip(keys, requests) if k not in found}
        if older and (kept := self.cache.get_many(list(older))):
            self.cache.put_many([(older[o], value) for o, value in kept.items()], self.identity, kind)
            found.update((older[o], value) for o, value in kept.items())
        todo: dict[str, Any] = {}
        for key, req in zip(keys, requests):
            if key not in found and key not in todo:
                todo[key] = req
        self.stats.hits += len(requests) - len(todo)
        self.stats.misses += len(todo)
        pending = list(todo.items())
        for i in range(0, len(pending), self.chunk_size):
            chunk = pending[i:i + self.chunk_size]
            results = compute([req for _, req in chunk])
            self.cache.put_many([(key, value) for (key, _), value in zip(chunk, results)], self.identity, kind)
            found.update((key, value) for (key, _), value in zip(chunk, results))
        return [found[k] for k in keys]

    def complete(self, prompts: Sequence[str], params: GenerationParams = GenerationParams()) -> list[str]:
        return self._cached("complete", list(prompts), params, lambda todo: self.inner.complete(todo, params))

    def chat(self, conversations: Sequence[Sequence[Message]],
             params: GenerationParams = GenerationParams()) -> list[str]:
        convs = [[dict(m) for m in c] for c in conversations]
        return self._cached("chat", convs, params, lambda todo: self.inner.chat(todo, params))

    def logprob(self, prompt: str, continuation: str) -> float:
        return self.logprobs([(prompt, continuation)])[0]

    def logprobs(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        reqs = [[p, c] for p, c in pairs]
        return self._cached("logprob", reqs, None,
                            lambda todo: self.inner.logprobs([(p, c) for p, c in todo]))

    def close(self) -> None:
        self.inner.close()
        self.cache.close()

    def __getattr__(self, name: str) -> Any:
        # Backend-specific extras (e.g. `llama`) stay reachable through the wrapper.
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


def with_cache(llm: LLM, cache: "str | os.PathLike | LLMCache | None" = DEFAULT_CACHE, chunk_size: int = 8) -> LLM:
    """`llm` behind the call cache: `cache` is a file, an open `LLMCache`, `DEFAULT_CACHE` (the
    file `default_cache_path()` names) or None (`llm` as it is, uncached)."""
    if cache is None:
        return llm
    store = cache if isinstance(cache, LLMCache) else LLMCache(default_cache_path(None if cache is DEFAULT_CACHE
                                                                                  else cache))
    return CachedLLM(llm, store, chunk_size=chunk_size)
