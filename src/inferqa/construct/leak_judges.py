"""Semantic leak judges: catch hints that reveal the answer without writing it verbatim.

They are `leak-judge` plugins (with `string`, the rule in inferqa.construct.leakage). Both
implement `inferqa.construct.leakage.LeakJudge` and apply the string rule first, so they only
ever add flags to it.

EmbeddingLeakJudge compares each answer with short spans of the hint (word n-grams that
neither start nor end on a stop word), not with the whole hint: a hint is *about* the
answer by design, so whole-hint similarity flags nearly every on-topic hint, while a span
that means the same as the answer ("looking glass" for "mirror", "Big Apple" for "New
York City") is what a paraphrased leak looks like.

LLMLeakJudge asks an LLM (any `inferqa.llm.load_llm` spec) whether the hint states the
answer or an alternative name of it, and parses yes/no. Small models often reply with
neither: on llama-cpp specs the likelier of "Yes" and "No" then decides; elsewhere such a
reply counts as no.
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Sequence

from ..defaults import DEFAULT_ENCODER
from ..registry import Option, plugin
from ..parameters import DEVICE, LEAK_JUDGE, LEAK_LLM, LEAK_THRESHOLD

_STRING_JUDGE = Option("string_judge", object, None, "the judge applied first (default: the string rule)")

_WORD = re.compile(r"[^\W_]+(?:['’\-][^\W_]+)*")
STOP_WORDS = frozenset("""
a about above after again against all also am an and any are as at be because been before being below
between both but by can could did do does doing down during each few for from further had has have having
he her here hers herself him himself his how i if in into is it its itself just me more most my myself no
nor not now of off on once only or other our ours ourselves out over own same she should so some such
than that the their theirs them themselves then there these they this those through to too under until up
very was we were what when where which while who whom why will with would you your yours yourself
yourselves known called often many may might must well used use s
""".split())


class _AfterStringRule:
    """Shared by both judges: the string rule (`string_judge`) applied first; one hint is a batch of one."""

    def __init__(self, string_judge: Any):
        from .leakage import StringLeakJudge

        self.string_judge = string_judge if string_judge is not None else StringLeakJudge()

    def _by_string(self, items: Sequence[tuple[str, Sequence[str]]]) -> tuple[list, list[bool]]:
        items = [(h, [a for a in answers if a.strip()]) for h, answers in items]  # blank answers dropped
        return items, [bool(self.string_judge.leaks(h, a)) for h, a in items]

    def leaks(self, hint: str, answers: Sequence[str]) -> bool:
        return self.leaks_many([(hint, answers)])[0]


def hint_spans(hint: str, max_words: int) -> list[str]:
    """Distinct word n-grams (1..max_words) of `hint` that neither start nor end on a stop word."""
    words = _WORD.findall(hint)
    low = [w.lower() for w in words]
    out: dict[str, None] = {}
    for n in range(1, max_words + 1):
        for i in range(len(words) - n + 1):
            if low[i] in STOP_WORDS or low[i + n - 1] in STOP_WORDS:
                continue
            out.setdefault(" ".join(words[i:i + n]), None)
    return list(out)


@plugin("leak-judge", "embedding",
        Option("model", (str, object), DEFAULT_ENCODER, "sentence-transformers model (id, folder, "
               "minilm) or instance"),
        LEAK_THRESHOLD,
        Option("max_extra_words", int, 1, "span length beyond the answer's", min=0),
        Option("max_words", int, 6, "longest span compared", min=1),
        Option("batch_size", int, 256, "texts per encoding batch", min=1),
        DEVICE,
        _STRING_JUDGE)
class EmbeddingLeakJudge(_AfterStringRule):
    """Leak if the string rule fires, or some hint span's cosine to an answer is >= threshold."""

    name = "embedding"

    def __init__(self, *, model: str | Any, threshold: float, max_extra_words: int, max_words: int,
                 batch_size: int, device: str | None, string_judge: Any):
        super().__init__(string_judge)
        self.threshold, self.max_extra_words = threshold, max_extra_words
        self.max_words, self.batch_size = max_words, batch_size
        self._model_spec, self._device = model, device
        self._model: Any = None if isinstance(model, str) else model
        self._cache: dict[str, Any] = {}

    @property
    def model(self):
        if self._model is None:
            from ..models import load_sentence_transformer

            self._model = load_sentence_transformer(self._model_spec, self._device)
        return self._model

    def _embed(self, texts: Iterable[str]) -> None:
        todo = list(dict.fromkeys(t for t in texts if t not in self._cache))
        if not todo:
            return
        vecs = self.model.encode(todo, batch_size=self.batch_size, normalize_embeddings=True,
                                 convert_to_numpy=True, show_progress_bar=False)
        self._cache.update(zip(todo, vecs))

    def _spans_for(self, hint: str, answers: Sequence[str]) -> list[str]:
        longest = max((len(_WORD.findall(a)) for a in answers), default=1)
        return hint_spans(hint, min(self.max_words, max(2, longest + self.max_extra_words)))

    def scores_many(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[tuple[float, str]]:
        """Per (hint, answers): the best span cosine to any answer, and that span."""
        import numpy as np

        spans = [self._spans_for(h, a) for h, a in items]
        self._embed(t for (_, answers), sp in zip(items, spans) for t in [*answers, *sp])
        out = []
        for (_, answers), sp in zip(items, spans):
            if not sp or not answers:
                out.append((0.0, ""))
                continue
            sims = np.stack([self._cache[s] for s in sp]) @ np.stack([self._cache[a] for a in answers]).T
            i = int(sims.max(axis=1).argmax())
            out.append((float(sims[i].max()), sp[i]))
        return out

    def score(self, hint: str, answers: Sequence[str]) -> float:
        return self.scores_many([(hint, answers)])[0][0]

    def leaks_many(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[bool]:
        items, out = self._by_string(items)
        rest = [i for i, s in enumerate(out) if not s]
        for i, (sim, _) in zip(rest, self.scores_many([items[i] for i in rest])):
            out[i] = sim >= self.threshold
        return out


LLM_LEAK_SYSTEM = "You check quiz hints. A hint must help guess the answer without giving it away."
LLM_LEAK_PROMPT = (
    "Answer: {answers}\n"
    "Hint: {hint}\n"
    "Does the hint say the answer itself, or another name, spelling, abbreviation or translation of it? "
    "Reply with yes or no."
)
_YES_NO = re.compile(r"\b(yes|no)\b", re.IGNORECASE)


def parse_yes_no(text: str) -> bool | None:
    """The first standalone yes/no in a reply; None when there is none."""
    m = _YES_NO.search(text or "")
    return None if m is None else m.group(1).lower() == "yes"


@plugin("leak-judge", "llm",
        LEAK_LLM,
        Option("batch_size", int, 16, "hints per LLM call", min=1),
        Option("max_tokens", int, 8, "reply length", min=1),
        _STRING_JUDGE)
class LLMLeakJudge(_AfterStringRule):
    """Leak if the string rule fires, or the LLM answers yes. A reply with neither yes nor no is
    decided by log P("Yes") > log P("No") after the chat prompt where the backend can render
    its template (llama-cpp), and counts as no elsewhere."""

    name = "llm"

    def __init__(self, *, llm: Any, batch_size: int, max_tokens: int, string_judge: Any):
        super().__init__(string_judge)
        if isinstance(llm, str):
            from ..llm import load_llm

            llm = load_llm(llm)
        self.llm = llm
        self.batch_size, self.max_tokens = batch_size, max_tokens
        self.unparsed = 0  # replies with neither yes nor no, counted for reports
        self.scored = 0    # of those, decided by comparing log P("Yes") and log P("No")

    def conversation(self, hint: str, answers: Sequence[str]) -> list[dict]:
        user = LLM_LEAK_PROMPT.format(answers=" / ".join(answers), hint=hint)
        return [{"role": "system", "content": LLM_LEAK_SYSTEM}, {"role": "user", "content": user}]

    def leaks_many(self, items: Sequence[tuple[str, Sequence[str]]]) -> list[bool]:
        from ..llm.base import GenerationParams

        items, out = self._by_string(items)
        rest = [i for i, s in enumerate(out) if not s and items[i][1]]
        params = GenerationParams(max_tokens=self.max_tokens, temperature=0.0)
        for start in range(0, len(rest), self.batch_size):
            chunk = rest[start:start + self.batch_size]
            replies = self.llm.chat([self.conversation(*items[i]) for i in chunk], params)
            for i, reply in zip(chunk, replies):
                verdict = parse_yes_no(reply)
                if verdict is None:
                    self.unparsed += 1
                    verdict = self._scored(items[i])
                out[i] = bool(verdict)
        return out

    def _scored(self, item: tuple[str, Sequence[str]]) -> bool:
        """Yes if "Yes" is likelier than "No" as the reply, where the backend renders its chat template."""
        render = getattr(self.llm, "render_chat", None)
        if render is None:
            return False
        self.scored += 1
        prompt, _ = render(self.conversation(*item))
        return self.llm.logprob(prompt, "Yes") > self.llm.logprob(prompt, "No")


def leak_judge(name: str = LEAK_JUDGE.default, **options: Any) -> Any:
    """The leak judge NAME (`--leak-judge`) with checked options; None values mean defaults
    (left out, so a flag that was not given is no option of a judge that lacks it)."""
    from .. import registry

    return registry.create("leak-judge", name, **{k: v for k, v in options.items() if v is not None})


def leak_judge_of(name: str, threshold: float, llm: Any) -> Any:
    """The leak judge NAME with a stage's judge options other than their declared defaults
    (those the judge takes for itself, so one it lacks is no error)."""
    given = {"threshold": (threshold, LEAK_THRESHOLD.default), "llm": (llm, LEAK_LLM.default)}
    return leak_judge(name, **{key: value for key, (value, default) in given.items() if value != default})
