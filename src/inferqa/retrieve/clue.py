"""Clue-level retrieval: encode each distinct clue once, score passages from their clues.

A QUIT passage is an ordering of a subset of one question's hints, so a corpus of 325
passages per question holds only 5 distinct texts worth encoding. The clue units are the
benchmark's hints (from the question records; `units=sentences` splits passage text
instead); each distinct unit text is encoded once, and `compose` makes a passage's score of
its units' cosines (docs/retrieve.md). `monotone` scores w·Σ softplus((s − c)/w) =
−w·log Π(1 − σ((s − c)/w)), the noisy-OR of per-unit evidence on a scale that does not
saturate: every unit adds a positive amount, so adding a clue never lowers a score
(`inferqa diagnose monotonicity`, docs/diagnose.md); the other compositions can.

None of these depends on the order of a passage's units, so passages with the same multiset
of units form one group, scored once; the index stores the groups (units per group, passages
per group) and the unit vectors, so its size and build time follow the number of distinct
units and groups, not passages. Tie order, like BM25's dedup: score descending, then the
corpus position of the group's first passage, then corpus position.
"""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..formats.benchmark import Benchmark
from ..errors import InputError
from ..hints import UnitSets, hint_unit_sets
from ..io import read_json, write_json
from ..defaults import DEFAULT_ENCODER
from ..models import MINILM, check_model_kind, load_sentence_transformer
from ..formats import Run
from .base import Retriever
from ..formats.corpus import corpus_ids, iter_corpus
from .ranking import save_array, top_groups
from ..parameters import DEVICE
from ..registry import Option, plugin

COMPOSITIONS = ("mean-embedding", "mean-score", "max", "lse", "monotone")
UNIT_KINDS = ("hints", "sentences")
ENCODE_CHUNK = 4096
QUERY_BLOCK = 32
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_ARRAYS = ("group_ptr", "group_units", "group_norm", "psg_ptr", "psg_pos")


def split_sentences(text: str) -> list[str]:
    return [s for s in (p.strip() for p in _SENTENCE_END.split(text)) if s]


@plugin("retriever", "clue",
        Option("model", str, DEFAULT_ENCODER, "sentence-transformers model for the clue units: HF id, minilm, or a "
               "folder (`inferqa finetune clue` trains one)"),
        Option("compose", str, "mean-embedding", "how a passage's unit scores combine; monotone: noisy-OR of "
               "per-unit evidence σ((cosine − monotone_center)/monotone_scale), so adding a clue never lowers "
               "a score (docs/diagnose.md)", choices=COMPOSITIONS),
        Option("units", str, "hints", "clue units: the questions' hints, or sentences of the passage text",
               choices=UNIT_KINDS),
        Option("query_model", str, None, "separate query encoder (default: model)"),
        Option("query_prefix", str, "", "text put before each query"),
        Option("unit_prefix", str, "", "text put before each clue unit"),
        Option("temperature", float, 0.05, "lse: softness of the max (larger: closer to mean-score)", min=0,
               min_open=True),
        Option("monotone_center", float, 0.3, "monotone: the cosine at which a unit is even-odds evidence"),
        Option("monotone_scale", float, 0.1, "monotone: cosine width of the evidence's rise (smaller: closer to "
               "Σ max(0, cosine − center))", min=0, min_open=True),
        Option("batch_size", int, 64, "encoding batch size", min=1),
        DEVICE,
        Option("show_progress", bool, True, "progress bars while encoding"))
class ClueRetriever(Retriever):
    """Each distinct hint encoded once; a passage scored from its hints' vectors."""

    def __init__(self, *, model: str, compose: str, units: str, query_model: str | None, query_prefix: str,
                 unit_prefix: str, temperature: float, monotone_center: float, monotone_scale: float,
                 batch_size: int, device: str | None, show_progress: bool):
        # compose, units and temperature are checked by the registry (their declared options).
        for ref, name in ((model, "model"), (query_model, "query_model")):
            if ref and ref != MINILM:
                # a missing folder, or one of another kind (a reranker, a dense retriever), fails here
                check_model_kind(ref, "clue", field=name)
        super().__init__(model=model, units=units, unit_prefix=unit_prefix)
        # How queries are scored against the index: not part of it (one index, every composition).
        self.compose, self.query_model, self.query_prefix = compose, query_model, query_prefix
        self.temperature = float(temperature)
        self.monotone_center, self.monotone_scale = float(monotone_center), float(monotone_scale)
        self.batch_size, self.device, self.show_progress = int(batch_size), device, show_progress
        self._encoders: dict[str, Any] = {}

    def _encode(self, model: str, texts: list[str], prefix: str) -> np.ndarray:
        if model not in self._encoders:
            self._encoders[model] = load_sentence_transformer(model, self.device)
        vecs = self._encoders[model].encode([prefix + t for t in texts], batch_size=self.batch_size,
                                            convert_to_numpy=True, show_progress_bar=False)
        vecs = np.ascontiguousarray(vecs, dtype=np.float32)
        norms = np.linalg.norm(vecs, axis=1, keepdims=True)
        return vecs / np.maximum(norms, 1e-12)  # cosine scores whatever the model's own normalisation

    def _build(self, bench: Benchmark, out_dir: Path) -> dict[str, Any]:
        t0 = time.perf_counter()
        ids = corpus_ids(bench)
        units = hint_unit_sets(bench, ids) if self.options["units"] == "hints" else self._sentence_units(bench, ids)
        t_units = time.perf_counter() - t0
        vecs, enc_seconds = self._encode_units(units.texts, out_dir)
        group_ptr, members = units.csr()
        sizes = np.diff(group_ptr)
        group_units = members.astype(np.int32)
        # |sum of a group's unit vectors|: its mean-embedding score is the sum of cosines over this.
        sums = np.add.reduceat(vecs[group_units], group_ptr[:-1], axis=0) if len(sizes) else np.zeros((0, 1))
        group_norm = np.linalg.norm(sums, axis=1).astype(np.float32)
        psg_pos = np.argsort(units.set_of, kind="stable").astype(np.int64)
        psg_ptr = np.zeros(len(sizes) + 1, dtype=np.int64)
        np.cumsum(np.bincount(units.set_of, minlength=len(sizes)), out=psg_ptr[1:])
        for name, arr in (("pids", ids), ("group_ptr", group_ptr), ("group_units", group_units),
                          ("group_norm", group_norm), ("psg_ptr", psg_ptr), ("psg_pos", psg_pos)):
            save_array(out_dir, name, arr)
        return {"passages": int(len(ids)), "units": len(units.texts), "groups": len(units.sets),
                "dim": int(vecs.shape[1]), "texts_encoded": len(units.texts),
                "unit_seconds": round(t_units, 3), "encode_seconds": round(enc_seconds, 3),
                "build_seconds": round(time.perf_counter() - t0, 3)}

    @staticmethod
    def _sentence_units(bench: Benchmark, ids: np.ndarray) -> UnitSets:
        units = UnitSets(len(ids))
        corpus = bench.path / "corpus.jsonl"
        n = 0
        for i, p in enumerate(iter_corpus(bench)):
            if i >= len(ids) or p.id.encode() != ids[i]:
                raise InputError("corpus changed while indexing", file=corpus)
            found = [units.unit(s) for s in split_sentences(p.text)]
            if not found:
                raise InputError(f"passage {p.id!r} has no text", file=corpus, record=f"line {i + 1}", field="text")
            units.add(i, found)
            n += 1
        if n != len(ids):
            raise InputError("corpus changed while indexing", file=corpus)
        return units

    def _encode_units(self, texts: list[str], out_dir: Path) -> tuple[np.ndarray, float]:
        """Unit vectors, encoded in chunks saved as they finish: an interrupted build resumes."""
        from ..progress import counter

        chunks = out_dir / "unit-chunks"
        listing = out_dir / "units.json"
        finished = out_dir / "unit_vectors.npy"
        if not listing.exists() or read_json(listing) != texts:
            finished.unlink(missing_ok=True)
            shutil.rmtree(chunks, ignore_errors=True)
            write_json(listing, texts)
        elif finished.exists() and not chunks.exists():  # built before for these units: reuse
            vecs = np.load(finished)
            if len(vecs) == len(texts):
                return vecs, 0.0
        chunks.mkdir(exist_ok=True)
        t0 = time.perf_counter()
        parts = []
        with counter(len(texts), "encoding clue units", "unit", self.show_progress) as bar:
            for c, start in enumerate(range(0, len(texts), ENCODE_CHUNK)):
                f = chunks / f"{c:06d}.npy"
                batch = texts[start:start + ENCODE_CHUNK]
                if f.exists():
                    part = np.load(f)
                else:
                    part = self._encode(self.options["model"], batch, self.options["unit_prefix"])
                    save_array(chunks, f"{c:06d}", part)
                parts.append(part)
                bar.update(len(batch))
        vecs = np.concatenate(parts) if parts else np.zeros((0, 1), np.float32)
        save_array(out_dir, finished.stem, vecs)
        shutil.rmtree(chunks)
        return vecs, time.perf_counter() - t0

    def _load(self, index_dir: Path) -> None:
        self._pids = np.load(index_dir / "pids.npy", mmap_mode="r")
        self._units = np.load(index_dir / "unit_vectors.npy")
        self._use_groups({n: np.load(index_dir / f"{n}.npy") for n in _ARRAYS}, len(self._units))

    def _use_groups(self, arrays: dict[str, np.ndarray], n_units: int) -> None:
        """Score groups of units as `arrays` (group_ptr, group_units, group_norm, ...) hold them."""
        import scipy.sparse as sp

        self._a = arrays
        self._group_of = None  # corpus position -> group, built by the first score_passages
        ptr, members = self._a["group_ptr"], self._a["group_units"]
        sizes = np.diff(ptr)
        rows = np.repeat(np.arange(len(sizes)), sizes)
        weight = {"mean-embedding": 1.0 / np.maximum(self._a["group_norm"], 1e-12),
                  "mean-score": 1.0 / sizes, "lse": 1.0 / sizes, "monotone": np.ones(len(sizes))}.get(self.compose)
        self._member = None if weight is None else sp.csr_matrix(
            (np.repeat(weight, sizes).astype(np.float64), (rows, members)), shape=(len(sizes), n_units))
        if self._member is not None:
            # each group's units summed in unit order: a superset's sum then adds its extra
            # (non-negative) terms between the subset's, and rounding cannot make it smaller
            self._member.sort_indices()

    def group_scores(self, unit_scores: np.ndarray) -> np.ndarray:
        """(queries × units) cosines → (queries × groups) composed scores, float32."""
        if self.compose == "max":
            ptr, members = self._a["group_ptr"], self._a["group_units"]
            return np.maximum.reduceat(unit_scores[:, members], ptr[:-1], axis=1).astype(np.float32)
        if self.compose == "monotone":
            w = self.monotone_scale
            evidence = w * np.logaddexp(0.0, (unit_scores.astype(np.float64) - self.monotone_center) / w)
            return (self._member @ evidence.T).T.astype(np.float32)
        if self.compose == "lse":
            t = self.temperature
            top = unit_scores.max(axis=1, keepdims=True).astype(np.float64)
            expo = np.exp((unit_scores - top) / t)
            return (t * np.log(np.maximum((self._member @ expo.T).T, 1e-300)) + top).astype(np.float32)
        return (self._member @ unit_scores.T.astype(np.float64)).T.astype(np.float32)

    def score_passages(self, query: str, pids: Sequence[str]) -> np.ndarray:
        self.load()
        rows = self._index_positions(pids, self._pids)
        if self._group_of is None:
            ptr = self._a["psg_ptr"]
            self._group_of = np.empty(len(self._pids), dtype=np.int64)
            self._group_of[self._a["psg_pos"]] = np.repeat(np.arange(len(ptr) - 1), np.diff(ptr))
        q = self._encode(self.query_model or self.options["model"], [query], self.query_prefix)
        return self.group_scores(q @ self._units.T)[0, self._group_of[rows]].astype(np.float64)

    def _search(self, qids: list[str], texts: list[str], k: int) -> Run:
        q = self._encode(self.query_model or self.options["model"], texts, self.query_prefix)
        run = Run()
        for s in range(0, len(qids), QUERY_BLOCK):
            scores = self.group_scores(q[s:s + QUERY_BLOCK] @ self._units.T)
            for qid, g in zip(qids[s:s + QUERY_BLOCK], scores):
                # best groups first (numbered by first appearance), each group's passages in corpus order
                rows, vals = top_groups(g, self._a["psg_ptr"], k)
                pids = self._pids[self._a["psg_pos"][rows]]
                run[qid] = list(zip(pids.astype("U").tolist(), vals.astype(float).tolist()))
        return run
