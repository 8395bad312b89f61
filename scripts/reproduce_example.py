"""Write the offline example of `inferqa reproduce`: a tiny results/ tree in the QUIT release's
file shapes, from synthetic numbers (never the authors' data), and the cells it must give.

Every test question owns three passages (labels 2, 0, 0); each run puts the label-2 passage at
a rank chosen below (None: not retrieved) among passages of train questions (label 0). So
Hit@k is the share of ranks <= k and MRR the mean of 1/rank, which this script records in
`expected.json` from the ranks alone; `tests/test_reproduce.py` recomputes them with
`inferqa reproduce --example`.

    python scripts/reproduce_example.py   # rewrites src/inferqa/reproduce/example/
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "src" / "inferqa" / "reproduce" / "example"
QIDS = [f"Q_test_{i}" for i in range(1, 5)]
READERS = ("llama-32-1b", "gemma-3-4b", "qwen-3-8b")
OWN = ("10000_0", "01000_1", "00100_2")  # mask_perm of each question's three passages
DEPTH = 12
# file under results/ -> (table, row, JSON key of the ranking) and the label-2 passage's rank per question
RUNS = {
    "retriever/bm25/retriever.json": (("retriever/retriever", "bm25", "ctxs"), [3, None, 12, 1]),
    "retriever/bge/retriever.json": (("retriever/retriever", "bge", "ctxs"), [1, 2, 1, 5]),
    "retriever_reranker/bge/monot5-monot5-base-msmarco-10k/reranker.json":
        (("retriever_reranker/retriever_reranker:bge", "monot5-monot5-base-msmarco-10k", "reranked_ctxs"),
         [1, 1, 2, 1]),
}


def ranking(q: int, rank: int | None) -> list[str]:
    """DEPTH passage ids: train questions' passages, question q's label-2 one at `rank`."""
    ids = [f"Q_train_{q}{j:02d}_10000_0" for j in range(DEPTH)]
    if rank is not None:
        ids[rank - 1] = f"{QIDS[q]}_{OWN[0]}"
    return ids


def expected(table: str, row: str, ranks: list[int | None]) -> list[dict]:
    hit = lambda k: sum(r is not None and r <= k for r in ranks) / len(ranks)  # noqa: E731
    mrr = sum(1 / r for r in ranks if r is not None) / len(ranks)
    return [{"table": table, "row": row, "column": c, "value": round(v, 4)}
            for c, v in (("hit@1", hit(1)), ("hit@10", hit(10)), ("mrr@100", mrr))]


def write(out: Path = OUT) -> None:
    results = out / "results"
    if results.exists():
        shutil.rmtree(results)
    files = {"index/test/retriever.jsonl": [
        {"question": f"Synthetic question {qid}?", "answers": [f"answer {n}"],
         "contexts": [{"id": f"{qid}_{mp}", "text": f"synthetic passage {mp}", "label": 2 if j == 0 else 0,
                       "rag_answers": {m: (f"answer {n}" if j == 0 else "none") for m in READERS}}
                      for j, mp in enumerate(OWN)]}
        for n, qid in enumerate(QIDS)]}
    cells = []
    for rel, ((table, row, key), ranks) in RUNS.items():
        files[rel] = [{key: [{"id": pid, "score": float(DEPTH - r), "has_answer": False, "text": "synthetic"}
                             for r, pid in enumerate(ranking(q, rank))]} for q, rank in enumerate(ranks)]
        cells += expected(table, row, ranks)
    for rel, obj in files.items():
        path = results / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(o) + "\n" for o in obj) if rel.endswith(".jsonl") else json.dumps(obj)
        path.write_text(text, encoding="utf-8")
    (out / "expected.json").write_text(json.dumps(cells, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
