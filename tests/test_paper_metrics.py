"""`--protocol paper` ranking metrics where the QUIT authors' scripts differ from ours: runs
that list a passage twice, and `--min-label 2`. Values worked out by hand."""

import json
import math

import pytest

from inferqa.errors import InputError
from inferqa.evaluation import evaluate
from inferqa.formats import Qrels, Run

from conftest import run_cli

QRELS = Qrels({"q1": {"a": 2, "b": 1, "c": 0}, "q2": {"x": 1}})
# q1 lists a twice: a a c b.
DUP = Run({"q1": [("a", 4.0), ("a", 3.0), ("c", 2.0), ("b", 1.0)], "q2": [("x", 1.0)]})


def test_duplicates_count_at_every_rank_in_map_and_ndcg_once_in_recall_and_precision():
    got = evaluate(Run({"q1": DUP["q1"]}), QRELS, ["hit@1", "recall@2", "recall@4", "p@2", "p@4", "p@10",
                                                    "mrr@10", "map@4", "ndcg@2"], protocol="paper")
    ap = (1 / 1 + 2 / 2 + 3 / 4) / 2           # every occurrence a relevant rank; over the 2 relevant
    ndcg = (3 + 3 / math.log2(3)) / (3 + 1 / math.log2(3))  # a gains 3 at ranks 1 and 2
    assert got == {"hit@1": 1.0, "recall@2": 0.5, "recall@4": 1.0,  # {a} of {a, b}; then both
                   "p@2": 0.5, "p@4": 0.5, "p@10": 0.5,             # found {a} / 2; {a, b} / 4; / min(10, 4)
                   "mrr@10": 1.0, "map@4": round(ap, 4), "ndcg@2": round(ndcg, 4)}


def test_min_label_2_leaves_questions_without_a_label_2_passage_out_of_hit_and_recall():
    # q2 has no label-2 passage: left out of hit and recall, still in the others (counting 0).
    got = evaluate(DUP, QRELS, ["hit@1", "recall@2", "mrr@10"], min_label=2, protocol="paper")
    assert got == {"hit@1": 1.0, "recall@2": 1.0, "mrr@10": 0.5}


def test_evaluate_cli_keeps_duplicates_under_the_paper_protocol_only(tmp_path, monkeypatch, capsys):
    run, qrels = tmp_path / "dup.trec", tmp_path / "qrels.tsv"
    DUP.to_file(run)
    QRELS.to_file(qrels)
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", run, "--qrels", qrels, "--protocol", "paper",
                             "--metrics", "p@4,map@4", "--json")
    assert code in (0, None), err
    # q1 as above; q2: x at rank 1 -> p@4 = 1 / min(4, 1), map@4 = 1.
    assert json.loads(out)["metrics"] == {"p@4": round((0.5 + 1) / 2, 4),
                                          "map@4": round(((1 + 1 + 3 / 4) / 2 + 1) / 2, 4)}
    code, _, err = run_cli(monkeypatch, capsys, "evaluate", run, "--qrels", qrels, "--metrics", "p@4")
    assert code == 2 and "duplicate passage a" in err and err.count("\n") == 1
    with pytest.raises(InputError, match="duplicate passage"):
        Run.from_file(run)
    assert Run.from_file(run, allow_duplicates=True) == DUP
