"""Records: passage ids, question round trips, TREC qrels and run files."""

from __future__ import annotations


import pytest

from inferqa.errors import InputError
from inferqa.records import Hint, Passage, Qrels, Question, Run, parse_passage_id, passage_id


def test_passage_id_spells_subset_then_order():
    assert passage_id("q7", (3, 0, 1)) == "q7_013_301"
    assert passage_id("q7", (2,)) == "q7_2_2"


def test_parse_passage_id_reads_from_the_right_so_qids_may_hold_underscores():
    assert parse_passage_id("Q_dev_8315_013_301") == ("Q_dev_8315", (3, 0, 1))
    for qid, order in [("test_62", (4, 3, 2, 1, 0)), ("a_b_c", (0,)), ("x", (1, 0))]:
        assert parse_passage_id(passage_id(qid, order)) == (qid, order)


@pytest.mark.parametrize("bad", ["q7_013", "q7_013_311", "q7_013_30", "_01_10", "q7_01_1x", "q7_012_013"])
def test_parse_passage_id_rejects_malformed_ids(bad):
    with pytest.raises(ValueError):
        parse_passage_id(bad)


def test_passage_id_refuses_two_digit_indices():
    with pytest.raises(ValueError):
        passage_id("q", (10, 1))


def test_question_round_trips_through_dict():
    q = Question(id="q1", text="Who?", answers=["Ada Lovelace", "Ada"],
                 hints=[Hint("She wrote notes.", 0.5, "wiki"), Hint("She met Babbage.")],
                 metadata={"type": "HUM"})
    back = Question.from_dict(q.to_dict())
    assert back == q
    assert back.hints[1].convergence is None


def test_passage_dict_has_corpus_fields():
    p = Passage(id="q_01_10", qid="q", order=(1, 0), text="b a")
    assert p.to_dict() == {"id": "q_01_10", "text": "b a", "qid": "q"}


def test_qrels_save_load_round_trip(tmp_path):
    q = Qrels({"q1": {"q1_0_0": 1, "q1_01_10": 2}, "q2": {"q2_1_1": 0}})
    path = tmp_path / "qrels.tsv"
    q.save(path)
    assert path.read_text().splitlines()[1] == "q1 0 q1_01_10 2"
    back = Qrels.load(path)
    assert back == q
    assert back.relevant("q1") == {"q1_0_0", "q1_01_10"}
    assert back.relevant("q1", min_label=2) == {"q1_01_10"}
    assert back.relevant("missing") == set()


@pytest.mark.parametrize("content,field", [("q1 0 p1\n", None), ("q1 0 p1 x\n", "label")])
def test_qrels_bad_lines_are_located(tmp_path, content, field):
    path = tmp_path / "qrels.tsv"
    path.write_text(content)
    with pytest.raises(InputError) as exc:
        Qrels.load(path)
    assert exc.value.record == "line 1" and exc.value.field == field


def test_run_save_load_keeps_order_and_scores(tmp_path):
    run = Run({"q1": [("a", 3.0), ("b", 2.5)], "q2": [("c", -1.0)]}, tag="bm25")
    path = tmp_path / "run.trec"
    run.save(path)
    assert path.read_text().splitlines()[0] == "q1 Q0 a 1 3.000000 bm25"
    back = Run.load(path)
    assert back == run and back.tag == "bm25"
    assert back.top(1) == {"q1": [("a", 3.0)], "q2": [("c", -1.0)]}
    assert list(back.iter_lines())[1] == ("q1", "b", 2, 2.5)


@pytest.mark.parametrize("lines,field", [
    (["q 0 a 1 1.0 t", "q 0 a 2 0.5 t"], "pid"),        # duplicate passage
    (["q 0 a 1 1.0 t", "q 0 b 2 2.0 t"], "rank"),       # score increases
    (["q 0 a 2 1.0 t", "q 0 b 1 0.5 t"], "rank"),       # rank decreases
    (["q 0 a 1 nan t"], "score"),
    (["q 0 a one 1.0 t"], "rank/score"),
])
def test_run_rejects_inconsistent_files(tmp_path, lines, field):
    path = tmp_path / "run.trec"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError) as exc:
        Run.load(path)
    assert exc.value.field == field
    assert str(path) in str(exc.value)


def test_empty_and_missing_files_are_input_errors(tmp_path):
    (tmp_path / "empty").write_text("\n")
    for loader in (Qrels.load, Run.load):
        with pytest.raises(InputError, match="empty"):
            loader(tmp_path / "empty")
        with pytest.raises(InputError, match="not found"):
            loader(tmp_path / "nope")
