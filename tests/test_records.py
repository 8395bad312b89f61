"""Records: passage ids, question round trips, TREC qrels and run files."""

from __future__ import annotations


import pytest

from inferqa.errors import InputError
from inferqa.records import Hint, is_old_passage_id, mask_readings, parse_passage_id, Passage, passage_id, Question, RIGHT_TO_LEFT
from inferqa.formats import Qrels, Run


def test_passage_id_spells_a_mask_of_the_kept_hints_then_the_order():
    assert passage_id("Q_train_44835", (3, 2, 0), 5) == "Q_train_44835_10110_320"
    assert passage_id("q7", (2,), 3) == "q7_001_2"
    assert passage_id("q7", (3, 2, 0), 5, RIGHT_TO_LEFT) == "q7_01101_320"


def test_parse_passage_id_reads_from_the_right_so_qids_may_hold_underscores():
    assert parse_passage_id("Q_train_44835_10110_320") == ("Q_train_44835", (3, 2, 0))
    for qid, order in [("test_62", (4, 3, 2, 1, 0)), ("a_b_c", (0,)), ("x", (1, 0))]:
        assert parse_passage_id(passage_id(qid, order, 5)) == (qid, order)
        assert parse_passage_id(passage_id(qid, order, 5, RIGHT_TO_LEFT)) == (qid, order)


def test_the_mask_is_as_wide_as_the_id_spells_it():
    from inferqa.records import question_of, split_passage_id

    assert parse_passage_id("Q_train_1_101_20") == ("Q_train_1", (2, 0))  # a question of three hints
    assert split_passage_id("Q_train_1_1001001_630") == ("Q_train_1", "1001001", "630")
    assert parse_passage_id("Q_train_1_1001001_630") == ("Q_train_1", (6, 3, 0))
    assert question_of("Q_train_44835_10110_320") == "Q_train_44835" and question_of("x1") is None


def test_mask_readings_name_the_bit_orders_that_fit():
    assert mask_readings("10110", (3, 2, 0)) == ("left-to-right",)
    assert mask_readings("01101", (3, 2, 0)) == ("right-to-left",)
    assert mask_readings("00100", (2,)) == ("left-to-right", "right-to-left")  # symmetric: both fit
    assert mask_readings("10100", (3, 2, 0)) == ()


@pytest.mark.parametrize("bad", ["q7_10110", "q7_10110_3200", "q7_10110_32", "_10110_320", "q7_10110_32x",
                                 "q7_013_301", "q7_10210_320", "q7_101_320", "q7_0_0"])
def test_parse_passage_id_rejects_malformed_ids(bad):
    with pytest.raises(ValueError):
        parse_passage_id(bad)


def test_old_ids_are_recognised_and_never_parse_as_new_ones():
    for old in ["q7_013_301", "q7_2_2", "q_01_10", "q_1_1", "q_0_0", "q_01234_43210"]:
        assert is_old_passage_id(old)
        with pytest.raises(ValueError):
            parse_passage_id(old)
    assert not is_old_passage_id("Q_train_44835_10110_320")


def test_passage_id_refuses_two_digit_indices():
    with pytest.raises(ValueError):
        passage_id("q", (10, 1), 11)
    with pytest.raises(ValueError):
        passage_id("q", (3,), 3)


def test_question_round_trips_through_dict():
    q = Question(id="q1", text="Who?", answers=["Ada Lovelace", "Ada"],
                 hints=[Hint("She wrote notes.", 0.5, "wiki"), Hint("She met Babbage.")],
                 metadata={"type": "HUM"})
    back = Question.from_dict(q.to_dict())
    assert back == q
    assert back.hints[1].convergence is None


def test_passage_dict_has_corpus_fields():
    p = Passage(id="q_11_10", qid="q", order=(1, 0), text="b a")
    assert p.to_dict() == {"id": "q_11_10", "text": "b a", "qid": "q"}


def test_qrels_save_load_round_trip(tmp_path):
    q = Qrels({"q1": {"q1_10_0": 1, "q1_11_10": 2}, "q2": {"q2_01_1": 0}})
    path = tmp_path / "qrels.tsv"
    q.to_file(path)
    assert path.read_text().splitlines()[1] == "q1 0 q1_11_10 2"
    back = Qrels.from_file(path)
    assert back == q
    assert back.relevant("q1") == {"q1_10_0", "q1_11_10"}
    assert back.relevant("q1", min_label=2) == {"q1_11_10"}
    assert back.relevant("missing") == set()


@pytest.mark.parametrize("content,field", [("q1 0 p1\n", None), ("q1 0 p1 x\n", "label")])
def test_qrels_bad_lines_are_located(tmp_path, content, field):
    path = tmp_path / "qrels.tsv"
    path.write_text(content)
    with pytest.raises(InputError) as exc:
        Qrels.from_file(path)
    assert exc.value.record == "line 1" and exc.value.field == field


def test_run_save_load_keeps_order_and_scores(tmp_path):
    run = Run({"q1": [("a", 3.0), ("b", 2.5)], "q2": [("c", -1.0)]}, tag="bm25")
    path = tmp_path / "run.trec"
    run.to_file(path)
    assert path.read_text().splitlines()[0] == "q1 Q0 a 1 3.000000 bm25"
    back = Run.from_file(path)
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
        Run.from_file(path)
    assert exc.value.field == field
    assert str(path) in str(exc.value)


def test_empty_and_missing_files_are_input_errors(tmp_path):
    (tmp_path / "empty").write_text("\n")
    for loader in (Qrels.from_file, Run.from_file):
        with pytest.raises(InputError, match="empty"):
            loader(tmp_path / "empty")
        with pytest.raises(InputError, match="not found"):
            loader(tmp_path / "nope")
