"""The paper's figures (WWW 2026, "Inferential Question Answering"), as fractions, keyed by
the table cell that reproduces them: (table, first cell, column).

Only cells the paper names without doubt are listed. Left out: figures whose MonoT5 size,
fine-tuning positives, union strategy or k the paper does not give (BGE + MonoT5, the
oracle-reranker nDCG rows, EM of BGE alone and of the oracle retriever + MonoT5).
"""

from __future__ import annotations

PUBLISHED: dict[tuple[str, str, str], float | int] = {
    ("retriever/retriever", "bm25", "hit@1"): 0.0,
    ("retriever/retriever", "bm25", "hit@10"): 0.0025,
    ("retriever/retriever", "bm25", "hit@100"): 0.0057,
    ("retriever/retriever", "bm25", "mrr@100"): 0.0004,
    ("retriever/retriever", "bge", "hit@1"): 0.1285,
    ("retriever/retriever", "bge", "hit@100"): 0.3023,
    ("baselines_retriever/retriever-msmarco", "bm25", "hit@100"): 0.6308,
    ("baselines_retriever/retriever-msmarco", "bge", "hit@100"): 0.7193,
    ("baselines_retriever/retriever-wiki", "bm25", "hit@100"): 0.8825,
    ("baselines_retriever/retriever-wiki", "bge", "hit@100"): 0.9433,
    ("rag/rag", "1 and 2", "EM of llama-32-1b"): 0.4068,
    ("rag/rag", "1 and 2", "EM of gemma-3-4b"): 0.9016,
    ("rag/rag", "1 and 2", "EM of qwen-3-8b"): 0.6250,
    ("statistics/analyse_labels", "Our dataset", "count"): 289660,
}
