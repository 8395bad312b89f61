"""The T5 family on `transformers` T5ForConditionalGeneration, by HF id or local folder (needs the
`transformers` extra): MonoT5 and RankT5 score the first decoder step; LiT5-Distill (listwise,
Fusion-in-Decoder) encodes each passage of a window on its own, concatenates the window's encoder
states and generates the ranking ("[3] > [1] > ...") greedily, windows sliding from the bottom up.
This is LiT5's FiD computation done with the stock T5 class (its FiD checkpoints keep T5's weight names).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

from ..errors import InputError
from ..models import check_model_kind, hub_model, quiet_loading
from ..parameters import DEVICE
from ..registry import Option, plugin
from .base import Reranker
from .permutation import listwise_order, order_to_scores, parse_permutation

MONOT5_PROMPT = "Query: {query} Document: {document} Relevant:"
RANKT5_PROMPT = "Query: {query} Document: {document}"
LIT5_PROMPT = "Search Query: {query} Passage: [{i}] {document} Relevance Ranking: "


def _t5_options(model: str, max_length: int) -> tuple[Option, ...]:
    return (Option("model", str, model, "HF id or local folder of the T5 checkpoint"),
            Option("batch_size", int, 16, "inputs per forward pass", min=1),
            Option("max_length", int, max_length, "input tokens kept", min=1),
            replace(DEVICE, help="torch device (default: cuda if available, else cpu)"),
            Option("dtype", str, None, "torch dtype name (default: the checkpoint's)",
                   choices=("float32", "float16", "bfloat16")))


class _T5Reranker(Reranker):
    def __init__(self, *, model: str, batch_size: int, max_length: int, device: str | None, dtype: str | None):
        self.model_name = check_model_kind(str(model), "t5")
        self.batch_size, self.max_length, self.device, self.dtype = batch_size, max_length, device, dtype
        self._tok = self._model = None

    def config(self) -> dict[str, Any]:
        return {"reranker": self.name, "model": self.model_name, "max_length": self.max_length}

    def load(self) -> tuple[Any, Any]:
        """The tokenizer and the model, loaded on first use."""
        if self._model is None:
            hub_model(self.model_name)  # before the slow imports: an unreachable hub fails at once
            try:
                import torch
                from transformers import AutoTokenizer, T5ForConditionalGeneration
            except ImportError:
                raise InputError(f"the {self.name} reranker needs transformers "
                                 "(pip install 'inferqa[transformers]')") from None
            device = self.device or ("cuda" if torch.cuda.is_available() else "cpu")
            try:
                self._tok = AutoTokenizer.from_pretrained(self.model_name)
                with quiet_loading():
                    model = T5ForConditionalGeneration.from_pretrained(
                        self.model_name, dtype=getattr(torch, self.dtype) if self.dtype else None)
            except OSError as exc:
                raise InputError(f"cannot load T5 model {self.model_name!r}: {exc}", field="model") from None
            self._model = model.to(device).eval()
        return self._tok, self._model

    def token_id(self, token: str) -> int:
        """Id of a designated token: a vocabulary entry as is, else a word that must encode
        to one token ("true" → "▁true" in T5's vocabulary)."""
        tok, _ = self.load()
        vocab = tok.get_vocab()
        if token in vocab:
            return vocab[token]
        ids = tok.encode(token, add_special_tokens=False)
        if len(ids) != 1:
            raise InputError(f"{token!r} is not one token of {self.model_name}'s vocabulary", field="token")
        return ids[0]

    def first_step_logits(self, inputs: Sequence[str], token_ids: Sequence[int]):
        """Logits of `token_ids` at the first decoder step, one row per input (a tensor)."""
        import torch

        tok, model = self.load()
        rows = []
        start = model.config.decoder_start_token_id
        with torch.inference_mode():
            for b in range(0, len(inputs), self.batch_size):
                enc = tok(list(inputs[b:b + self.batch_size]), padding=True, truncation=True,
                          max_length=self.max_length, return_tensors="pt").to(model.device)
                dec = torch.full((enc["input_ids"].shape[0], 1), start, dtype=torch.long, device=model.device)
                logits = model(**enc, decoder_input_ids=dec).logits[:, 0, :]
                rows.append(logits[:, list(token_ids)].float().cpu())
        return torch.cat(rows) if rows else torch.empty(0, len(token_ids))


@plugin("reranker", "monot5", *_t5_options("castorini/monot5-base-msmarco-10k", max_length=512),
        Option("true_token", str, "true", "token whose probability is the score"),
        Option("false_token", str, "false", "the competing token"),
        Option("prompt", str, MONOT5_PROMPT, "input with {query} and {document}"),
        help="MonoT5: log P(true) against false at the first decoder step.")
class MonoT5Reranker(_T5Reranker):
    def __init__(self, *, true_token: str, false_token: str, prompt: str, **kw: Any):
        super().__init__(**kw)
        self.true_token, self.false_token, self.prompt = true_token, false_token, prompt

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        ids = [self.token_id(self.false_token), self.token_id(self.true_token)]
        logits = self.first_step_logits([self.prompt.format(query=query, document=t) for t in texts], ids)
        return logits.log_softmax(dim=-1)[:, 1].tolist()


@plugin("reranker", "rankt5", *_t5_options("Soyoung97/RankT5-base", max_length=512),
        Option("token", str, "<extra_id_10>", "token whose first-step logit is the score"),
        Option("prompt", str, RANKT5_PROMPT, "input with {query} and {document}"),
        help="RankT5 (encoder-decoder): the first-step logit of a designated token.")
class RankT5Reranker(_T5Reranker):
    def __init__(self, *, token: str, prompt: str, **kw: Any):
        super().__init__(**kw)
        self.token, self.prompt = token, prompt

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        logits = self.first_step_logits([self.prompt.format(query=query, document=t) for t in texts],
                                        [self.token_id(self.token)])
        return logits[:, 0].tolist()


@plugin("reranker", "lit5", *_t5_options("castorini/LiT5-Distill-base", max_length=150),
        Option("window", int, 20, "passages fused per window", min=2),
        Option("step", int, 10, "passages a window slides by", min=1),
        Option("max_new_tokens", int, 140, "length of the generated ranking", min=1),
        Option("prompt", str, LIT5_PROMPT, "input with {query}, {i} and {document}"),
        help="LiT5-Distill: Fusion-in-Decoder listwise ranking over sliding windows.")
class LiT5Reranker(_T5Reranker):
    def __init__(self, *, window: int, step: int, max_new_tokens: int, prompt: str, **kw: Any):
        super().__init__(**kw)
        self.window, self.step, self.max_new_tokens, self.prompt = window, step, max_new_tokens, prompt

    def config(self) -> dict[str, Any]:
        return {**super().config(), "window": self.window, "step": self.step}

    def window_inputs(self, query: str, texts: Sequence[str]) -> list[str]:
        return [self.prompt.format(query=query, i=i, document=t) for i, t in enumerate(texts, 1)]

    def fuse(self, query: str, texts: Sequence[str]):
        """FiD encoding: each passage on its own, states concatenated into one sequence.
        Returns (encoder outputs of shape (1, n·L, d), attention mask (1, n·L))."""
        import torch
        from transformers.modeling_outputs import BaseModelOutput

        tok, model = self.load()
        enc = tok(self.window_inputs(query, texts), padding=True, truncation=True,
                  max_length=self.max_length, return_tensors="pt").to(model.device)
        with torch.inference_mode():
            states = model.get_encoder()(**enc).last_hidden_state  # (n, L, d)
        fused = BaseModelOutput(last_hidden_state=states.reshape(1, -1, states.shape[-1]))
        return fused, enc["attention_mask"].reshape(1, -1)

    def generate_ranking(self, query: str, texts: Sequence[str]) -> str:
        """The decoder's greedy answer ("[3] > [1] > ...") over one fused window."""
        import torch

        tok, model = self.load()
        fused, mask = self.fuse(query, texts)
        with torch.inference_mode():
            out = model.generate(encoder_outputs=fused, attention_mask=mask, max_new_tokens=self.max_new_tokens,
                                 do_sample=False, num_beams=1)
        return tok.decode(out[0], skip_special_tokens=True)

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if len(texts) <= 1:
            return [1.0] * len(texts)

        def permute(idx: Sequence[int]) -> list[int]:
            return parse_permutation(self.generate_ranking(query, [texts[i] for i in idx]), len(idx))

        return order_to_scores(listwise_order(len(texts), self.window, self.step, permute))
