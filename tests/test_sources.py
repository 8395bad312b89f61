"""Source readers: every format on small hand-written files, auto-detection, and the real shared files."""

from __future__ import annotations

import json

import pytest

from inferqa.data import demo_path, load_questions, sniff
from inferqa.data.quit import ANSWERS_KEY, LABELS_KEY, release_label
from inferqa.errors import InputError


def wikihint_record(qid="test_1", answer="Cthulhu"):
    return {"id": qid,
            "question": {"question": "Name the deity of R'lyeh.", "question_type": {"major": "HUM:HUMAN", "minor": "ind"},
                         "difficulty": "Easy"},
            "answer": {"answer": answer},
            "hints": [{"hint": "Written by H. P.   Lovecraft.", "source": "https://w/x", "rank": "1",
                       "metrics": {"convergence": 0.82}},
                      {"hint": "A green octopus.", "source": "https://w/x", "rank": "2", "metrics": {"convergence": 0}}]}


def triviahg_early(qid="Q_dev_1"):
    return {"Q_ID": qid, "Question": "Catoptromancy uses what object?", "ExactAnswer": "Mirror",
            "Hints": ["It is reflective[^1^].", "  It hangs on walls. ", ""], "MajorType": "ENTY:ENTITY",
            "MinorType": "other", "Exact_Answer_Popularity": {"Normalized": 0.1, "Category": "Hard"}}


def triviahg_later(qid="Q_1"):
    return {"Q_ID": qid, "Question": "Which river?", "ExactAnswer": ["Humber", "River Humber", "Humber"],
            "Hints": ["An estuary in England.", "Hull lies on it."], "Convergence": [0.25, 0.75],
            "Candidates_Answers": ["Thames", "Humber"]}


def quit_record():
    return {"id": "quit_7", "question": "Which metal?", "answers": ["Cobalt", "Co"],
            "hints": [{"hint": "Blue glass pigment."}, {"hint": "Atomic number 27."}],
            "subsets": {"10": {"0": {"gemma-3-1b": "copper", "qwen-3-4b": "nickel", "llama-31-8b": "iron"}},
                        "01": {"1": {"gemma-3-1b": "cobalt.", "qwen-3-4b": "x", "llama-31-8b": "y"}},
                        "11": {"01": {"gemma-3-1b": "no", "qwen-3-4b": "no", "llama-31-8b": "CO",
                                      "gemma-3-4b": "Cobalt"},
                               "10": {"label": 2}}}}


def write_json(path, obj):
    path.write_text(json.dumps(obj), encoding="utf-8")
    return path


def test_wikihint_fields(tmp_path):
    f = write_json(tmp_path / "w.json", [wikihint_record()])
    assert sniff(f)[0] == "wikihint"
    (q,) = load_questions(f)
    assert (q.id, q.text, q.answers) == ("test_1", "Name the deity of R'lyeh.", ["Cthulhu"])
    assert [(h.text, h.convergence, h.source) for h in q.hints] == [
        ("Written by H. P. Lovecraft.", 0.82, "https://w/x"), ("A green octopus.", 0.0, "https://w/x")]
    assert q.metadata["type"] == "HUM:HUMAN" and q.metadata["difficulty"] == "Easy"


def test_triviahg_early_schema_cleans_hints_and_drops_blank_ones(tmp_path):
    f = write_json(tmp_path / "t.json", [triviahg_early()])
    assert sniff(f)[0] == "triviahg"
    (q,) = load_questions(f)
    assert q.answers == ["Mirror"]
    assert [h.text for h in q.hints] == ["It is reflective.", "It hangs on walls."]
    assert all(h.convergence is None for h in q.hints)
    assert q.metadata["difficulty"] == "Hard"


def test_triviahg_later_schema_aliases_and_aligned_convergence(tmp_path):
    (q,) = load_questions(write_json(tmp_path / "t.json", [triviahg_later()]), "triviahg")
    assert q.answers == ["Humber", "River Humber"]          # duplicates removed, canonical first
    assert [h.convergence for h in q.hints] == [0.25, 0.75]
    assert q.metadata["candidates"] == ["Thames", "Humber"]


def test_triviahg_misaligned_convergence_is_an_error(tmp_path):
    rec = triviahg_later()
    rec["Convergence"] = [0.5]
    with pytest.raises(InputError) as exc:
        load_questions(write_json(tmp_path / "t.json", [rec]))
    assert exc.value.field == "convergence" and "Q_1" in str(exc.value.record)


def test_quit_release_labels_follow_the_labelling_models(tmp_path):
    f = write_json(tmp_path / "test.json", [quit_record()])
    assert sniff(f)[0] == "quit"
    (q,) = load_questions(f)
    assert q.answers == ["Cobalt", "Co"] and [h.text for h in q.hints] == ["Blue glass pigment.", "Atomic number 27."]
    assert q.metadata[LABELS_KEY] == {"10": 2}  # only explicit labels; the rest follow from the answers
    stored = q.metadata[ANSWERS_KEY]
    assert stored["01"] == {"gemma-3-1b": "no", "qwen-3-4b": "no", "llama-31-8b": "CO", "gemma-3-4b": "Cobalt"}
    gold = q.answers
    # The authors' rule: exact membership. copper/nickel/iron -> 1; "cobalt." and "CO" are not
    # in answers -> 1; a reader model (gemma-3-4b) answering "Cobalt" never labels.
    assert [release_label(None, stored[p], gold) for p in ("0", "1", "01")] == [1, 1, 1]
    # Ours, normalised: "cobalt." and "CO" match -> 2.
    assert [release_label(None, stored[p], gold, "normalized") for p in ("0", "1", "01")] == [1, 2, 2]
    assert release_label(2, stored["10"], gold) == 2 and release_label(None, {"qwen-3-4b": "Co"}, gold) == 2
    assert q.metadata["split"] == "test" and q.metadata["mask_bits"] == "left-to-right"


@pytest.mark.parametrize("mask,perm,why", [("11", "12", "distinct hint indices below 2"),
                                           ("013", "01", "0/1 mask"), ("110", "01", "2-character"),
                                           ("10", "01", "different hints")])
def test_quit_ordering_must_name_its_masks_hints(tmp_path, mask, perm, why):
    rec = quit_record()
    rec["subsets"].setdefault(mask, {})[perm] = {}
    with pytest.raises(InputError, match=why) as exc:
        load_questions(write_json(tmp_path / "dev.json", [rec]))
    assert exc.value.field == f"subsets.{mask}.{perm}" and exc.value.record == "0 (id quit_7)"


def three_hint_record(qid, right_to_left):
    def key(*used):
        mask = "".join("1" if i in used else "0" for i in range(3))
        return mask[::-1] if right_to_left else mask
    return {"id": qid, "question": "?", "answers": ["x"], "hints": [{"hint": f"{qid} h{i}."} for i in range(3)],
            "subsets": {key(2): {"2": {}}, key(0, 2): {"20": {"qwen-3-4b": "x"}, "02": {}}}}


def test_quit_mask_bits_read_one_way_per_file(tmp_path):
    (a, b) = load_questions(write_json(tmp_path / "train.json", [three_hint_record("a", True),
                                                                  three_hint_record("b", True)]))
    assert a.metadata["mask_bits"] == b.metadata["mask_bits"] == "right-to-left"
    assert a.metadata[ANSWERS_KEY] == {"2": {}, "20": {"qwen-3-4b": "x"}, "02": {}}
    mixed = [three_hint_record("a", False), three_hint_record("b", True)]
    with pytest.raises(InputError, match="fits only right-to-left.*earlier records.*left-to-right") as exc:
        load_questions(write_json(tmp_path / "dev.json", mixed))
    assert (exc.value.record, exc.value.field) == ("1 (id b)", "subsets.100.2")


def test_quit_corpus_file_is_refused_with_a_pointer(tmp_path):
    f = tmp_path / "corpus.jsonl"
    f.write_text(json.dumps({"id": "q_10000_0", "contents": "x", "title": "q"}) + "\n")
    with pytest.raises(InputError, match="train/dev/test JSON"):
        load_questions(f)


def test_generic_jsonl_strings_and_objects(tmp_path):
    f = tmp_path / "mine.jsonl"
    rows = [{"id": "a", "question": "Q?", "answers": "Paris", "hints": ["City of light.", {"text": "On the Seine.",
             "convergence": 0.9, "source": "me"}], "metadata": {"type": "LOC"}},
            {"id": 7, "question": "R?", "answers": ["X", "Y"], "hints": []}]
    f.write_text("\n".join(json.dumps(r) for r in rows) + "\n\n")
    a, b = load_questions(f)
    assert a.answers == ["Paris"] and [(h.text, h.convergence, h.source) for h in a.hints] == [
        ("City of light.", None, None), ("On the Seine.", 0.9, "me")]
    assert a.metadata == {"type": "LOC"}
    assert b.id == "7" and b.answers == ["X", "Y"] and b.hints == []


def test_generic_json_array_is_read_like_jsonl(tmp_path):
    f = write_json(tmp_path / "mine.json", [{"id": "a", "question": "Q?", "answers": ["x"], "hints": ["h"]}])
    assert sniff(f)[0] == "jsonl"
    assert load_questions(f)[0].hints[0].text == "h"


def test_csv_with_aliases_hint_and_convergence_columns(tmp_path):
    f = tmp_path / "mine.csv"
    f.write_text("id,question,answers,hint_2,hint_1,convergence_1,convergence_2,type\n"
                 "q1,Which planet?,Mars|the Red Planet,Second hint,First hint,0.2,0.8,LOC\n"
                 'q2,"Who, then?",Ada,,"Only, hint",,,HUM\n', encoding="utf-8")
    q1, q2 = load_questions(f)
    assert q1.answers == ["Mars", "the Red Planet"]
    assert [(h.text, h.convergence) for h in q1.hints] == [("First hint", 0.2), ("Second hint", 0.8)]
    assert q1.metadata == {"type": "LOC"}
    assert q2.text == "Who, then?" and [h.text for h in q2.hints] == ["Only, hint"]
    tsv = tmp_path / "mine.tsv"
    tsv.write_text("id\tquestion\tanswers\thint_1\nq1\tWhich, planet?\tMars\tRed, dusty.\n", encoding="utf-8")
    (t1,) = load_questions(tsv)
    assert (t1.text, t1.answers, t1.hints[0].text) == ("Which, planet?", ["Mars"], "Red, dusty.")


@pytest.mark.parametrize("name,content,record,field", [
    ("bad.json", '[{"id": "a",', None, None),                                     # malformed JSON
    ("bad.jsonl", '{"id": "a", "question": "q", "answers": ["x"], "hints": []}\n{oops\n', "line 2", None),
    ("w.json", json.dumps([{"id": "t1", "question": {"question": "q"}, "hints": []}]), "0 (id t1)", "answer"),
    ("w.json", json.dumps([wikihint_record(answer=" ")]), "0 (id test_1)", "answer.answer"),   # empty answer
    ("w.json", json.dumps([wikihint_record(), wikihint_record()]), "test_1", "id"),           # duplicate ids
    ("t.json", json.dumps([{**triviahg_early(), "ExactAnswer": ["", "?!"]}]), "0 (id Q_dev_1)", "ExactAnswer"),
    ("g.jsonl", json.dumps({"id": "a", "question": "q", "answers": ["x"], "hints": [{"txt": "h"}]}), "line 1",
     "hints[0].text"),
    ("g.jsonl", json.dumps({"id": "a", "question": "q", "answers": ["x"], "hints": [{"text": "h",
                                                                                     "convergence": "high"}]}),
     "line 1", "hints[0].convergence"),
    ("c.csv", "id,question,hint_1\nq,Q?,h\n", "header", "answers"),
    ("u.json", json.dumps({"questions": []}), None, None),                        # unknown format
    ("empty.json", "[]", None, None),
])
def test_bad_input_names_file_record_and_field(tmp_path, name, content, record, field):
    f = tmp_path / name
    f.write_text(content, encoding="utf-8")
    with pytest.raises(InputError) as exc:
        load_questions(f)
    assert exc.value.file == str(f)
    assert exc.value.record == record and exc.value.field == field


def test_unknown_format_name_and_missing_file(tmp_path):
    with pytest.raises(InputError, match="unknown format 'xml'"):
        load_questions(tmp_path / "x.json", "xml")
    with pytest.raises(InputError, match="not found"):
        load_questions(tmp_path / "x.json")


def _plugin_data_formats():
    """A third party's two source formats: `.qa` files (`id|question|answer|hint;hint` lines),
    and JSON arrays of {"id", "question", "answers", "clues"}, a shape the generic format takes too."""
    from inferqa.io import iter_lines, read_json
    from inferqa.records import Hint, Question
    from inferqa.registry import plugin

    @plugin("data-format", "pipes", suffixes=(".qa",), help="id|question|answer|hint;hint lines")
    def pipes(path, data):
        out = []
        for _, line in iter_lines(path):
            qid, text, answer, hints = line.rstrip("\n").split("|")
            out.append(Question(id=qid, text=text, answers=[answer], hints=[Hint(text=h) for h in hints.split(";")],
                                metadata={"source_format": "pipes"}))
        return out

    def has_clues(obj):
        return isinstance(obj, dict) and "clues" in obj

    @plugin("data-format", "quiz", looks_like=has_clues, help="JSON quizzes with clues")
    def quiz(path, data):
        return [Question(id=o["id"], text=o["question"], answers=o["answers"],
                         hints=[Hint(text=c.upper()) for c in o["clues"]], metadata={"source_format": "quiz"})
                for o in (read_json(path) if data is None else data)]


def test_a_registered_data_format_is_sniffed_without_format(tmp_path, scratch):
    from inferqa import registry

    quiz = [{"id": "z1", "question": "Which metal?", "answers": ["Cobalt"], "clues": ["blue glass", "number 27"]}]
    write_json(tmp_path / "quiz.json", quiz)
    (tmp_path / "two.qa").write_text("p1|Which river?|Humber|an estuary;Hull lies on it\n", encoding="utf-8")
    assert sniff(tmp_path / "quiz.json")[0] == "jsonl"  # before the plugin: the generic format takes it
    _plugin_data_formats()
    assert {"pipes", "quiz"} <= set(registry.available("data-format"))
    # the generic format is asked last (claim_order 1), so the plugin's shape wins over it, though "quiz" > "jsonl"
    assert sniff(tmp_path / "quiz.json")[0] == "quiz" and sniff(tmp_path / "two.qa")[0] == "pipes"
    (q,) = load_questions(tmp_path / "quiz.json")
    assert (q.id, q.text, q.answers, [h.text for h in q.hints], q.metadata) == (
        "z1", "Which metal?", ["Cobalt"], ["BLUE GLASS", "NUMBER 27"], {"source_format": "quiz"})
    (p,) = load_questions(tmp_path / "two.qa")
    assert (p.id, p.answers, [h.text for h in p.hints]) == ("p1", ["Humber"], ["an estuary", "Hull lies on it"])
    # a file no format claims by its ending or its first record is still the one unknown-format line
    write_json(tmp_path / "other.json", [{"title": "x"}])
    with pytest.raises(InputError, match="unknown format: not WikiHint") as exc:
        load_questions(tmp_path / "other.json")
    assert exc.value.record == 0
    # the built-in formats are told apart as before
    write_json(tmp_path / "release.json", [quit_record()])
    assert sniff(tmp_path / "release.json")[0] == "quit"
    with pytest.raises(InputError, match="field 'hints': missing field"):  # an explicit --format still wins
        load_questions(tmp_path / "quiz.json", "jsonl")


def test_demo_questions_load():
    questions = load_questions(demo_path())
    assert len(questions) >= 40
    assert all(len(q.hints) >= 6 and q.answers for q in questions)


def test_real_wikihint_file(wikihint_file):
    questions = load_questions(wikihint_file)
    assert len(questions) == 100 and {len(q.hints) for q in questions} == {5}
    q62 = next(q for q in questions if q.id == "test_62")
    assert q62.answers == ["It"]
    assert all(h.convergence is not None for q in questions for h in q.hints)


def test_real_triviahg_file(triviahg_file):
    questions = load_questions(triviahg_file)
    raw = json.loads(triviahg_file.read_text(encoding="utf-8"))
    assert len(questions) == 1000 == len({q.id for q in questions})
    assert sum(len(q.hints) for q in questions) == sum(len(r["Hints"]) for r in raw)
    assert sum("[^" in h for r in raw for h in r["Hints"]) > 0
    assert not any("[^" in h.text or "  " in h.text for q in questions for h in q.hints)
    assert min(len(q.hints) for q in questions) >= 6
