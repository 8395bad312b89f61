"""`inferqa reproduce` on a hand-written miniature `results/` tree (our own ids and answers,
the release's file shapes, every file zstd-compressed as `.zsd`), against hand-worked
values; `inferqa download` offline; the README's "Reproducing the paper" blocks, run.

The miniature test split: Q_test_1 (gold "Paris") owns passages a b c d, Q_test_2 (gold
"Rome"/"Roma") owns e f g; x1 x2 x3 are passages of a train question (label 0 for both).

    passage  id                   label  hints  llama-32-1b  gemma-3-4b  qwen-3-8b
    a        Q_test_1_10000_0     2      1      Paris        Paris       NO ANSWER
    b        Q_test_1_01000_1     1      1      Lyon         Paris       Paris
    c        Q_test_1_11000_01    1      2      " Paris"     Paris       Lyon
    d        Q_test_1_11100_210   2      3      Paris        Paris       Paris
    e        Q_test_2_10000_0     1      1      Milan        Roma        Rome
    f        Q_test_2_00100_2     1      1      Rome         Milan       Milan
    g        Q_test_2_10100_20    1      2      rome         Rome        NO ANSWER

Stored answers count as stored: " Paris" and "rome" are wrong.
"""

from __future__ import annotations

import json
import math
import os
import re
import subprocess
import sys
from itertools import permutations
from pathlib import Path

import pytest

from conftest import REPO, run_cli

zstandard = pytest.importorskip("zstandard")

Q1, Q2 = "Q_test_1", "Q_test_2"
ID = {"a": f"{Q1}_10000_0", "b": f"{Q1}_01000_1", "c": f"{Q1}_11000_01", "d": f"{Q1}_11100_210",
      "e": f"{Q2}_10000_0", "f": f"{Q2}_00100_2", "g": f"{Q2}_10100_20",
      "x1": "Q_train_1_10000_0", "x2": "Q_train_1_01000_1", "x3": "Q_train_1_00100_2"}
LABEL = {"a": 2, "b": 1, "c": 1, "d": 2, "e": 1, "f": 1, "g": 1}
READERS = ("llama-32-1b", "gemma-3-4b", "qwen-3-8b")
STORED = {"a": ("Paris", "Paris", "NO ANSWER"), "b": ("Lyon", "Paris", "Paris"), "c": (" Paris", "Paris", "Lyon"),
          "d": ("Paris", "Paris", "Paris"), "e": ("Milan", "Roma", "Rome"), "f": ("Rome", "Milan", "Milan"),
          "g": ("rome", "Rome", "NO ANSWER")}
GOLD = {Q1: ["Paris"], Q2: ["Rome", "Roma"], "Q_train_1": ["Oslo"], "Q_dev_1": ["Bern"]}
OWN = {Q1: "abcd", Q2: "efg"}
METHODS = ("un_1", "uf_1", "un_3", "uf_3", "un_5", "uf_5")
# baselines/baseline.json: the comparison corpus's passages of each question, with labels
BASE = [{"m1": 2, "m2": 0, "m3": 1}, {"m4": 0, "m5": 0}]
# passage texts in the runs: two words ("passage x") unless given here; split(" ") counts
# the empty word between a double space, as the authors' statistics scripts do
TEXT = {"a": "first  clue", "m1": "one two three four"}

L2 = 1 / math.log2(3)  # discount at rank 2 (rank 1: 1, rank 3: 1/2, rank 4: 1/log2(5))
L4 = 1 / math.log2(5)
IDCG_Q1 = 3 + 3 * L2 + 0.5 + L4  # labels 2 2 1 1 -> gains 3 3 1 1
IDCG_Q2 = 1 + L2 + 0.5  # labels 1 1 1


def write_zsd(path: Path, obj) -> None:
    """`obj` as the hub stores it: JSON (a list of lines for .jsonl), zstd-compressed, .zsd."""
    text = "".join(json.dumps(o) + "\n" for o in obj) if path.name.endswith(".jsonl") else json.dumps(obj)
    target = path.with_suffix(".zsd")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(zstandard.ZstdCompressor().compress(text.encode("utf-8")))


def run_file(*lists, key="ctxs", extra=None):
    out = []
    for i, names in enumerate(lists):
        rec = {key: [{"id": ID.get(n, n), "score": float(-r), "has_answer": False,
                      "text": TEXT.get(n, f"passage {n}")} for r, n in enumerate(names)]}
        if extra:
            rec["ctxs"] = [{"id": ID.get(n, n), "text": TEXT.get(n, f"passage {n}")} for n in extra[i]]
        out.append(rec)
    return out


def rag_file(un_1: dict[str, tuple[str, str]]):
    """A reader output: un_1 answers (Q1, Q2) per reader as given, every other method wrong."""
    out = []
    for n, qid in enumerate((Q1, Q2)):
        predicted = {m: {f"{qid}_{u}": (un_1[m][n] if u == "un_1" else "Nowhere") for u in METHODS} for m in READERS}
        out.append({"id": qid, "question": f"Where is {qid}?", "answers": GOLD[qid], "predicted_answer": predicted})
    return out


def dataset_record(qid: str) -> dict:
    """A question of results/dataset/{split}: five hints, every ordering of every subset with
    the six models' answers; a..g answered as in the table above, the labeller gemma-3-1b
    right exactly where the label is 2, every other answer wrong."""
    name_of = {pid: name for name, pid in ID.items() if name in STORED}
    subsets: dict = {}
    for size in range(1, 6):
        for perm in permutations(range(5), size):
            mask, order = "".join("1" if i in perm else "0" for i in range(5)), "".join(map(str, perm))
            name = name_of.get(f"{qid}_{mask}_{order}")
            answers = {m: "Nowhere" for m in ("gemma-3-1b", "qwen-3-4b", "llama-31-8b", *READERS)}
            if name:
                answers.update(zip(READERS, STORED[name]))
                answers["gemma-3-1b"] = GOLD[qid][0] if LABEL[name] == 2 else "Nowhere"
            subsets.setdefault(mask, {})[order] = answers
    return {"id": qid, "question": f"Where is {qid}?", "answers": GOLD[qid],
            "hints": [{"hint": f"{qid} clue number {i}."} for i in range(5)], "subsets": subsets}


def make_tree(root: Path) -> Path:
    r = root / "results"
    for split, qids in (("train", ["Q_train_1"]), ("dev", ["Q_dev_1"]), ("test", [Q1, Q2])):
        write_zsd(r / f"dataset/{split}.json", [dataset_record(q) for q in qids])
    write_zsd(r / "index/corpus.jsonl", [{"id": ID["a"], "contents": "one two", "title": Q1},
                                         {"id": ID["e"], "contents": "three  four five", "title": Q2},
                                         {"id": ID["x1"], "contents": "six", "title": "Q_train_1"}])
    write_zsd(r / "index/test/retriever.jsonl", [
        {"question": f"Where is {qid}?", "answers": GOLD[qid],
         "contexts": [{"id": ID[p], "text": f"clues {p}", "label": LABEL[p],
                       "rag_answers": dict(zip(READERS, STORED[p]))} for p in OWN[qid]]}
        for qid in (Q1, Q2)])
    write_zsd(r / "retriever/bm25/retriever.json", run_file(["x1", "d", "a"], ["x2", "x3"]))
    write_zsd(r / "retriever/bge/retriever.json", run_file(["a", "d", "b", "c"], ["g", "x1", "e", "g"]))
    write_zsd(r / "retriever/bm25/rag.json", rag_file({"llama-32-1b": ("Paris", "Rome"),
                                                       "gemma-3-4b": (" Paris", "Roma "),
                                                       "qwen-3-8b": ("Paris", "roma")}))
    write_zsd(r / "retriever/bge/rag.json", rag_file({"llama-32-1b": ("Paris", "Milan"),
                                                      "gemma-3-4b": ("Paris", "Roma"),
                                                      "qwen-3-8b": ("NO ANSWER", "Milan")}))
    # The oracle retriever's passages reordered by a reranker: reranked_ctxs is read.
    write_zsd(r / "reranker/upr-gpt2-large/reranker.json",
              run_file(["c", "a", "d", "b"], ["e", "g", "f"], key="reranked_ctxs", extra=[["a"], ["e"]]))
    write_zsd(r / "reranker/upr-gpt2-large/rag.json", rag_file({"llama-32-1b": ("Paris", "Rome"),
                                                                "gemma-3-4b": ("Paris", "Milan"),
                                                                "qwen-3-8b": ("Lyon", "Milan")}))
    write_zsd(r / "retriever_reranker/bge/monot5-monot5-base-msmarco-10k/reranker.json",
              run_file(["d", "a", "c", "b"], ["x1", "e", "f"], key="reranked_ctxs", extra=[["x1"], ["x1"]]))
    write_zsd(r / "ft_retriever/dpr/10_positive/retriever.json", run_file(["a", "d", "b", "c"], ["g", "x1", "e", "g"]))
    write_zsd(r / "ft_reranker/50_positive/reranker.json",
              run_file(["c", "a", "d", "b"], ["e", "g", "f"], key="reranked_ctxs", extra=[["a"], ["e"]]))
    write_zsd(r / "baselines/baseline.json", [{"question": "q", "ctxs": {pid: {"label": lab, "text": pid}
                                                                     for pid, lab in b.items()}} for b in BASE])
    write_zsd(r / "baselines_retriever/msmarco/bm25/retriever.json", run_file(["m2", "m1", "m3", "m1"], ["m4", "m5"]))
    write_zsd(r / "baselines_retriever/wiki/bge/retriever.json", run_file(["m1"], ["m5", "m4"]))
    write_zsd(r / "baselines_reranker/msmarco/bm25/upr-t5-small/reranker.json",
              run_file(["m1", "m2"], ["m4"], key="reranked_ctxs", extra=[["m2"], ["m4"]]))
    return r


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return make_tree(tmp_path_factory.mktemp("quit"))


def reproduced(monkeypatch, capsys, *args) -> tuple[dict, str]:
    """(cells keyed (table, row, column), stderr) of `inferqa reproduce ... --json`."""
    code, out, err = run_cli(monkeypatch, capsys, "reproduce", *args, "--json")
    assert code == 0, err
    cells = [json.loads(line) for line in out.splitlines()]
    keyed = {(c["table"], c["row"], c["column"]): c for c in cells}
    assert len(keyed) == len(cells), "one line per cell"
    return keyed, err


def check(cells: dict, table: str, row: str, expected: dict[str, float]) -> None:
    for column, value in expected.items():
        got = cells[table, row, column]["value"]
        assert got == pytest.approx(value, abs=1e-4), (table, row, column)


def ranking(hit, recall, precision, mrr, map_, ndcg) -> dict[str, float]:
    """The 28 columns of the authors' ranking tables from per-cutoff values (k 1, 5+)."""
    out = {}
    for name, (at1, rest) in (("hit", hit), ("recall", recall), ("precision", precision), ("ndcg", ndcg)):
        out.update({f"{name}@{k}": (at1 if k == 1 else rest) for k in (1, 5, 10, 20, 50, 100)})
    out.update({"mrr@50": mrr, "mrr@100": mrr, "map@50": map_, "map@100": map_})
    return out


def test_retriever_table(tree, monkeypatch, capsys):
    cells, _ = reproduced(monkeypatch, capsys, tree)
    # bm25: Q1 = x1 d a (relevant at ranks 2 and 3 of 3 retrieved), Q2 = x2 x3 (nothing relevant)
    check(cells, "retriever/retriever", "bm25", ranking(
        hit=(0, 1 / 2), recall=(0, (2 / 4) / 2), precision=(0, (2 / 3) / 2),  # P@k over min(k, 3)
        mrr=(1 / 2) / 2, map_=((1 / 2 + 2 / 3) / 4) / 2,  # MAP@k: / all 4 relevant of Q1
        ndcg=(0, ((3 * L2 + 3 / 2) / IDCG_Q1) / 2)))
    # bge: Q1 = a d b c (the ideal order), Q2 = g x1 e g: g twice counts once in recall and
    # P@k (a set of the 4 retrieved), at both its ranks in MAP and nDCG
    check(cells, "retriever/retriever", "bge", ranking(
        hit=(1, 1), recall=((1 / 4 + 1 / 3) / 2, (1 + 2 / 3) / 2), precision=(1, (1 + 2 / 4) / 2),
        mrr=1, map_=(1 + (1 + 2 / 3 + 3 / 4) / 3) / 2, ndcg=(1, (1 + (1 + 1 / 2 + L4) / IDCG_Q2) / 2)))
    assert {c for t, _, c in cells if t == "retriever/retriever"} == set(ranking((0, 0), (0, 0), (0, 0), 0, 0, (0, 0)))
    assert not any(t == "retriever/retriever" and r == "dpr" for t, r, _ in cells), "absent files give no row"
    # the fine-tuned retriever table reads the same shape: dpr with 10 positives holds bge's lists
    for (t, r, c), cell in cells.items():
        if t == "retriever/retriever" and r == "bge":
            assert cells["ft_retriever/retriever:dpr", "10", c]["value"] == cell["value"]


def test_reranker_tables_read_reranked_ctxs(tree, monkeypatch, capsys):
    cells, _ = reproduced(monkeypatch, capsys, tree)
    # oracle retriever + upr: Q1 = c a d b (labels 1 2 2 1), Q2 = e g f (all label 1: ideal)
    ndcg5 = ((1 + 3 * L2 + 3 / 2 + L4) / IDCG_Q1 + 1) / 2
    check(cells, "reranker/reranker", "upr-gpt2-large",
          {"ndcg@1": (1 / 3 + 1) / 2, **{f"ndcg@{k}": ndcg5 for k in (5, 10, 20, 50, 100, 326)}})
    check(cells, "ft_reranker/reranker", "50", {f"ndcg@{k}": ndcg5 for k in (5, 10, 20, 50, 100)})
    assert ("ft_reranker/reranker", "50", "ndcg@326") not in cells  # that script stops at 100
    # every reranker table has the retriever table's columns: all 4 + 3 passages are relevant
    # (labels 1 and 2), every one retrieved, so hit, MRR, MAP and P@k are 1
    full = {"hit@1": 1, "hit@10": 1, "mrr@100": 1, "map@100": 1, "precision@5": 1,
            "recall@1": (1 / 4 + 1 / 3) / 2, "recall@5": 1}
    check(cells, "reranker/reranker", "upr-gpt2-large", full)
    check(cells, "ft_reranker/reranker", "50", full)
    columns = lambda table: {c for t, _, c in cells if t == table}  # noqa: E731
    every = set(ranking((0, 0), (0, 0), (0, 0), 0, 0, (0, 0)))
    assert columns("reranker/reranker") == every | {"ndcg@326"}
    assert columns("ft_reranker/reranker") == every
    # bge + monot5: Q1 = d a c b (ideal), Q2 = x1 e f; its ctxs (x1 alone) must not be read
    check(cells, "retriever_reranker/retriever_reranker:bge", "monot5-monot5-base-msmarco-10k",
          {"hit@1": 1 / 2, "recall@1": (1 / 4) / 2, "recall@5": (1 + 2 / 3) / 2, "precision@5": (1 + 2 / 3) / 2,
           "mrr@100": (1 + 1 / 2) / 2, "map@100": (1 + (1 / 2 + 2 / 3) / 3) / 2,
           "ndcg@10": (1 + (L2 + 1 / 2) / IDCG_Q2) / 2})


def test_em_tables_compare_answers_as_stored(tree, monkeypatch, capsys):
    cells, _ = reproduced(monkeypatch, capsys, tree)
    em = lambda *v: dict(zip((f"EM of {m}" for m in READERS), v))  # noqa: E731
    # bm25 un_1: llama Paris/Rome (2 of 2), gemma " Paris"/"Roma " (stored with spaces: 0), qwen Paris/roma
    check(cells, "retriever/retriever_rag:un_1", "bm25", em(1, 0, 1 / 2))
    check(cells, "retriever/retriever_rag:un_1", "bge", em(1 / 2, 1, 0))
    for method in METHODS[1:]:
        check(cells, f"retriever/retriever_rag:{method}", "bm25", em(0, 0, 0))
    check(cells, "reranker/reranker_rag:un_1", "upr-gpt2-large", em(1, 1 / 2, 0))
    assert cells["retriever/retriever_rag:un_1", "bm25", "EM of gemma-3-4b"]["table"] == "retriever/retriever_rag:un_1"


def test_rag_table_accuracy_and_optimal_rows(tree, monkeypatch, capsys):
    cells, _ = reproduced(monkeypatch, capsys, tree)
    row = lambda acc, em: {**{f"Accuracy of {m}": a for m, a in zip(READERS, acc)},  # noqa: E731
                           **{f"EM of {m}": e for m, e in zip(READERS, em)}}
    # 1 and 2 (all 7 passages): llama right on a d f, gemma on a b c d e g, qwen on b d e;
    # every reader has some right passage for both questions
    check(cells, "rag/rag", "1 and 2", row((3 / 7, 6 / 7, 3 / 7), (1, 1, 1)))
    # label 1 (b c e f g): llama f, gemma b c e g, qwen b e; llama has none of Q1's b c right
    check(cells, "rag/rag", "1", row((1 / 5, 4 / 5, 2 / 5), (1 / 2, 1, 1)))
    # label 2 (a d, both Q1's): Q2 has none, so no optimal EM above 1/2
    check(cells, "rag/rag", "2", row((1, 1, 1 / 2), (1 / 2, 1 / 2, 1 / 2)))
    check(cells, "rag/rag:passages", "1", {"count": 5, "from": 7, "share": 5 / 7})
    check(cells, "rag/rag:passages", "2", {"count": 2, "from": 7, "share": 2 / 7})


def test_hint_contribution(tree, monkeypatch, capsys):
    cells, _ = reproduced(monkeypatch, capsys, tree)
    shares = lambda **by_reader: {f"hints@{m}-{h}": s.get(h, 0)  # noqa: E731
                                  for m, s in zip(READERS, by_reader.values()) for h in range(6)}
    # oracle: hints of a..g = 1 1 2 3 1 1 2; right: llama a d f, gemma a b c d e g, qwen b d e
    check(cells, "hint-contribution/rag", "Oracle",
          shares(llama={1: 2 / 3, 3: 1 / 3}, gemma={1: 3 / 6, 2: 2 / 6, 3: 1 / 6}, qwen={1: 2 / 3, 3: 1 / 3}))
    # bge's top passages a (1 hint) and g (2); un_1 right: llama Q1, gemma both, qwen none (all 0)
    check(cells, "hint-contribution/retriever_rag", "bge", shares(llama={1: 1}, gemma={1: 1 / 2, 2: 1 / 2}, qwen={}))
    # upr's top passages c (2 hints) and e (1): llama both right, gemma Q1 only
    check(cells, "hint-contribution/reranker_rag", "upr-gpt2-large",
          shares(llama={1: 1 / 2, 2: 1 / 2}, gemma={2: 1}, qwen={}))


def test_label_statistics_and_baselines(tree, monkeypatch, capsys):
    cells, _ = reproduced(monkeypatch, capsys, tree)
    # label-2 passages in the runs present (bm25: d a; bge: a d), of 100 per question and run
    check(cells, "statistics/analyse_labels", "Our dataset", {"count": 4, "from": 2 * 100 * 2, "share": 0.01})
    check(cells, "statistics/analyse_labels", "Wikipedia", {"count": 1, "from": 2 * 100, "share": 0.005})
    check(cells, "statistics/analyse_labels", "MSMARCO", {"count": 2, "from": 2 * 100, "share": 0.01})
    cut = lambda hits, rel, mrr: {**{f"hit@{k}": hits[k > 1] for k in (1, 5, 10, 20, 50, 100)},  # noqa: E731
                                  **{f"precision@{k}": rel[k > 1] / k / 2 for k in (1, 5, 10, 20, 50, 100)},
                                  "mrr@50": mrr, "mrr@100": mrr}
    # MS MARCO bm25: Q1 = m2 m1 m3 m1 (labels 0 2 1 2: P@k counts m1 twice, over k), Q2 no relevant
    check(cells, "baselines_retriever/retriever-msmarco", "bm25", cut((0, 1 / 2), (0, 3), (1 / 2) / 2))
    check(cells, "baselines_retriever/retriever-wiki", "bge", cut((1 / 2, 1 / 2), (1, 1), 1 / 2))
    check(cells, "baselines_reranker/retriever_reranker_msmarco:bm25", "upr-t5-small", cut((1 / 2, 1 / 2), (1, 1), 1 / 2))
    # latent IR: label 2 only; hit@k leaves Q2 (no label-2 passage) out, P@k and MRR do not
    check(cells, "baselines_retriever/retriever-latentIR", "bm25",
          {"hit@1": 0, "hit@5": 1, "precision@1": 0, "precision@5": (2 / 3) / 2, "mrr@50": (1 / 2) / 2})
    check(cells, "baselines_retriever/retriever-latentIR", "bge",
          {"hit@1": 1, "hit@100": 1, "precision@1": 1 / 2, "precision@5": (2 / 4) / 2, "mrr@100": 1 / 2})


def test_passage_length_statistics(tree, monkeypatch, capsys):
    cells, _ = reproduced(monkeypatch, capsys, tree)
    # top 100 of bm25 (x1 d a | x2 x3) and bge (a d b c | g x1 e g): 13 passages, a (3 words) twice
    check(cells, "statistics/statistics_table", "our_dataset", {"average length": (11 * 2 + 2 * 3) / 13})
    # MS MARCO bm25: m2 m1 m3 m1 | m4 m5 with m1 of 4 words; Wikipedia bge: m1 | m5 m4
    check(cells, "statistics/statistics_table", "msmarco", {"average length": (2 * 4 + 4 * 2) / 6})
    check(cells, "statistics/statistics_table", "wiki", {"average length": (4 + 2 + 2) / 3})
    check(cells, "statistics/corpus_comparison", "our_dataset", {"average length": (2 + 4 + 1) / 3})


def test_json_lines_published_figures_and_absent_files(tree, monkeypatch, capsys):
    code, out, err = run_cli(monkeypatch, capsys, "reproduce", tree, "--json")
    assert code == 0
    for line in out.splitlines():
        cell = json.loads(line)
        assert set(cell) in ({"table", "row", "column", "value"}, {"table", "row", "column", "value", "published"})
        assert isinstance(cell["value"], (int, float)) and isinstance(cell["row"], str)
    cells = {(c["table"], c["row"], c["column"]): c for c in map(json.loads, out.splitlines())}
    assert cells["retriever/retriever", "bge", "hit@100"]["published"] == 0.3023
    assert cells["rag/rag", "1 and 2", "EM of gemma-3-4b"]["published"] == 0.9016
    assert "published" not in cells["retriever/retriever", "bge", "hit@5"]
    # each absent file once, under the name the hub gives it; present ones never
    names = [line for line in err.splitlines() if line.startswith("  ")]
    assert names.count("  retriever/dpr/retriever.zsd") == 1 and len(names) == len(set(names))
    assert "  retriever/bge/retriever.zsd" not in names and "  index/test/retriever.zsd" not in names


def test_out_writes_md_csv_tex(tree, tmp_path, monkeypatch, capsys):
    out = tmp_path / "tables"
    code, printed, _ = run_cli(monkeypatch, capsys, "reproduce", tree.parent, "--out", out)  # the folder above works
    assert code == 0
    md = (out / "retriever/retriever.md").read_text()
    assert "| retriever | hit@1 | hit@1 (paper) |" in md and "| bge | 100.00 | 12.85 |" in md
    assert md in printed
    assert (out / "retriever/retriever_rag-un_1.csv").read_text().splitlines()[1:] == [
        "bm25,1.000000,0.000000,0.500000", "bge,0.500000,1.000000,0.000000"]
    assert "\\begin{tabular}" in (out / "rag/rag.tex").read_text()
    assert "retriever/dpr/retriever.zsd" in (out / "absent.txt").read_text().split()
    lines = (out / "cells.jsonl").read_text().splitlines()
    assert json.loads(lines[0]) == {"table": "retriever/retriever", "row": "bm25", "column": "hit@1", "value": 0.0,
                                    "published": 0.0}


def broken_copy(tree: Path, tmp_path: Path, rel: str, obj) -> Path:
    import shutil

    copy = tmp_path / "results"
    shutil.copytree(tree, copy)
    write_zsd(copy / rel, obj)
    return copy


@pytest.mark.parametrize("rel, obj, where", [
    ("retriever/bge/retriever.json", [{"ctxs": [{"id": "a"}]}, {"ctxs": [{"score": 1.0}]}],
     "retriever/bge/retriever.zsd: record 1: field 'ctxs[0].id'"),
    ("retriever/bm25/rag.json", [{**r, "predicted_answer": {m: {} for m in READERS}} if i else r
                                 for i, r in enumerate(rag_file({m: ("x", "y") for m in READERS}))],
     "retriever/bm25/rag.zsd: record 1: field 'predicted_answer.llama-32-1b.Q_test_2_un_1'"),
    ("index/test/retriever.jsonl", [{"answers": ["x"], "contexts": [{"id": ID["a"], "label": "2"}]}],
     "index/test/retriever.zsd: record line 1: field 'contexts[0].label'"),
    ("retriever/bm25/retriever.json", run_file(["a"], ["e"], ["x1"]),
     "retriever/bm25/retriever.zsd: record 2: 3 questions, but index/test/retriever.jsonl has 2"),
    # a released run is read by Run.from_file, with a Rankify run's score check
    ("retriever/bge/retriever.json", [{"ctxs": [{"id": "a", "score": "high"}]}, {"ctxs": []}],
     "retriever/bge/retriever.zsd: record 0: field 'ctxs[0].score': score 'high' is not a number"),
])
def test_wrongly_shaped_file_stops_in_one_line(tree, tmp_path, monkeypatch, capsys, rel, obj, where):
    out = tmp_path / "tables"
    code, printed, err = run_cli(monkeypatch, capsys, "reproduce", broken_copy(tree, tmp_path, rel, obj), "--out", out)
    assert code == 2 and printed == ""
    assert len(err.strip().splitlines()) == 1 and where in err
    assert not out.exists()


PAGE = REPO / "docs" / "paper.md"


@pytest.mark.slow
def test_the_paper_page_runs_as_written(tmp_path):
    """Its first block offline (one line, exit 2, nothing written), the others on the tree."""
    # the `<!-- runnable -->` block (the shipped example) runs in tests/test_docs.py
    blocks = re.findall(r"(?<!<!-- runnable -->\n)^```bash\n(.*?)^```", PAGE.read_text(encoding="utf-8"), re.M | re.S)
    assert len(blocks) == 3 and "inferqa download" in blocks[0] and "inferqa reproduce" in blocks[1]
    env = {**os.environ, "HF_HUB_OFFLINE": "1",
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    run = lambda code: subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code], cwd=tmp_path, env=env,  # noqa: E731
                                      capture_output=True, text=True, timeout=600)
    offline = run(blocks[0])
    assert offline.returncode == 2 and len(offline.stderr.splitlines()) == 1 and "offline" in offline.stderr
    assert list(tmp_path.iterdir()) == []
    make_tree(tmp_path / "quit")  # where the download would have put it
    printed = []
    for code in blocks[1:]:
        done = run(code)
        assert done.returncode == 0, done.stderr[-3000:]
        printed.append(done.stdout)
    cells = [json.loads(line) for line in (tmp_path / "cells.jsonl").read_text().splitlines()]
    assert {"table": "retriever/retriever", "row": "bge", "column": "hit@100", "value": 1.0,
            "published": 0.3023} in cells
    quoted = re.search(r"prints\n`(\{.*?\})`", PAGE.read_text(encoding="utf-8"), re.S).group(1)
    assert json.loads(quoted) in cells
    grepped = [line for line in printed[0].splitlines() if line.startswith("{")]  # the rest: the tables
    assert grepped == [quoted], "the grep prints the one line quoted"
    assert (tmp_path / "quit-tables" / "rag" / "rag.md").exists() and (tmp_path / "quit-bench" / "meta.json").exists()


def test_a_folder_without_any_released_file_is_one_line(tmp_path, monkeypatch, capsys):
    code, printed, err = run_cli(monkeypatch, capsys, "reproduce", tmp_path)
    assert code == 2 and printed == "" and len(err.splitlines()) == 1
    assert "index/test/retriever.zsd among them" in err


def test_a_missing_results_dir_is_not_found(tmp_path, monkeypatch, capsys):
    code, printed, err = run_cli(monkeypatch, capsys, "reproduce", tmp_path / "nowhere")
    assert code == 2 and printed == "" and len(err.splitlines()) == 1 and "not found" in err, err


def test_out_must_be_a_folder(tree, tmp_path, monkeypatch, capsys):
    (tmp_path / "file").write_text("x")
    code, printed, err = run_cli(monkeypatch, capsys, "reproduce", tree, "--out", tmp_path / "file")
    assert code == 2 and printed == "" and len(err.splitlines()) == 1 and "must be a folder" in err, err


def test_gzip_and_plain_files_read_as_the_zsd_ones(tree, tmp_path, monkeypatch, capsys):
    import gzip
    import shutil

    copy = tmp_path / "results"
    shutil.copytree(tree, copy)
    zsd = sorted(copy.rglob("*.zsd"))
    for i, path in enumerate(zsd):  # every other file gzipped under its script name, the rest plain
        name = path.with_suffix(".jsonl" if "index" in path.relative_to(copy).parts else ".json")
        data = zstandard.ZstdDecompressor().decompressobj().decompress(path.read_bytes())
        if i % 2:
            Path(f"{name}.gz").write_bytes(gzip.compress(data))
        else:
            name.write_bytes(data)
        path.unlink()
    want, _ = reproduced(monkeypatch, capsys, tree)
    got, _ = reproduced(monkeypatch, capsys, copy)
    assert got == want and len(got) > 100


def test_a_released_file_is_read_with_the_reading_layers_errors(tree, tmp_path, monkeypatch, capsys):
    """The release's reader output fails as `evaluate-answers` fails on the same file, and its
    corpus as any Pyserini collection: one line naming file, record and field."""
    rag = rag_file({m: ("x", "y") for m in READERS})
    rag[0]["predicted_answer"]["gemma-3-4b"] = "Paris"
    copy = broken_copy(tree, tmp_path, "retriever/bm25/rag.json", rag)
    code, _, err = run_cli(monkeypatch, capsys, "reproduce", copy)
    code2, _, err2 = run_cli(monkeypatch, capsys, "evaluate-answers", copy / "retriever/bm25/rag.zsd")
    assert code == code2 == 2 and err == err2 and len(err.strip().splitlines()) == 1
    assert "rag.zsd: record 0: field 'predicted_answer.gemma-3-4b': expected an object key -> answer" in err
    (tmp_path / "again").mkdir()
    copy = broken_copy(tree, tmp_path / "again", "index/corpus.jsonl",
                       [{"id": ID["a"], "contents": "one two", "title": Q1}, {"id": ID["e"], "contents": 5}])
    code, _, err = run_cli(monkeypatch, capsys, "reproduce", copy)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "index/corpus.zsd: record line 2: field 'contents': expected a string, got int" in err


def test_the_shipped_example_reproduces_what_its_generator_recorded(monkeypatch, capsys, tmp_path):
    """`inferqa reproduce --example`: the package's synthetic tree (scripts/reproduce_example.py),
    recomputed here, gives the Hit@1, Hit@10 and MRR the generator derived from its ranks; the
    generator run again writes the same files."""
    from inferqa.reproduce import EXAMPLE

    cells, err = reproduced(monkeypatch, capsys, "--example")
    recorded = json.loads((EXAMPLE.parent / "expected.json").read_text(encoding="utf-8"))
    assert len(recorded) == 9
    for cell in recorded:
        assert cells[cell["table"], cell["row"], cell["column"]]["value"] == pytest.approx(cell["value"], abs=1e-4)
    assert cells["retriever/retriever", "bge", "hit@1"]["published"] == 0.1285  # published-style: beside the paper's
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import reproduce_example
    finally:
        sys.path.remove(str(REPO / "scripts"))
    reproduce_example.write(tmp_path)
    shipped = sorted(p.relative_to(EXAMPLE.parent) for p in EXAMPLE.parent.rglob("*") if p.is_file())
    assert shipped == sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*") if p.is_file())
    for rel in shipped:
        assert (tmp_path / rel).read_bytes() == (EXAMPLE.parent / rel).read_bytes(), rel


def test_a_benchmark_built_from_the_example_dataset_scores_the_example_runs(monkeypatch, capsys, tmp_path):
    """`results/dataset/` of the shipped example builds a benchmark offline (the release's shape:
    five hints, 325 passages a question, ids verbatim, the authors' labels), and the example's
    retriever runs evaluated against it with --protocol paper give the cells its generator
    recorded from the ranks alone."""
    from inferqa.formats.benchmark import Benchmark
    from inferqa.reproduce import EXAMPLE

    data = EXAMPLE / "dataset"
    code, _, err = run_cli(monkeypatch, capsys, "build", data / "train.json", data / "dev.json", data / "test.json",
                           "--split", "source", "--leak-policy", "none", "--out", tmp_path / "qb")
    assert code == 0, err
    bench = Benchmark(tmp_path / "qb")
    assert len(bench.questions) == 6 and bench.split_qids("test") == [f"Q_test_{i}" for i in range(1, 5)]
    assert all(bench.qrels[f"Q_test_{i}"]["Q_test_%d_10000_0" % i] == 2 for i in range(1, 5))
    assert sum(label == 2 for label in bench.qrels["Q_test_1"].values()) == 1
    assert len(bench.qrels["Q_test_1"]) == 325
    recorded = json.loads((EXAMPLE.parent / "expected.json").read_text(encoding="utf-8"))
    for row in ("bm25", "bge"):
        code, out, err = run_cli(monkeypatch, capsys, "evaluate", EXAMPLE / "retriever" / row / "retriever.json",
                                 "--bench", tmp_path / "qb", "--split", "test", "--protocol", "paper",
                                 "--metrics", "hit@1,hit@10,mrr@100", "--json")
        assert code == 0, err
        got = json.loads(out)["metrics"]
        cells = {c["column"]: c["value"] for c in recorded if c["row"] == row}
        assert got == pytest.approx(cells, abs=1e-4)


def test_example_and_results_dir_exclude_each_other(tree, monkeypatch, capsys):
    code, printed, err = run_cli(monkeypatch, capsys, "reproduce", tree, "--example")
    assert code == 2 and printed == "" and len(err.splitlines()) == 1 and "not both" in err
    code, printed, err = run_cli(monkeypatch, capsys, "reproduce")
    assert code == 2 and printed == "" and "missing RESULTS_DIR" in err


def test_boxed_tables_fit_80_columns_with_each_paper_column_beside_its_own(tree, monkeypatch, capsys):
    from test_tables import parse_boxed

    from inferqa.reproduce import reproduce
    from inferqa.reproduce.output import PAPER, text_table
    from inferqa.tabular import boxed

    grids, _ = reproduce(tree)
    for g in grids:
        t = text_table(g)
        text = boxed(t, 80)
        assert max(map(len, text.splitlines())) <= 80 and "…" not in text
        assert parse_boxed(text) == {(r[0], h): c for r in t.rows for h, c in zip(t.header[1:], r[1:])}
        heads = [ln for ln in text.splitlines() if ln.startswith("┃")]
        for name in t.header:
            if name.endswith(PAPER):  # in the block of the column it gives the paper's figure of
                assert any(f"┃ {name[:-len(PAPER)]} ┃ {name} ┃" in " ".join(ln.split()) for ln in heads), name
    code, out, err = run_cli(monkeypatch, capsys, "reproduce", tree, "--format", "table", columns=None)
    assert code == 0 and max(map(len, out.splitlines())) <= 80 and "┃ retriever ┃ hit@1 ┃" in out
    code, out, _ = run_cli(monkeypatch, capsys, "reproduce", tree, "--format", "csv")
    assert code == 0 and "retriever,hit@1,hit@1 (paper)," in out.splitlines()[0]
