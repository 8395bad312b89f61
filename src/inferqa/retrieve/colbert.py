"""Late interaction (ColBERT): token vectors per passage, MaxSim scoring, exact search.

`mode=full` encodes every passage of corpus.jsonl. `mode=clue` encodes each distinct hint
once and gives a passage the union of its hints' token vectors: MaxSim over a union is the
max of the hints' maxima, so scoring is per hint, then per hint *set*, and every ordering of
one subset shares its set's score. Both store float16 token vectors memory-mapped
(`maxsim.py`), search exhaustively and break ties by corpus position. The model is a folder
in PyLate's layout (`colbert_model.py`); docs/retrieve.md has the rest.
"""

from __future__ import annotations

import time
from dataclasses import replace
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..formats.benchmark import Benchmark
from ..hints import hint_unit_sets
from ..io import atomic_open
from ..models import COLBERT
from ..formats import Run
from ..parameters import DEVICE
from ..registry import Option, plugin
from .base import Retriever
from .colbert_model import encode_tokens, load_colbert
from ..formats.corpus import corpus_ids, iter_corpus
from .corpus import keep_corpus_ids
from .maxsim import (CHUNK_SIZE, maxsim_scores, open_token_store, pad_queries, set_maxsim_scores, token_maxima,
                     top_k, write_token_store)

MODES = ("full", "clue")
SETS = "sets.npz"


@plugin("retriever", "colbert",
        Option("model", str, COLBERT, "ColBERT model folder in PyLate's layout, HF id, or colbert-triviahg "
               "(the one benchmarks/finetune_triviahg.py --kind colbert trains into $INFERQA_CACHE/models)"),
        Option("mode", str, "full", "full: whole passages; clue: each distinct hint once, scored per hint set",
               choices=MODES),
        Option("batch_size", int, 32, "encoding batch size", min=1),
        Option("chunk_size", int, CHUNK_SIZE, "texts encoded between checkpoints", min=1),
        Option("query_block", int, 16, "queries scored at once", min=1),
        replace(DEVICE, help="torch device (default: cpu)"),
        Option("show_progress", bool, True, "progress bars while encoding"))
class ColbertRetriever(Retriever):
    """Late interaction: exact MaxSim over memory-mapped token vectors."""

    def __init__(self, *, model: str, mode: str, batch_size: int, chunk_size: int, query_block: int,
                 device: str | None, show_progress: bool):
        super().__init__(model=str(model), mode=mode)
        self.batch_size, self.chunk_size, self.query_block = int(batch_size), int(chunk_size), int(query_block)
        self.device, self.show_progress = device, show_progress
        self._model = None

    def encoder(self):
        if self._model is None:
            self._model = load_colbert(self.options["model"], self.device)
        return self._model

    def _encode(self, texts: list[str], query: bool) -> list[np.ndarray]:
        return encode_tokens(self.encoder(), texts, query=query, batch_size=self.batch_size)

    def _build(self, bench: Benchmark, out_dir: Path) -> dict[str, Any]:
        t0 = time.perf_counter()
        ids = corpus_ids(bench)
        keep_corpus_ids(out_dir, ids, ("offsets.npy", "progress.json", SETS))
        if self.options["mode"] == "full":
            texts, n, what = (p.text for p in iter_corpus(bench)), len(ids), "passages"
        else:
            sets = hint_unit_sets(bench, ids)  # set g holds units set_units[set_ptr[g]:set_ptr[g + 1]]
            set_ptr, set_units = sets.csr()
            with atomic_open(out_dir / SETS, "wb", encoding=None) as fh:
                np.savez(fh, passage_set=sets.set_of, set_ptr=set_ptr, set_units=set_units)
            texts, n, what = iter(sets.texts), len(sets.texts), "hints"
        facts = write_token_store(out_dir, texts, n, lambda chunk: self._encode(chunk, query=False),
                                  chunk_size=self.chunk_size, desc=f"colbert: encoding {what}",
                                  show_progress=self.show_progress)
        if self.options["mode"] == "clue":
            facts["hint_sets"] = int(len(set_ptr) - 1)
        return {"passages": int(len(ids)), "encoded": what, **facts,
                "build_seconds": round(time.perf_counter() - t0, 3)}

    def _load(self, index_dir: Path) -> None:
        self._pids = np.load(index_dir / "pids.npy")
        self._tokens, self._offsets = open_token_store(index_dir)
        if self.options["mode"] == "clue":
            with np.load(index_dir / SETS) as z:
                self._passage_set, self._set_ptr, self._set_units = z["passage_set"], z["set_ptr"], z["set_units"]

    def _search(self, qids: list[str], texts: list[str], k: int) -> Run:
        run = Run()
        for s in range(0, len(qids), self.query_block):
            queries = pad_queries(self._encode(texts[s:s + self.query_block], query=True))
            idx, scores = top_k(self.passage_scores(queries), k)
            for i, qid in enumerate(qids[s:s + self.query_block]):
                run[qid] = list(zip(self._pids[idx[i]].astype("U").tolist(), scores[i].astype(float).tolist()))
        return run

    def score_passages(self, query: str, pids: Sequence[str]) -> np.ndarray:
        """MaxSim of the given passages only: their own tokens (full), or their hint sets (clue)."""
        self.load()
        rows = self._index_positions(pids, self._pids)
        queries = pad_queries(self._encode([query], query=True))
        if self.options["mode"] == "clue":
            return self.passage_scores(queries)[rows, 0].astype(np.float64)
        texts, inverse = np.unique(rows, return_inverse=True)
        spans = [np.arange(self._offsets[t], self._offsets[t + 1]) for t in texts]
        offsets = np.zeros(len(texts) + 1, dtype=np.int64)
        np.cumsum([len(sp) for sp in spans], out=offsets[1:])
        tokens = self._tokens[np.concatenate(spans)] if len(spans) else self._tokens[:0]
        return maxsim_scores(tokens, offsets, queries)[inverse.ravel(), 0].astype(np.float64)

    def passage_scores(self, queries: np.ndarray) -> np.ndarray:
        """MaxSim of every corpus passage for padded query token vectors: [passages, n_queries]."""
        if self.options["mode"] == "full":
            return maxsim_scores(self._tokens, self._offsets, queries)
        per_set = set_maxsim_scores(token_maxima(self._tokens, self._offsets, queries), self._set_ptr, self._set_units)
        return per_set[self._passage_set]
