"""Who defines a measure: one table per protocol (`inferqa`, the QUIT authors' `paper`), each a
function per measure family over the run's label matrix. `metrics` describes both."""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from itertools import repeat
from operator import itemgetter
from typing import Any, Callable, Mapping

import numpy as np

from ..errors import InputError
from ..formats import Qrels, Run
from .measures import Measure


class Lists:
    """The run's lists as labels: labels[i, r] for the passage at rank r + 1 of question i
    (-1 unjudged or past the list's end), with what the measures share, per relevance level."""

    def __init__(self, run: Run, qrels: Qrels, qids: list[str], depth: int):
        self.run, self.qrels, self.qids, self.depth = run, qrels, qids, depth
        self.labels = np.full((len(qids), depth), -1, dtype=np.int16)
        first = itemgetter(0)
        for i, qid in enumerate(qids):
            ranked, judged = run[qid], qrels.get(qid)
            if not ranked or not judged:
                continue
            n = min(len(ranked), depth)
            # map() over C callables: no Python bytecode per passage.
            self.labels[i, :n] = np.fromiter(map(judged.get, map(first, ranked[:n]), repeat(-1, n)),
                                             dtype=np.int16, count=n)
        self.retrieved = np.array([len(run[q]) for q in qids], dtype=np.int64)
        self.rel = lru_cache(None)(lambda rel: self.labels >= rel)
        self.ideal = lru_cache(None)(self._ideal)
        self.found = lru_cache(None)(self._found)

    def _ideal(self, rel: int) -> tuple[np.ndarray, np.ndarray]:
        """Per question: judged labels >= rel sorted descending (the ideal ranking), and their count."""
        rows = [np.fromiter(self.qrels.get(q, {}).values(), dtype=np.int16) for q in self.qids]
        ideal = np.zeros((len(self.qids), max((len(r) for r in rows), default=1) or 1), dtype=np.int16)
        for i, r in enumerate(rows):
            ideal[i, : len(r)] = r
        ideal[ideal < rel] = 0
        ideal = -np.sort(-ideal, axis=1)
        n_rel = np.count_nonzero(ideal, axis=1) if rel > 0 else np.array([len(r) for r in rows])
        return ideal, n_rel.astype(np.int64)

    def n_rel(self, rel: int) -> np.ndarray:
        return self.ideal(rel)[1]

    def _found(self, rel: int, once: bool) -> np.ndarray:
        """Relevant passages within the top k, at column k - 1: a passage listed twice counts at
        each rank, or once (`once`)."""
        hits = self.rel(rel)
        if once and self.first_listed is not None:
            hits = hits & self.first_listed
        return np.cumsum(hits, axis=1, dtype=np.int32)

    @cached_property
    def first_listed(self) -> np.ndarray | None:
        """first[i, r]: the passage at rank r + 1 is not listed higher; None when no list repeats one."""
        out = None
        for i, qid in enumerate(self.qids):
            pids = [p for p, _ in self.run[qid][: self.depth]]
            if len(set(pids)) == len(pids):
                continue
            if out is None:
                out = np.ones((len(self.qids), self.depth), dtype=bool)
            seen: set[str] = set()
            for r, p in enumerate(pids):
                out[i, r] = p not in seen
                seen.add(p)
        return out

    @cached_property
    def judged(self) -> "Lists":
        """These lists with every unjudged passage taken out first (ranks close up behind it):
        what a measure with judged_only=True ranks, as trec_eval -J does."""
        out = Lists.__new__(Lists)
        out.__dict__.update(self.__dict__)
        for cached in ("judged", "first_listed"):
            out.__dict__.pop(cached, None)
        keep = self.labels >= 0
        order = np.argsort(~keep, axis=1, kind="stable")  # judged first, in rank order
        out.labels = np.where(np.take_along_axis(keep, order, axis=1),
                              np.take_along_axis(self.labels, order, axis=1), -1).astype(np.int16)
        out.retrieved = keep.sum(axis=1).astype(np.int64)
        out.run = Run({q: [e for e in self.run[q][: self.depth] if e[0] in self.qrels.get(q, {})] for q in self.qids})
        out.rel = lru_cache(None)(lambda rel: out.labels >= rel)
        out.ideal = lru_cache(None)(out._ideal)
        out.found = lru_cache(None)(out._found)
        return out

    def at(self, k: int, rel: int, once: bool = False) -> np.ndarray:
        return self.found(rel, once)[:, min(k, self.depth) - 1]

    def cut(self, k: int | None) -> int:
        return self.depth if k is None else min(k, self.depth)


def _dcg(gains: np.ndarray, k: int) -> np.ndarray:
    g = gains[:, :k]
    return g @ (1.0 / np.log2(np.arange(2, g.shape[1] + 2)))


def _gain(labels: np.ndarray, p: dict) -> np.ndarray:
    """Each label's gain: `gains` ({label: gain}, an unlisted label its own value) where given,
    else the label (lin) or 2^label - 1 (exp); an unjudged passage (-1) gains 0."""
    judged = labels >= 0
    values = np.maximum(labels, 0).astype(float)
    if p.get("gains"):
        out = values.copy()
        for label, g in p["gains"]:
            out[labels == label] = g
        return np.where(judged, out, 0.0)
    return values if p["gain"] == "lin" else 2.0 ** values - 1.0


def _ndcg_of(L: "Lists", m: Measure, p: dict, rel: int) -> np.ndarray:
    """nDCG with labels below `rel` gaining 0 and the ideal ranking sorted by gain."""
    gains = np.where(L.rel(rel), _gain(L.labels, p), 0.0)
    ideal_labels = L.ideal(rel)[0]
    ideal = -np.sort(-np.where(ideal_labels >= rel, _gain(ideal_labels, p), 0.0), axis=1)
    return _ndcg(gains, ideal, m.k)


def _ndcg(gains: np.ndarray, ideal: np.ndarray, k: int | None) -> np.ndarray:
    # the ideal ranking is cut at k, not at the run's longest list; no cutoff: all of it
    k = max(gains.shape[1], ideal.shape[1]) if k is None else k
    idcg = _dcg(ideal, k)
    return np.where(idcg > 0, _dcg(gains, k) / np.where(idcg > 0, idcg, 1.0), 0.0)


Compute = Callable[[Lists, Measure, dict], np.ndarray]

INFERQA: dict[str, Compute] = {
    "Success": lambda L, m, p: (L.at(m.k, p["rel"]) > 0).astype(float),
    "Hits": lambda L, m, p: L.at(m.k, p["rel"]).astype(float),
    "R": lambda L, m, p: L.at(m.k, p["rel"]) / np.maximum(L.n_rel(p["rel"]), 1),
    "P": lambda L, m, p: L.at(m.k, p["rel"]) / m.k,
    "RR": lambda L, m, p: _rr(L, m.k, p["rel"]),
    "AP": lambda L, m, p: _ap(L, m.k, p["rel"]),
    "nDCG": lambda L, m, p: _ndcg_of(L, m, p, p["rel"]),
    "Rprec": lambda L, m, p: _rprec(L, p["rel"]),
    "Judged": lambda L, m, p: _judged(L, m.k),
}


def _rr(L: Lists, k: int | None, rel: int) -> np.ndarray:
    hits = L.rel(rel)
    first = np.where(hits.any(axis=1), hits.argmax(axis=1) + 1, 0)  # 1-based rank, 0 = none
    ok = (first > 0) & (first <= L.cut(k))
    return np.where(ok, 1.0 / np.maximum(first, 1), 0.0)


def _ap(L: Lists, k: int | None, rel: int) -> np.ndarray:
    cut, n_rel = L.cut(k), L.n_rel(rel)
    prec = np.where(L.rel(rel)[:, :cut], L.found(rel, False)[:, :cut] / np.arange(1, cut + 1), 0.0).sum(axis=1)
    return np.where(n_rel > 0, prec / np.maximum(n_rel, 1), 0.0)


def _rprec(L: Lists, rel: int) -> np.ndarray:
    n_rel = L.n_rel(rel)
    found = L.found(rel, False)
    at_r = found[np.arange(len(n_rel)), np.clip(n_rel, 1, L.depth) - 1]
    return np.where(n_rel > 0, at_r / np.maximum(n_rel, 1), 0.0)


def _judged(L: Lists, k: int) -> np.ndarray:
    cut = L.cut(k)
    judged = (L.labels[:, :cut] >= 0).sum(axis=1)
    return judged / np.maximum(1, np.minimum(k, L.retrieved))


def _paper_judged_only(v: np.ndarray, L: Lists, rel: int) -> np.ndarray:
    # A plain mean (0 without relevant passages), but the authors' label-threshold variants leave
    # out the questions without a passage of that label.
    return np.where(L.n_rel(rel) > 0, v, 0.0 if rel < 2 else np.nan)


PAPER: dict[str, Compute] = {
    **INFERQA,
    "Success": lambda L, m, p: _paper_judged_only((L.at(m.k, p["rel"], once=True) > 0).astype(float), L, p["rel"]),
    "R": lambda L, m, p: _paper_judged_only(L.at(m.k, p["rel"], once=True) / L.n_rel(p["rel"]), L, p["rel"]),
    "P": lambda L, m, p: L.at(m.k, p["rel"], once=True) / np.maximum(1, np.minimum(m.k, L.retrieved)),
    # every label gains, whatever rel; the ideal from all of the question's labels
    "nDCG": lambda L, m, p: _ndcg(_gain(L.labels, p), -np.sort(-_gain(L.ideal(0)[0], p), axis=1), m.k),
}


@dataclass(frozen=True)
class Provider:
    name: str
    measures: Mapping[str, Compute]
    defaults: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)  # family -> parameter -> value
    decimals: int | None = None  # means rounded so
    empty_mean: float = float("nan")  # the mean over no defined question


PROVIDERS = {p.name: p for p in (
    Provider("inferqa", INFERQA),
    Provider("paper", PAPER, defaults={"nDCG": {"gain": "exp"}}, decimals=4, empty_mean=0.0),
)}


def provider(protocol: str) -> Provider:
    if protocol not in PROVIDERS:
        raise InputError(f"unknown protocol {protocol!r} (use {' or '.join(PROVIDERS)})", field="protocol")
    return PROVIDERS[protocol]
