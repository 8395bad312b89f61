"""Write the offline example of `inferqa reproduce`: a tiny results/ tree in the QUIT release's
file shapes, from synthetic numbers (never the authors' data), and the cells it must give.

Every question has five hints, so 325 passages (every ordering of every non-empty subset);
`results/dataset/{train,dev,test}.json` hold them in the release's shape (ids, hints, every
model's stored answer per ordering), so a benchmark can be built from the tree offline. The
labellers answer a test question right from its first hint alone (10000_0: label 2) and never
otherwise (label 1). Each run puts that passage at a rank chosen below (None: not retrieved)
among passages of the train question (label 0 for the test question). So Hit@k is the share of
ranks <= k and MRR the mean of 1/rank, which this script records in `expected.json` from the
ranks alone; `tests/test_reproduce.py` recomputes them with `inferqa reproduce --example`
and from a benchmark built from `results/dataset/`.

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
LABELLERS = ("gemma-3-1b", "qwen-3-4b", "llama-31-8b")
OWN = ("10000_0", "01000_1", "00100_2")  # mask_perm of the passages index/test/retriever.jsonl lists
HINTS = 5
DEPTH = 12
# file under results/ -> (table, row, JSON key of the ranking) and the label-2 passage's rank per question
RUNS = {
    "retriever/bm25/retriever.json": (("retriever/retriever", "bm25", "ctxs"), [3, None, 12, 1]),
    "retriever/bge/retriever.json": (("retriever/retriever", "bge", "ctxs"), [1, 2, 1, 5]),
    "retriever_reranker/bge/monot5-monot5-base-msmarco-10k/reranker.json":
        (("retriever_reranker/retriever_reranker:bge", "monot5-monot5-base-msmarco-10k", "reranked_ctxs"),
         [1, 1, 2, 1]),
}


DISTRACTORS = [f"Q_train_1_{m}_{p}" for m, p in (("10000", "0"), ("01000", "1"), ("00100", "2"), ("00010", "3"),
                                                  ("00001", "4"), ("11000", "01"), ("11000", "10"), ("10100", "02"),
                                                  ("10100", "20"), ("01100", "12"), ("01100", "21"), ("00011", "34"))]


def ranking(q: int, rank: int | None) -> list[str]:
    """DEPTH passage ids: the train question's passages, question q's label-2 one at `rank`."""
    ids = list(DISTRACTORS[:DEPTH])
    if rank is not None:
        ids[rank - 1] = f"{QIDS[q]}_{OWN[0]}"
    return ids


def hint_text(qid: str, i: int) -> str:
    return f"synthetic hint {i} of {qid}"


def subsets(qid: str, right: str | None) -> dict:
    """{mask: {perm: {model: answer}}} over every ordering of every non-empty hint subset;
    `right`: the mask_perm whose every model answers correctly (None: none)."""
    from itertools import permutations

    out: dict = {}
    for size in range(1, HINTS + 1):
        for perm in permutations(range(HINTS), size):
            mask = "".join("1" if i in perm else "0" for i in range(5))
            digits = "".join(map(str, perm))
            answer = "answer" if f"{mask}_{digits}" == right else "none"
            out.setdefault(mask, {})[digits] = {m: answer for m in (*LABELLERS, *READERS)}
    return out


def question(qid: str, answer: str, right: str | None) -> dict:
    return {"id": qid, "question": f"Synthetic question {qid}?", "answers": [answer],
            "hints": [{"hint": hint_text(qid, i)} for i in range(HINTS)],
            "subsets": {m: {p: {k: (answer if v == "answer" else v) for k, v in ans.items()}
                            for p, ans in perms.items()} for m, perms in subsets(qid, right).items()}}


def passage_text(qid: str, mask_perm: str) -> str:
    return " ".join(hint_text(qid, int(c)) for c in mask_perm.split("_")[1])


def dataset() -> dict[str, list[dict]]:
    """The three splits: the test questions, the train questions the runs rank, one dev question."""
    return {"test": [question(qid, f"answer {n}", OWN[0]) for n, qid in enumerate(QIDS)],
            "train": [question("Q_train_1", "train answer", None)],
            "dev": [question("Q_dev_1", "dev answer", None)]}


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
         "contexts": [{"id": f"{qid}_{mp}", "text": passage_text(qid, mp), "label": 2 if j == 0 else 1,
                       "rag_answers": {m: (f"answer {n}" if j == 0 else "none") for m in READERS}}
                      for j, mp in enumerate(OWN)]}
        for n, qid in enumerate(QIDS)]}
    cells = []
    for rel, ((table, row, key), ranks) in RUNS.items():
        files[rel] = [{key: [{"id": pid, "score": float(DEPTH - r), "has_answer": False, "text": "synthetic"}
                             for r, pid in enumerate(ranking(q, rank))]} for q, rank in enumerate(ranks)]
        cells += expected(table, row, ranks)
    files.update({f"dataset/{split}.json": questions for split, questions in dataset().items()})
    for rel, obj in files.items():
        path = results / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        text = "".join(json.dumps(o) + "\n" for o in obj) if rel.endswith(".jsonl") else json.dumps(obj)
        path.write_text(text, encoding="utf-8")
    (out / "expected.json").write_text(json.dumps(cells, indent=1) + "\n", encoding="utf-8")


if __name__ == "__main__":
    write(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
