"""sentence-transformers CrossEncoder by Hugging Face id or local folder (e.g. one fine-tuned
from the bundled MiniLM weights). Needs the `dense` extra."""

from __future__ import annotations

from typing import Any, Sequence

from ..errors import InputError
from ..models import check_model_kind, hub_model, quiet_loading
from ..parameters import DEVICE
from ..registry import Option, plugin
from .base import Reranker


@plugin("reranker", "cross-encoder",
        Option("model", str, "cross-encoder/ms-marco-MiniLM-L-6-v2", "HF id or local folder of a sentence-transformers CrossEncoder"),
        # sentence-transformers sorts the pairs by length and pads each batch to its longest: a
        # batch of 8 pads little, fastest on 2 CPU cores (benchmarks/rerank_window.py's speed check)
        Option("batch_size", int, 8, "pairs per forward pass (more on a GPU)", min=1),
        Option("max_length", int, 512, "tokens per (question, passage) pair", min=1),
        DEVICE)
class CrossEncoderReranker(Reranker):
    """Score = the model's relevance logit (for a two-label head: logit(1) − logit(0))."""

    def __init__(self, *, model: str, batch_size: int, max_length: int, device: str | None):
        self.model_name = check_model_kind(str(model), "cross-encoder")
        self.batch_size, self.max_length, self.device = batch_size, max_length, device
        self._model = None

    def config(self) -> dict[str, Any]:
        return {"reranker": self.name, "model": self.model_name, "max_length": self.max_length}

    def load(self) -> None:
        self.model  # noqa: B018 - the property loads it

    @property
    def model(self):
        if self._model is None:
            hub_model(self.model_name)  # before the slow import: an unreachable hub fails at once
            try:
                from sentence_transformers import CrossEncoder
            except ImportError:
                raise InputError("the cross-encoder reranker needs sentence-transformers "
                                 "(pip install 'inferqa[dense]')") from None
            try:
                with quiet_loading():
                    self._model = CrossEncoder(self.model_name, max_length=self.max_length, device=self.device)
            except OSError as exc:
                raise InputError(f"cannot load cross-encoder {self.model_name!r}: {exc}", field="model") from None
        return self._model

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        import numpy as np
        import torch

        logits = np.asarray(self.model.predict([(query, t) for t in texts], batch_size=self.batch_size,
                                               show_progress_bar=False, activation_fn=torch.nn.Identity(),
                                               convert_to_numpy=True))
        if logits.ndim == 2:
            logits = logits[:, 0] if logits.shape[1] == 1 else logits[:, -1] - logits[:, 0]
        return [float(x) for x in logits]
