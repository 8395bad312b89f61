"""Dense encoding through `imap_batches`: the bi-encoder is loaded once per worker or Ray actor."""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from ..defaults import DEFAULT_ENCODER
from ..scale.backends import WorkerFactory, imap_batches


def embedding_worker(model: str = DEFAULT_ENCODER, *, normalize: bool = True, device: str | None = None,
                     threads: int | None = None) -> WorkerFactory:
    """A factory for `texts -> unit (or raw) float32 vectors` with a sentence-transformers model."""

    def make():
        from ..models import load_sentence_transformer

        encoder = load_sentence_transformer(model, device)
        if threads:
            import torch

            torch.set_num_threads(threads)

        def encode(texts: list[str]) -> list[np.ndarray]:
            vecs = encoder.encode(texts, batch_size=len(texts), normalize_embeddings=normalize,
                                  convert_to_numpy=True, show_progress_bar=False)
            return list(np.asarray(vecs, dtype=np.float32))

        return encode

    return make


def encode_texts(texts: Iterable[str], model: str = DEFAULT_ENCODER, *, out: np.ndarray | None = None,
                 normalize: bool = True, device: str | None = None, threads: int | None = None,
                 **map_options: Any) -> np.ndarray:
    """Embed `texts` in order. With `out` (an array or `np.lib.format.open_memmap`) rows are
    written into it as they arrive, so 2.4M vectors never sit in the driver's memory twice.
    `map_options` go to `imap_batches` (backend, batch_size, num_actors, ray_address, ...)."""
    map_options.setdefault("desc", "encode")
    rows = imap_batches(texts, embedding_worker(model, normalize=normalize, device=device, threads=threads),
                        **map_options)
    if out is None:
        vecs = list(rows)
        return np.stack(vecs) if vecs else np.zeros((0, 0), dtype=np.float32)
    n = 0
    for n, vec in enumerate(rows, 1):
        out[n - 1] = vec
    if n != len(out):
        raise ValueError(f"encoded {n} texts into an array of {len(out)} rows")
    return out
