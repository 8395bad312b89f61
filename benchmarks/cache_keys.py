"""Cache keys of the benchmark scripts: a cached artefact lives under a name made from every
input that produced it (question cut, options, seeds, base model, ...), so a run with other
inputs computes its own and never reads another's as fresh."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path


def key(**inputs) -> str:
    """A cache key: 16 hex digits of the canonical JSON of every input an artefact depends on."""
    return hashlib.sha256(json.dumps(inputs, sort_keys=True, default=str).encode()).hexdigest()[:16]


def questions_digest(bench, split: str | None = None) -> str:
    """16 hex digits of the question ids of `bench`'s `split` (None: all), in split order."""
    return hashlib.sha256("\n".join(bench.split_qids(split)).encode()).hexdigest()[:16]


def model_dir(out: Path, kind: str, train, opts, **inputs) -> Path:
    """Where the `kind` model trained from MiniLM on `train` with `opts` (and any other
    `inputs`) lives under `out`."""
    return out / "models" / f"{kind}-{key(opts=opts, train=questions_digest(train), base='minilm', **inputs)}"
