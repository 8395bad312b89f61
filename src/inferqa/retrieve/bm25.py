"""BM25 (Lucene variant, bm25s's tokenizer and stemmer) with compositional dedup.

A QUIT corpus holds every ordering of every hint subset of a question. Bag-of-words scores
ignore order, so with `dedup=True` each distinct (question, subset) group is indexed once,
its term counts composed from the hints' counts, and its multiplicity (the number of its
orderings in the corpus, |subset|! for a full corpus) counted in N, the document frequencies
and the average length. Every score then equals plain BM25 over the expanded corpus; results
are expanded back to all orderings. `dedup=False` indexes the expanded corpus with bm25s.

Tie order (both modes): score descending, then the corpus position of the passage's group's
first passage, then corpus position.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Iterator, Mapping, Sequence

import numpy as np

from ..formats.benchmark import Benchmark
from ..errors import InputError
from ..hints import Groups, group_by_subset, group_first_position
from ..io import atomic_open, read_json
from ..formats import Run
from .base import Retriever
from ..formats.corpus import corpus_ids, iter_corpus
from .ranking import save_array, top_groups, top_k_positions
from ..registry import Option, plugin

# The index arrays, saved with np.save and memory-mapped on load.
_DEDUP_ARRAYS = ("term_ptr", "term_docs", "term_weights", "pids", "group_ptr")
_PLAIN_ARRAYS = ("pids", "group_first")


@plugin("retriever", "bm25",
        Option("k1", float, 1.5, "term-frequency saturation", min=0),
        Option("b", float, 0.75, "length normalisation", min=0, max=1),
        Option("stemmer", str, "english", "PyStemmer language, or null for none", nullable=True),
        Option("stopwords", str, "english", "bm25s stop-word list, or null for none", nullable=True),
        Option("dedup", bool, True, "index each hint subset once (false: plain bm25s on the expanded corpus)"),
        Option("show_progress", bool, True, "progress bars while indexing"))
class BM25Retriever(Retriever):
    """BM25 (Lucene variant) with compositional dedup of hint subsets."""

    def __init__(self, *, k1: float, b: float, stemmer: str | None, stopwords: str | None, dedup: bool,
                 show_progress: bool):
        super().__init__(k1=float(k1), b=float(b), stemmer=stemmer or None, stopwords=stopwords or None,
                         dedup=bool(dedup))
        self.show_progress = show_progress
        self._stemmer = None

    def _stem(self):
        if self._stemmer is None and self.options["stemmer"]:
            import Stemmer

            try:
                self._stemmer = Stemmer.Stemmer(self.options["stemmer"])
            except KeyError:
                raise InputError(f"unknown stemmer language {self.options['stemmer']!r}",
                                 field="stemmer") from None
        return self._stemmer

    def tokenize(self, texts: list[str], allow_empty: bool = False) -> list[list[str]]:
        import bm25s

        return bm25s.tokenize(texts, stopwords=self.options["stopwords"] or [], stemmer=self._stem(),
                              return_ids=False, show_progress=False, allow_empty=allow_empty)

    def _build(self, bench: Benchmark, out_dir: Path) -> dict[str, Any]:
        t0 = time.perf_counter()
        ids = corpus_ids(bench)
        build = self._build_dedup if self.options["dedup"] else self._build_plain
        facts = build(bench, ids, out_dir)
        return {**facts, "passages": int(len(ids)), "build_seconds": round(time.perf_counter() - t0, 3)}

    def _build_dedup(self, bench: Benchmark, ids: np.ndarray, out: Path) -> dict[str, Any]:
        import scipy.sparse as sp

        corpus = bench.path / "corpus.jsonl"
        groups: Groups = group_by_subset(ids, corpus)
        member_rows, member_cols, hint_texts = self._subset_members(bench, groups, corpus)
        tokens = self.tokenize(hint_texts)
        vocab: dict[str, int] = {}
        h_cols = [vocab.setdefault(t, len(vocab)) for toks in tokens for t in toks]
        h_rows = np.repeat(np.arange(len(tokens)), [len(toks) for toks in tokens])
        n_groups, n_hints, n_terms = len(groups.keys), len(hint_texts), max(len(vocab), 1)
        # Counts are small integers: float32 holds them exactly and halves the memory.
        hint_tf = sp.csr_matrix((np.ones(len(h_rows), np.float32), (h_rows, h_cols)), shape=(n_hints, n_terms))
        hint_tf.sum_duplicates()
        member = sp.csr_matrix((np.ones(len(member_rows), np.float32), (member_rows, member_cols)),
                               shape=(n_groups, n_hints))
        group_tf = (member @ hint_tf).tocsr()  # subset term counts = sum of its hints' counts
        del member, hint_tf
        group_tf.sort_indices()
        mult = groups.multiplicity.astype(np.float64)
        n_docs = float(mult.sum())
        doc_len = np.asarray(group_tf.sum(axis=1, dtype=np.float64)).ravel()
        avg_len = float((mult * doc_len).sum() / n_docs)
        nnz_per_group = np.diff(group_tf.indptr)
        df = np.bincount(group_tf.indices, weights=np.repeat(mult, nnz_per_group), minlength=n_terms)
        idf = np.log(1.0 + (n_docs - df + 0.5) / (df + 0.5))
        k1, b = self.options["k1"], self.options["b"]
        # w = idf * tf / (tf + k1 * (1 - b + b * len / avg_len)), in place over the nonzeros.
        tf = group_tf.data
        w = np.repeat((k1 * ((1 - b) + b * doc_len / avg_len)).astype(np.float32), nnz_per_group)
        w += tf
        np.divide(tf, w, out=w)
        w *= idf.astype(np.float32)[group_tf.indices]
        group_tf.data = w
        by_term = group_tf.tocsc()
        del group_tf, w, tf
        by_term.sort_indices()
        save_array(out, "term_ptr", by_term.indptr.astype(np.int64))
        save_array(out, "term_docs", by_term.indices.astype(np.int32))
        save_array(out, "term_weights", by_term.data.astype(np.float32))
        del by_term
        save_array(out, "pids", groups.pids)
        save_array(out, "group_ptr", groups.ptr)
        with atomic_open(out / "vocab.json") as fh:
            json.dump(vocab, fh, ensure_ascii=False)
        return {"groups": n_groups, "hints": n_hints, "terms": len(vocab), "avg_len": avg_len}

    @staticmethod
    def _subset_members(bench: Benchmark, groups: Groups, corpus: Path
                        ) -> tuple[np.ndarray, np.ndarray, list[str]]:
        """(group, hint row) pairs of the membership matrix, and the text of each hint row.
        `groups.keys` are `b"qid_mask"`; a group's hints are the perm digits of its first passage
        (so the mask's bit order never matters); each question's hints become rows once, in key order."""
        keys = groups.keys
        n, width = len(keys), keys.dtype.itemsize
        mat = keys.view(np.uint8).reshape(n, width)
        pos = np.arange(width)
        under = np.where(mat == ord("_"), pos, -1).max(axis=1)
        qid_keys = np.where(pos < under[:, None], mat, 0).astype(np.uint8).view(f"S{width}").ravel()
        qids, first, q_of = np.unique(qid_keys, return_index=True, return_inverse=True)
        q_of = q_of.ravel()
        heads = groups.pids[groups.ptr[:-1]]
        p_width = heads.dtype.itemsize
        pmat = heads.view(np.uint8).reshape(n, p_width)
        p_pos = np.arange(p_width)
        p_under = np.where(pmat == ord("_"), p_pos, -1).max(axis=1)
        sub_len = np.count_nonzero(pmat, axis=1) - p_under - 1
        cols = np.arange(max(int(sub_len.max()), 1))
        valid = cols < sub_len[:, None]
        digits = pmat[np.arange(n)[:, None], np.minimum(p_under[:, None] + 1 + cols, p_width - 1)].astype(np.int64) - 48
        ok = (under > 0) & np.where(valid, (digits >= 0) & (digits <= 9), True).all(axis=1)
        digits = np.sort(np.where(valid, digits, 99), axis=1)  # padding sorts last
        ok &= np.where(valid[:, 1:], digits[:, 1:] > digits[:, :-1], True).all(axis=1)  # distinct
        questions = bench.questions
        n_hints = np.zeros(len(qids), dtype=np.int64)
        offset = np.zeros(len(qids), dtype=np.int64)
        texts: list[str] = []
        for j in np.argsort(first).tolist():  # questions in corpus order
            q = questions.get(qids[j].decode())
            if q is None:
                raise InputError(f"corpus passage of unknown question {qids[j].decode()!r}", file=corpus,
                                 field="id")
            offset[j], n_hints[j] = len(texts), len(q.hints)
            texts.extend(h.text for h in q.hints)
        ok &= np.where(valid, digits < n_hints[q_of][:, None], True).all(axis=1)
        if not ok.all():
            bad = heads[np.flatnonzero(~ok)[0]].decode()
            raise InputError(f"passage {bad!r}: perm is not distinct digits of the question's kept hints",
                             file=corpus, field="id")
        rows = np.repeat(np.arange(n), sub_len)
        return rows, (offset[q_of][:, None] + digits)[valid], texts

    def _build_plain(self, bench: Benchmark, ids: np.ndarray, out: Path) -> dict[str, Any]:
        import bm25s

        texts = []
        for i, p in enumerate(iter_corpus(bench)):
            if p.id.encode() != ids[i]:
                raise InputError("corpus changed while indexing", file=bench.path / "corpus.jsonl")
            texts.append(p.text)
        model = bm25s.BM25(k1=self.options["k1"], b=self.options["b"], method="lucene")
        model.index(self.tokenize(texts, allow_empty=True), show_progress=self.show_progress)
        del texts
        model.save(str(out / "bm25s"))
        save_array(out, "pids", ids)
        save_array(out, "group_first", group_first_position(ids))
        return {"terms": len(model.vocab_dict)}

    def _load(self, index_dir: Path) -> None:
        names = _DEDUP_ARRAYS if self.options["dedup"] else _PLAIN_ARRAYS
        self._arr = {n: np.load(index_dir / f"{n}.npy", mmap_mode="r") for n in names}
        if self.options["dedup"]:
            self._vocab = read_json(index_dir / "vocab.json")
            for name in ("group_ptr", "term_ptr", "term_docs", "term_weights"):  # small: keep in memory
                self._arr[name] = np.array(self._arr[name])
        else:
            import bm25s

            self._model = bm25s.BM25.load(str(index_dir / "bm25s"), mmap=True)
            self._vocab = self._model.vocab_dict
            gf = np.asarray(self._arr["group_first"])
            # Groups contiguous in the corpus (as `inferqa build` writes them): index order breaks ties.
            self._tie_key = None if bool(np.all(np.diff(gf) >= 0)) else gf

    def _query_term_ids(self, texts: list[str]) -> list[np.ndarray]:
        vocab = self._vocab
        return [np.array([vocab[t] for t in toks if t in vocab], dtype=np.int64)
                for toks in self.tokenize(texts, allow_empty=True)]

    def _search(self, qids: list[str], texts: list[str], k: int) -> Run:
        run = Run()
        for qid, pids, scores in self._iter_arrays(qids, texts, k):
            run[qid] = list(zip(pids.astype("U").tolist(), scores.tolist()))
        return run

    def search_arrays(self, queries: Mapping[str, str], k: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
        """Like `search`, one question at a time, as (qid, passage ids `S` array, float32 scores):
        no Python object per passage, for large k or many queries written straight to disk."""
        if k < 1:
            raise InputError(f"k must be at least 1 (got {k})", field="k")
        self.load()
        qids = list(queries)
        return self._iter_arrays(qids, [queries[q] for q in qids], k)

    def _iter_arrays(self, qids: list[str], texts: list[str], k: int) -> Iterator[tuple[str, np.ndarray, np.ndarray]]:
        from ..progress import counter

        one = self._search_dedup if self.options["dedup"] else self._search_plain
        with counter(len(qids), "bm25 search", "question", self.show_progress) as bar:
            for qid, terms in zip(qids, self._query_term_ids(texts)):
                pids, scores = one(terms, k)
                bar.update(1)  # before the yield: the caller may stop at the last question
                yield qid, pids, scores

    def score_passages(self, query: str, pids: Sequence[str]) -> np.ndarray:
        self.load()
        rows = self._index_positions(pids, self._arr["pids"])
        terms = self._query_term_ids([query])[0]
        if not self.options["dedup"]:
            return self._model.get_scores_from_ids(terms.astype(np.int32).tolist())[rows].astype(np.float64)
        group = np.searchsorted(self._arr["group_ptr"], rows, side="right") - 1
        return self.group_scores(terms)[group].astype(np.float64)

    def group_scores(self, terms: np.ndarray) -> np.ndarray:
        """BM25 score of every (question, subset) group for a query's term ids (dedup index)."""
        a = self._arr
        scores = np.zeros(len(a["group_ptr"]) - 1, dtype=np.float32)
        ptr, docs, w = a["term_ptr"], a["term_docs"], a["term_weights"]
        for t in terms:
            s, e = ptr[t], ptr[t + 1]
            scores[docs[s:e]] += w[s:e]  # one entry per group within a term: no duplicates
        return scores

    def _search_dedup(self, terms: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        a = self._arr
        rows, scores = top_groups(self.group_scores(terms), a["group_ptr"], k)
        return a["pids"][rows], scores

    def _search_plain(self, terms: np.ndarray, k: int) -> tuple[np.ndarray, np.ndarray]:
        scores = self._model.get_scores_from_ids(terms.astype(np.int32).tolist())
        top = top_k_positions(scores, k, self._tie_key)
        return self._arr["pids"][top], scores[top]
