"""Slot for late-interaction retrieval (ColBERT v2 via PyLate); not implemented.

No ColBERT weights are reachable offline here, so there is no honest way to test one. To add
it, write `colbert.py` in this package:

    @register("colbert")
    class ColbertRetriever(Retriever):
        # options: model (HF id or path), doc_maxlen, query_maxlen, batch_size
        def index_options(self): ...   # model and lengths shape the index
        def _build(self, bench, out_dir): ...   # pylate.models.ColBERT + pylate.indexes.PLAID,
                                                # passages from bench.iter_corpus() in chunks
        def _load(self, index_dir): ...
        def _search(self, qids, texts, k): ...  # pylate.retrieve.ColBERT; Run with ties by
                                                # corpus position, like the dense retriever

`get_retriever("colbert")` then finds it with no other change; `inferqa index/retrieve
--retriever colbert --opt model=...` pass its options.
"""
