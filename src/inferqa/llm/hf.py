"""Hugging Face transformers backend: a model id (online) or a local folder."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from ..errors import InputError
from ..registry import Option, plugin
from .base import LLM, GenerationParams, Message


def cut_at_stop(text: str, stop: Sequence[str]) -> str:
    """Cut `text` at the earliest stop string, as servers do."""
    cut = len(text)
    for s in stop:
        if s:
            i = text.find(s)
            if i != -1:
                cut = min(cut, i)
    return text[:cut]


@plugin("llm", "transformers",
        Option("mode", str, "chat", "chat: the tokenizer's chat template; completion: plain text",
               choices=("chat", "completion")),
        Option("device", str, "cpu", "torch device"),
        Option("dtype", str, "auto", "torch dtype name, or auto (the checkpoint's)"),
        Option("n_threads", int, None, "torch CPU threads (default: torch's)", min=1),
        help="A Hugging Face causal LM (hub id or local folder) run in process.")
class TransformersLLM(LLM):
    backend = "transformers"

    def __init__(self, model: str, *, mode: str = "chat", device: str = "cpu", dtype: str = "auto",
                 n_threads: int | None = None):
        try:
            import torch
            from transformers import AutoModelForCausalLM, AutoTokenizer
        except ImportError:
            raise InputError("the transformers backend needs 'transformers' and torch "
                             "(pip install 'inferqa[transformers]')") from None
        looks_local = model.startswith((".", "/", "~")) or Path(model).expanduser().exists()
        if looks_local and not Path(model).expanduser().is_dir():
            raise InputError("model folder not found", file=model)
        self._torch = torch
        if n_threads:
            torch.set_num_threads(int(n_threads))
        self.model = str(Path(model).expanduser().resolve()) if looks_local else model
        self.mode = mode
        self.device = device
        try:
            self.tokenizer = AutoTokenizer.from_pretrained(self.model)
            try:
                lm = AutoModelForCausalLM.from_pretrained(self.model, dtype=dtype)
            except TypeError:  # transformers < 4.56 names it torch_dtype
                lm = AutoModelForCausalLM.from_pretrained(self.model, torch_dtype=dtype)
            self.lm = lm.to(device).eval()
        except OSError as exc:
            raise InputError(f"cannot load transformers model {model!r}: {str(exc).splitlines()[0]}") from None

    def count_tokens(self, text: str) -> int:
        return len(self.tokenizer(text, add_special_tokens=False)["input_ids"])

    def _generate(self, ids: list[int], params: GenerationParams) -> str:
        torch = self._torch
        sample = params.temperature > 0
        if sample and params.seed is not None:
            torch.manual_seed(params.seed)
        x = torch.tensor([ids], device=self.device)
        pad = self.tokenizer.pad_token_id
        if pad is None:
            pad = self.tokenizer.eos_token_id
        kwargs: dict[str, Any] = {"max_new_tokens": params.max_tokens, "do_sample": sample, "pad_token_id": pad}
        if sample:
            kwargs["temperature"] = params.temperature
        else:  # silence model-config sampling defaults under greedy decoding
            kwargs.update(temperature=None, top_p=None, top_k=None)
        with torch.no_grad():
            out = self.lm.generate(x, attention_mask=torch.ones_like(x), **kwargs)
        text = self.tokenizer.decode(out[0, len(ids):].tolist(), skip_special_tokens=True)
        return cut_at_stop(text, params.stop)

    def complete(self, prompts: Sequence[str], params: GenerationParams = GenerationParams()) -> list[str]:
        return [self._generate(self.tokenizer(p)["input_ids"], params) for p in prompts]

    def chat(self, conversations: Sequence[Sequence[Message]],
             params: GenerationParams = GenerationParams()) -> list[str]:
        if self.mode == "completion" or not getattr(self.tokenizer, "chat_template", None):
            raise InputError(f"transformers model {self.model!r} has no chat template; use ?mode=completion")
        out = []
        for messages in conversations:
            # enable_thinking: Qwen3-style templates skip the thinking block; other templates ignore it.
            text = self.tokenizer.apply_chat_template(list(messages), add_generation_prompt=True, tokenize=False,
                                                      enable_thinking=False)
            ids = self.tokenizer(text, add_special_tokens=False)["input_ids"]
            out.append(self._generate(ids, params))
        return out

    def logprob(self, prompt: str, continuation: str) -> float:
        torch = self._torch
        p_ids = self.tokenizer(prompt)["input_ids"]
        c_ids = self.tokenizer(continuation, add_special_tokens=False)["input_ids"]
        if not c_ids:
            return 0.0
        if not p_ids:  # a model with no BOS: condition the first token on nothing but itself
            raise InputError("logprob needs a non-empty prompt for a tokenizer without a BOS token")
        x = torch.tensor([p_ids + c_ids], device=self.device)
        with torch.no_grad():
            logits = self.lm(x).logits[0].float()
        logp = torch.log_softmax(logits[len(p_ids) - 1:-1], dim=-1)
        target = torch.tensor(c_ids, device=self.device)
        return float(logp.gather(1, target[:, None]).sum())

    def close(self) -> None:
        self.lm = None
