"""LLM rerankers: pointwise yes/no, RankGPT listwise, and UPR query likelihood, each on an
`inferqa.llm.base.LLM` (a spec is opened by `load_llm`, whose call cache makes a rerun repeat no call)."""

from __future__ import annotations

from typing import Any, Sequence

from ..defaults import DEFAULT_LLM
from ..llm.base import LLM, GenerationParams
from ..registry import Option, plugin
from .base import Reranker
from .permutation import listwise_order, order_to_scores, parse_permutation

POINTWISE_PROMPT = (
    "Question: {query}\n"
    "Passage: {passage}\n"
    "Does the passage help to answer the question? Answer yes or no.\n"
    "Answer:"
)

UPR_PROMPT = "Passage: {passage}\nPlease write a question based on this passage.\nQuestion:"


def upr_pairs(query: str, passages: Sequence[str], prompt: str = UPR_PROMPT) -> list[tuple[str, str]]:
    """What UPR scores, log P(continuation | prompt), per passage: (the prompt around the passage, the
    question as its continuation). `finetune upr` trains on the same pairs."""
    continuation = " " + query.strip()
    return [(prompt.format(passage=t), continuation) for t in passages]

LISTWISE_SYSTEM = ("You are RankGPT, an intelligent assistant that ranks passages by how useful "
                   "they are for answering a question.")
LISTWISE_INTRO = ("I will give you {n} passages, each marked with a number in brackets []. "
                  "Rank them by how much they help to answer this question: {query}")
LISTWISE_FINAL = ("Question: {query}\nRank the {n} passages above from most to least helpful for "
                  "answering the question. Answer only with the identifiers in the form [] > [], "
                  "for example [2] > [1] > [3], and nothing else.")


# What every LLM reranker takes besides its own options.
LLM_OPTIONS = (
    Option("llm", (str, LLM), DEFAULT_LLM, "LLM spec (smollm2, llama-cpp:PATH, openai:MODEL@URL, ...) or instance"),
    Option("llm_options", dict, None, "keyword options of load_llm, e.g. {\"cache\": null}"),
)


class _LLMReranker(Reranker):
    def __init__(self, *, llm: LLM | str, llm_options: dict | None):
        if isinstance(llm, str):
            from ..llm.spec import parse_spec

            parse_spec(llm)  # a mistyped spec fails here, before any question is reranked
        self._spec = llm
        self._llm_options = llm_options or {}
        self._llm: LLM | None = llm if isinstance(llm, LLM) else None

    @property
    def llm(self) -> LLM:
        if self._llm is None:
            from ..llm import load_llm  # with its call cache in front

            self._llm = load_llm(self._spec, **self._llm_options)
        return self._llm

    def config(self) -> dict[str, Any]:
        return {"reranker": self.name, "llm": self.llm.identity}

    def call_stats(self) -> Any:
        return getattr(self._llm, "stats", None)


@plugin("reranker", "llm-pointwise", *LLM_OPTIONS,
        Option("prompt", str, POINTWISE_PROMPT, "prompt with {query} and {passage}"),
        Option("yes", str, " yes", "continuation whose log-probability counts for"),
        Option("no", str, " no", "continuation whose log-probability counts against"))
class PointwiseLLMReranker(_LLMReranker):
    """relevance = log P(" yes" | prompt) − log P(" no" | prompt): MonoT5's idea with a causal LM."""

    def __init__(self, *, prompt: str, yes: str, no: str, **kw: Any):
        super().__init__(**kw)
        self.prompt, self.yes, self.no = prompt, yes, no

    def config(self) -> dict[str, Any]:
        return {**super().config(), "prompt": self.prompt, "yes": self.yes, "no": self.no}

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        prompts = [self.prompt.format(query=query, passage=t) for t in texts]
        # yes/no of one prompt side by side: the backend reuses the prompt's KV state
        lps = self.llm.logprobs([pair for p in prompts for pair in ((p, self.yes), (p, self.no))])
        return [lps[2 * i] - lps[2 * i + 1] for i in range(len(prompts))]


@plugin("reranker", "upr", *LLM_OPTIONS,
        Option("prompt", str, UPR_PROMPT, "prompt with {passage}; the question is its continuation"),
        Option("reduction", str, "sum", "sum of the question's token log-probabilities, or their mean",
               choices=("sum", "mean")))
class UPRReranker(_LLMReranker):
    """Unsupervised Passage Reranking: log P(question | passage) under the LM.

    `reduction="sum"` (default) is the total log-probability of the question's tokens;
    "mean" divides it by the question's length (UPR's average, comparable across
    questions): in tokens if the LLM has `count_tokens(text)`, else in whitespace words.
    Within one question both give the same order: the question, and so its length, is
    the same for every passage.
    """

    def __init__(self, *, prompt: str, reduction: str, **kw: Any):
        super().__init__(**kw)
        self.prompt, self.reduction = prompt, reduction

    def config(self) -> dict[str, Any]:
        return {**super().config(), "prompt": self.prompt, "reduction": self.reduction}

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        pairs = upr_pairs(query, texts, self.prompt)
        scores = self.llm.logprobs(pairs)
        if self.reduction == "mean" and pairs:
            counter, continuation = getattr(self.llm, "count_tokens", None), pairs[0][1]  # the same for every pair
            n = max(int(counter(continuation) if callable(counter) else len(continuation.split())), 1)
            scores = [s / n for s in scores]
        return scores


@plugin("reranker", "llm-listwise", *LLM_OPTIONS,
        Option("window", int, 20, "passages the LLM orders at once", min=2),
        Option("step", int, 10, "passages a window slides by", min=1),
        Option("max_passage_words", int, 300, "words kept of each passage", min=1),
        Option("max_tokens", int, None, "answer length cap (default: 6 per passage + 8)", min=1))
class ListwiseLLMReranker(_LLMReranker):
    """RankGPT: the LLM orders a window of passages; windows slide from the bottom up.

    One chat per window (system, intro, one user/assistant turn per passage, final ask),
    answer parsed by `parse_permutation`, which repairs missing, repeated and
    out-of-range ids. Passages are cut to `max_passage_words` words to bound the prompt.
    """

    def __init__(self, *, window: int, step: int, max_passage_words: int, max_tokens: int | None, **kw: Any):
        super().__init__(**kw)
        self.window, self.step, self.max_passage_words, self.max_tokens = window, step, max_passage_words, max_tokens

    def config(self) -> dict[str, Any]:
        return {**super().config(), "window": self.window, "step": self.step,
                "max_passage_words": self.max_passage_words}

    def messages(self, query: str, texts: Sequence[str]) -> list[dict]:
        n = len(texts)
        msgs = [{"role": "system", "content": LISTWISE_SYSTEM},
                {"role": "user", "content": LISTWISE_INTRO.format(n=n, query=query)},
                {"role": "assistant", "content": "Okay, please give me the passages."}]
        for i, text in enumerate(texts, 1):
            words = text.split()
            msgs.append({"role": "user", "content": f"[{i}] {' '.join(words[:self.max_passage_words])}"})
            msgs.append({"role": "assistant", "content": f"Received passage [{i}]."})
        msgs.append({"role": "user", "content": LISTWISE_FINAL.format(n=n, query=query)})
        return msgs

    def permute_window(self, query: str, texts: Sequence[str]) -> list[int]:
        # about 5 tokens per "[12] > " item; the parser repairs a cut-off answer
        params = GenerationParams(max_tokens=self.max_tokens or 6 * len(texts) + 8, temperature=0.0)
        answer = self.llm.chat([self.messages(query, texts)], params)[0]
        return parse_permutation(answer, len(texts))

    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        if len(texts) <= 1:
            return [1.0] * len(texts)
        return order_to_scores(listwise_order(len(texts), self.window, self.step,
                                              lambda idx: self.permute_window(query, [texts[i] for i in idx])))
