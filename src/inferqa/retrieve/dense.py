"""Dense retrieval: a sentence-transformers bi-encoder, float32 embeddings on disk
(memory-mapped), exact FAISS inner-product search by default, HNSW as an option.

Pooling and normalisation come from the model's own configuration; DPR/E5/BGE-style
instructions go in `query_prefix` / `passage_prefix`. Encoding runs in chunks whose rows are
flushed to `embeddings.partial.npy` with the count in `progress.json`, so an interrupted
build resumes where it stopped; finished embeddings are reused by later builds (an HNSW
graph is added beside them).
"""

from __future__ import annotations

import itertools
import time
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from ..formats.benchmark import Benchmark
from ..errors import InputError
from ..io import read_json, temp_beside, write_json
from ..defaults import DEFAULT_ENCODER
from ..models import MINILM, check_model_kind, load_sentence_transformer
from ..formats import Run
from ..arrays import npy_layout, read_npy_rows, write_npy_rows
from .base import Retriever
from ..formats.corpus import corpus_ids, iter_corpus
from .corpus import keep_corpus_ids
from ..parameters import DEVICE
from ..registry import Option, plugin

INDEX_TYPES = ("flat", "hnsw")
EMBEDDINGS = "embeddings.npy"
PARTIAL = "embeddings.partial.npy"
PROGRESS = "progress.json"


load_encoder = load_sentence_transformer  # the name this module has exported it by


@plugin("retriever", "dense",
        Option("model", str, DEFAULT_ENCODER, "sentence-transformers model: HF id, local folder or minilm (bundled)"),
        Option("query_model", str, None, "separate query encoder (DPR); passages and the index use `model`"),
        Option("query_prefix", str, "", "text put before each query (e.g. 'query: ')"),
        Option("passage_prefix", str, "", "text put before each passage (e.g. 'passage: ')"),
        Option("batch_size", int, 64, "encoding batch size", min=1),
        Option("index_type", str, "flat", "flat: exact inner product; hnsw: FAISS HNSW graph", choices=INDEX_TYPES),
        Option("chunk_size", int, 8192, "passages encoded between checkpoints", min=1),
        Option("hnsw_m", int, 32, "HNSW neighbours per node", min=2),
        Option("ef_search", int, 256, "HNSW search breadth", min=1),
        Option("search_block", int, 262144, "passages scored per block in flat search", min=1),
        DEVICE,
        Option("show_progress", bool, True, "progress bars while encoding"))
class DenseRetriever(Retriever):
    """sentence-transformers bi-encoder, embeddings on disk, FAISS flat or HNSW search."""

    parallel_index = True  # passages can be encoded on Ray actors (index(executor=...))

    def __init__(self, *, model: str, query_model: str | None, query_prefix: str, passage_prefix: str,
                 batch_size: int, index_type: str, chunk_size: int, hnsw_m: int, ef_search: int,
                 search_block: int, device: str | None, show_progress: bool):
        for ref, name in ((model, "model"), (query_model or MINILM, "query_model")):
            if ref != MINILM:
                check_model_kind(ref, "dense", field=name)
        super().__init__(model=model, query_prefix=query_prefix, passage_prefix=passage_prefix,
                         index_type=index_type, hnsw_m=int(hnsw_m))
        self.batch_size, self.chunk_size, self.ef_search = int(batch_size), int(chunk_size), int(ef_search)
        self.search_block, self.device, self.show_progress = int(search_block), device, show_progress
        self.query_model = query_model or None  # DPR-style; passages (the index) always use `model`
        self._model = self._query_model = None

    def index_options(self) -> dict[str, Any]:
        # Only what shapes the embeddings: flat and HNSW share one directory.
        return {"model": self.options["model"], "passage_prefix": self.options["passage_prefix"]}

    @property
    def hnsw_file(self) -> str:
        return f"hnsw-m{self.options['hnsw_m']}.faiss"

    def encoder(self):
        if self._model is None:
            self._model = load_sentence_transformer(self.options["model"], self.device)
        return self._model

    def query_encoder(self):
        if self.query_model is None:
            return self.encoder()
        if self._query_model is None:
            self._query_model = load_sentence_transformer(self.query_model, self.device)
        return self._query_model

    def encode(self, texts: list[str], prefix: str, encoder=None) -> np.ndarray:
        vecs = (encoder or self.encoder()).encode([prefix + t for t in texts], batch_size=self.batch_size,
                                                  convert_to_numpy=True, show_progress_bar=False)
        return np.ascontiguousarray(vecs, dtype=np.float32)

    def _build(self, bench: Benchmark, out_dir: Path) -> dict[str, Any]:
        t0 = time.perf_counter()
        ids = corpus_ids(bench)
        keep_corpus_ids(out_dir, ids, (EMBEDDINGS, PARTIAL, PROGRESS, self.hnsw_file))
        if not (out_dir / EMBEDDINGS).exists():
            self._encode_corpus(bench, out_dir, len(ids))
        if self.options["index_type"] == "hnsw" and not (out_dir / self.hnsw_file).exists():
            self._build_hnsw(out_dir)
        emb = np.load(out_dir / EMBEDDINGS, mmap_mode="r")
        return {"passages": int(len(ids)), "dim": int(emb.shape[1]),
                "build_seconds": round(time.perf_counter() - t0, 3)}

    def _encode_corpus(self, bench: Benchmark, out_dir: Path, n: int) -> None:
        from ..progress import counter

        enc = self.encoder()
        dim = (getattr(enc, "get_embedding_dimension", None) or enc.get_sentence_embedding_dimension)()
        partial, progress = out_dir / PARTIAL, out_dir / PROGRESS
        state = read_json(progress) if progress.exists() and partial.exists() else None
        if state is None or state.get("n") != n or state.get("dim") != dim:
            # writes the .npy header and sizes the file; the map is dropped at once, since rows are
            # written with file I/O (a memory map would keep them resident)
            np.lib.format.open_memmap(partial, mode="w+", dtype=np.float32, shape=(n, dim))
            done = 0
        else:
            done = int(state["done"])
        layout = npy_layout(partial)
        passages = itertools.islice(iter_corpus(bench), done, None)
        with counter(n, "encoding passages", "psg", self.show_progress, initial=done) as bar:
            for vecs in self._encoded_chunks(passages):
                if done + len(vecs) > n:
                    raise InputError("corpus grew while encoding", file=bench.path)
                write_npy_rows(partial, done, vecs, layout)
                done += len(vecs)
                write_json(progress, {"n": n, "dim": dim, "done": done})
                bar.update(len(vecs))
        if done != n:
            raise InputError("corpus ended early (changed while encoding?)", file=bench.path)
        partial.replace(out_dir / EMBEDDINGS)
        progress.unlink()

    def _encoded_chunks(self, passages):
        """Embeddings of `passages` in chunks of `chunk_size` rows, encoded here or on Ray."""
        prefix = self.options["passage_prefix"]
        if self.executor is None or self.executor.is_local:
            while chunk := [p.text for p in itertools.islice(passages, self.chunk_size)]:
                yield self.encode(chunk, prefix)
            return
        from .encoding import embedding_worker

        rows = self.executor.imap((prefix + p.text for p in passages),
                                  embedding_worker(self.options["model"], normalize=False, device=self.device),
                                  batch_size=self.batch_size, progress=False)
        while chunk := list(itertools.islice(rows, self.chunk_size)):
            yield np.stack(chunk).astype(np.float32)

    def _build_hnsw(self, out_dir: Path) -> None:
        import faiss

        emb = np.load(out_dir / EMBEDDINGS, mmap_mode="r")
        index = faiss.IndexHNSWFlat(emb.shape[1], self.options["hnsw_m"], faiss.METRIC_INNER_PRODUCT)
        for s in range(0, len(emb), self.search_block):
            index.add(np.ascontiguousarray(emb[s:s + self.search_block]))
        with temp_beside(out_dir / self.hnsw_file) as tmp:
            faiss.write_index(index, str(tmp))
            tmp.replace(out_dir / self.hnsw_file)

    def is_indexed(self) -> bool:
        files = [EMBEDDINGS, *([self.hnsw_file] if self.options["index_type"] == "hnsw" else [])]
        return super().is_indexed() and all((self.index_dir / f).exists() for f in files)

    def _load(self, index_dir: Path) -> None:
        self._pids = np.load(index_dir / "pids.npy", mmap_mode="r")
        self._emb = np.load(index_dir / EMBEDDINGS, mmap_mode="r")
        self._emb_path, self._emb_layout = index_dir / EMBEDDINGS, npy_layout(index_dir / EMBEDDINGS)
        self._hnsw = None
        if self.options["index_type"] == "hnsw":
            import faiss

            self._hnsw = faiss.read_index(str(index_dir / self.hnsw_file))

    def _search(self, qids: list[str], texts: list[str], k: int) -> Run:
        q = self.encode(texts, self.options["query_prefix"], self.query_encoder())
        k = min(k, len(self._pids))
        scores, idx = self._search_hnsw(q, k) if self._hnsw is not None else self._search_flat(q, k)
        run = Run()
        for i, qid in enumerate(qids):
            keep = idx[i] >= 0
            s, j = scores[i][keep], idx[i][keep]
            order = np.lexsort((j, -s))  # score descending, corpus position among equals
            run[qid] = list(zip(self._pids[j[order]].astype("U").tolist(), s[order].astype(float).tolist()))
        return run

    def score_passages(self, query: str, pids: Sequence[str]) -> np.ndarray:
        """Inner products with the stored embeddings (what flat and HNSW search both return)."""
        self.load()
        rows = self._index_positions(pids, self._pids)
        q = self.encode([query], self.options["query_prefix"], self.query_encoder())[0]
        order = np.argsort(rows, kind="stable")  # the memory map read in file order
        scores = np.empty(len(rows), dtype=np.float32)
        scores[order] = np.asarray(self._emb[rows[order]], dtype=np.float32) @ q
        return scores.astype(np.float64)

    def _search_hnsw(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        self._hnsw.hnsw.efSearch = max(self.ef_search, k)
        return self._hnsw.search(q, k)

    def _search_flat(self, q: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        """Exact inner product, block by block over the memory-mapped embeddings."""
        import faiss

        best_s = np.full((len(q), 0), -np.inf, dtype=np.float32)
        best_i = np.zeros((len(q), 0), dtype=np.int64)
        for start in range(0, len(self._emb), self.search_block):
            # file reads, not the memory map: a mapped pass would leave all 3.7 GB resident
            block = read_npy_rows(self._emb_path, start, start + self.search_block, self._emb_layout)
            index = faiss.IndexFlatIP(block.shape[1])
            index.add(block)
            s, i = index.search(q, min(k, len(block)))
            best_s = np.concatenate([best_s, s], axis=1)
            best_i = np.concatenate([best_i, i + start], axis=1)
            if best_s.shape[1] > k:
                sel = np.argsort(-best_s, axis=1, kind="stable")[:, :k]
                best_s = np.take_along_axis(best_s, sel, axis=1)
                best_i = np.take_along_axis(best_i, sel, axis=1)
        return best_s, best_i
