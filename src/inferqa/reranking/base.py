"""The one interface every reranker implements: a reranker only has to score one question's
candidates (`score`, or `score_passages` when it needs no text); whole runs are `inferqa.reranking.run`'s."""

from __future__ import annotations

import math
import os
from abc import ABC, abstractmethod
from typing import Any, Iterable, Sequence

from ..formats.benchmark import Benchmark
from ..hints import GroupKey, all_hints_passage, window_groups
from ..parameters import RERANK_DEPTH, RERANK_REPRESENTATIVE, RERANK_WINDOW
from ..errors import InputError
from ..formats import Run
from ..records import question_of

_BIG = 1e30


class Reranker(ABC):
    """Scores a question's candidate passages; higher is more relevant."""

    name: str = "base"

    @abstractmethod
    def score(self, query: str, texts: Sequence[str]) -> list[float]:
        """One score per text, higher is better. Listwise models return scores derived from
        their final order (the first passage gets the highest score)."""

    def config(self) -> dict[str, Any]:
        """What identifies this reranker's output (written into checkpoints)."""
        return {"reranker": self.name}

    def call_stats(self) -> Any:
        """The hits and misses of this reranker's model-call cache (`llm.cache.CacheStats`), None
        for a reranker that has none."""
        return None

    def load(self) -> None:
        """Load the model now rather than on first use: `rerank_run` calls it once per worker,
        before any progress is shown, so a model that cannot load fails first."""

    def score_passages(self, bench: Benchmark | None, qid: str, pids: Sequence[str]) -> list[float]:
        """One score per passage of question `qid`: `score` on the question and passage texts.
        A reranker that needs no text (the oracle) overrides this instead."""
        texts = []
        for pid in pids:
            try:
                texts.append(bench.passage_text(pid))
            except (KeyError, ValueError) as exc:
                raise InputError(f"passage {pid}: {exc}", record=qid, field="pid") from None
        return self.score(bench.questions[qid].text, texts) if texts else []

    def rank_passages(self, bench: Benchmark | None, qid: str, pids: Sequence[str]) -> list[tuple[int, float]]:
        """(index into `pids`, score), best first; ties keep the given order."""
        return self._order(self.score_passages(bench, qid, pids), len(pids))

    def rank(self, query: str, texts: Sequence[str]) -> list[tuple[int, float]]:
        """(index into `texts`, score), best first, for texts that are not benchmark passages."""
        return self._order(self.score(query, list(texts)) if texts else [], len(texts))

    def _order(self, scores: Sequence[float], n: int) -> list[tuple[int, float]]:
        if len(scores) != n:
            raise RuntimeError(f"{self.name}: {len(scores)} scores for {n} passages")
        if any(math.isnan(s) for s in scores):
            raise RuntimeError(f"{self.name}: the model returned a NaN score")
        scores = [min(max(float(s), -_BIG), _BIG) for s in scores]  # keep +-inf out of the run file
        return sorted(enumerate(scores), key=lambda t: -t[1])

    def rerank(self, run: Run, bench: Benchmark, depth: int = RERANK_DEPTH.default,
               qids: Iterable[str] | None = None, *, window: str = RERANK_WINDOW.default,
               representative: str = RERANK_REPRESENTATIVE.default,
               checkpoint: str | os.PathLike | None = None, progress: bool = False,
               executor: Any = None) -> Run:
        """`inferqa.reranking.rerank_run` with this reranker."""
        from .run import rerank_run

        return rerank_run(run, bench, self, depth=depth, window=window, representative=representative, qids=qids,
                          checkpoint=checkpoint, progress=progress, executor=executor)

    def rerank_question(self, qid: str, ranked: list[tuple[str, float]], bench: Benchmark | None,
                        depth: int, group: GroupKey | None = None,
                        representative: str = RERANK_REPRESENTATIVE.default) -> list[tuple[str, float]]:
        """One question: the top `depth` reordered by this reranker's scores (ties keep the incoming
        order); the passages below keep their order and score differences, shifted to sit below the head.

        With `group` (a passage id -> its group: question, hint set, ...), the window is the first
        passage of each of the first `depth` groups; only they are scored, each followed by its
        group's other passages in `ranked`'s order, at its score. `representative="all-hints"` (question
        groups) scores each question's passage of all its hints instead of its first passage."""
        if group is None:
            head, tail = ranked[:depth], ranked[depth:]
            order = self.rank_passages(bench, qid, [pid for pid, _ in head])
            new_head = [(head[i][0], float(s)) for i, s in order]
        else:
            members = window_groups(ranked, depth, group)
            reps = [ranked[idx[0]][0] for idx in members]
            if RERANK_REPRESENTATIVE.check(representative, "rerank") == "all-hints":
                reps = [all_hints_passage(bench, question_of(pid)) for pid in reps]
            order = self.rank_passages(bench, qid, reps)
            new_head = [(ranked[i][0], float(s)) for j, s in order for i in members[j]]
            chosen = {i for idx in members for i in idx}
            tail = [pair for i, pair in enumerate(ranked) if i not in chosen]
        if not tail:
            return new_head
        floor = min(s for _, s in new_head)
        shift = tail[0][1] - floor + 1.0
        return new_head + [(pid, float(s) - shift) for pid, s in tail]
