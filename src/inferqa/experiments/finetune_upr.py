"""Fine-tuning a causal LM for the `upr` reranker (docs/finetune.md): the reranker scores a passage by
log P(question | passage) under its prompt, and training raises that score for a question's own passage
against the other questions' representatives a distinct window shows beside it (the cross-encoder
reranker's examples), softmax cross-entropy over each group. The folder loads with
`inferqa rerank -r upr --llm transformers:FOLDER`.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..formats.benchmark import Benchmark
from ..llm.hf import continuation_logprobs, encode_pair
from ..models import SMOLLM2, hub_model, quiet_loading, smollm2_transformers_path
from ..parameters import UPR_START
from ..registry import plugin
from ..reranking.llm import UPR_PROMPT, upr_pairs
from .finetune import (OPTIONS, FinetuneOptions, RerankExample, _fit, _options, _Out, _setup, build_rerank_examples,
                       group_batches, group_pairs, group_softmax_loss, with_passage_texts)


def resolve_causal_lm(name_or_path: str) -> str:
    """`smollm2` → the bundled GGUF as a transformers folder (converted once); a folder or HF id as
    `hub_model` takes it."""
    return str(smollm2_transformers_path()) if name_or_path == SMOLLM2 else hub_model(name_or_path)


class QueryLikelihood:
    """log P(question | the upr prompt around a passage), summed over the question's tokens: the upr
    reranker's pairs (`upr_pairs`) as the transformers backend encodes and scores them (`encode_pair`,
    `continuation_logprobs`), for a batch at once, with gradients. Passages are cut to `max_length` tokens."""

    def __init__(self, lm, tokenizer, max_length: int, prompt: str = UPR_PROMPT):
        self.lm, self.tokenizer, self.max_length, self.prompt = lm, tokenizer, max_length, prompt

    def _cut(self, passage: str) -> str:
        ids = self.tokenizer(passage, add_special_tokens=False)["input_ids"]
        # only then re-decoded: a whole passage stays the reranker's text
        return self.tokenizer.decode(ids[:self.max_length]) if len(ids) > self.max_length else passage

    def __call__(self, pairs: list[tuple[str, str]]):
        return continuation_logprobs(self.lm, [encode_pair(self.tokenizer, *upr_pairs(q, [self._cut(p)], self.prompt)[0])
                                               for q, p in pairs])


@plugin("fine-tuner", "upr", *OPTIONS,
        help="causal LM for the `upr` reranker (log P(question | passage)): own passage against other questions' "
             "representatives, softmax cross-entropy over the group; --model smollm2 (default) or a causal LM")
def finetune_upr(bench: str | os.PathLike | Benchmark, out_dir: str | os.PathLike, *, model: str = UPR_START.default,
                 options: FinetuneOptions | None = None, device: str | None = None, overwrite: bool = False,
                 **settings: object) -> Path:
    """Train a causal LM so that the `upr` reranker scores a question's own passage above the other
    questions' representatives (`build_rerank_examples`). A step scores `batch_size` (question, passage)
    pairs: batch_size // (1 + negatives) groups, at least one."""
    options = _options(options, settings)
    out = _Out(out_dir, overwrite)
    bench, weights, examples, rng = _setup(out, bench, model, options, "causal-lm", resolve_causal_lm,
                                           examples=build_rerank_examples)
    examples = with_passage_texts(examples, bench)
    import torch
    from transformers import AutoModelForCausalLM, AutoTokenizer

    with quiet_loading():
        tokenizer = AutoTokenizer.from_pretrained(weights)
        lm = AutoModelForCausalLM.from_pretrained(weights, dtype=torch.float32).to(device or "cpu")
    likelihood = QueryLikelihood(lm, tokenizer, options.max_length)

    def loss_fn(batch: list[RerankExample]):
        return group_softmax_loss(likelihood(group_pairs(batch)), batch)

    def save(tmp: Path) -> None:
        lm.save_pretrained(str(tmp))
        tokenizer.save_pretrained(str(tmp))

    return _fit("upr", out, model, bench, options, examples, *group_batches(examples, options, rng),
                lambda tmp: (lm, loss_fn, lambda: save(tmp)),
                objective="softmax over log P(question | upr prompt) of own passage and other questions' "
                          "representatives")
