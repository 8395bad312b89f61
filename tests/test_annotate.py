"""Human verification round-trip: export a review sheet, fill verdicts, import, re-import.

The benchmark is built by `build_benchmark` from two hand-written questions with three
hints each (15 passages per question); labels.jsonl is written as the labeller writes it,
from two scripted labellers whose answers depend on the passage's hint order:

  labeller a (first hint decides)        labeller b (number of hints decides)
  p: h0 "Red Planet" (judged correct)    p: 1 "Jupiter" x, 2 "Mars planet" x, 3 "Mars" ok
     h1 "Mars" ok, h2 "Venus" x
  i: h0 "pianoforte" ok, h1 "Piano" ok,  i: 1 "organ" x, 2 "grand piano" x, 3 "Piano" ok
     h2 "harpsichord" (judged correct)
"""

from __future__ import annotations

import csv
import hashlib
import json
import subprocess
import sys
from itertools import permutations
from pathlib import Path

import pytest

from inferqa.formats import iter_corpus
from inferqa.annotate import export_sheet, import_sheet
from inferqa.annotate.candidates import collect_candidates
from inferqa.formats import LabelRow, Labels, Qrels
from inferqa.annotate.state import VerificationState
from inferqa.formats.benchmark import Benchmark
from inferqa.errors import InputError
from inferqa.records import Hint, Question, passage_id

GOLD = {"p": "Mars", "i": "Piano"}
FIRST_HINT = {"p": [("Red Planet", True), ("Mars", True), ("Venus", False)],
              "i": [("pianoforte", True), ("Piano", True), ("harpsichord", True)]}
BY_LENGTH = {"p": {1: "Jupiter", 2: "Mars planet", 3: "Mars"}, "i": {1: "organ", 2: "grand piano", 3: "Piano"}}


def all_orders(n=3):
    return [order for k in range(1, n + 1) for order in permutations(range(n), k)]


def label_rows(qid):
    rows = []
    for order in all_orders():
        a, a_ok = FIRST_HINT[qid][order[0]]
        b = BY_LENGTH[qid][len(order)]
        b_ok = b == GOLD[qid]
        rows.append({"pid": passage_id(qid, order, 3), "qid": qid, "label": 2 if a_ok or b_ok else 1,
                     "answers": {"llm:a": a, "llm:b": b}, "correct": {"llm:a": a_ok, "llm:b": b_ok},
                     "copied_from": None})
    return rows


@pytest.fixture
def bench(bench_factory, tmp_path):
    qs = [Question("p", "Which planet is red?", ["Mars"],
                   [Hint("It is called the Red Planet for its rusty dust", 0.9),
                    Hint("Two small moons, Phobos and Deimos, circle it", 0.8),
                    Hint("Fourth from the sun", 0.7)]),
          Question("i", "Which instrument has 88 keys?", ["Piano"],
                   [Hint("Felt hammers strike its strings", 0.9), Hint("Chopin wrote mostly for it", 0.8),
                    Hint("A grand one sits in concert halls", 0.7)])]
    path = bench_factory(qs, root=tmp_path, leak_policy="drop-hint").path
    rows = label_rows("p") + label_rows("i")
    Labels(LabelRow(**r) for r in rows).to_file(path / "labels.jsonl")
    qrels = Qrels()
    for r in rows:
        qrels.setdefault(r["qid"], {})[r["pid"]] = r["label"]
    qrels.to_file(path / "qrels.tsv")
    return path


def read_csv(path):
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def write_csv(path, rows):
    with open(path, "w", newline="", encoding="utf-8") as fh:
        w = csv.DictWriter(fh, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)


def snapshot(path: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(path.iterdir())}


def labels_of(path):
    return {json.loads(line)["pid"]: json.loads(line)["label"] for line in open(path / "labels.jsonl")}


VERDICTS = {("p", "Red Planet"): "accept", ("p", "Mars planet"): "yes", ("i", "harpsichord"): "reject",
            ("i", "pianoforte"): "Accept", ("i", "grand piano"): "skip"}


def filled(sheet_path, out_path):
    rows = read_csv(sheet_path)
    for r in rows:
        r["verdict"] = VERDICTS[(r["qid"], r["answer"])]
    write_csv(out_path, rows)
    return out_path


def test_export_lists_distinct_accepted_and_contested_answers(bench, tmp_path):
    summary = export_sheet(bench, tmp_path / "sheet.csv")
    rows = read_csv(tmp_path / "sheet.csv")
    got = [(r["qid"], r["answer"], r["judge"], int(r["passages"]), int(r["decides"])) for r in rows]
    # Worked by hand from the table in the module doc. Orderings per first hint: 1 + 2 + 2 = 5;
    # 2-hint orderings: 6. "decides" leaves out passages where another answer is judged correct.
    assert got == [
        ("p", "Red Planet", "correct", 5, 3),    # 3-hint orderings have b "Mars" correct
        ("p", "Mars planet", "wrong", 6, 2),     # contested; only the two starting with h2 (Venus)
        ("i", "harpsichord", "correct", 5, 3),
        ("i", "pianoforte", "correct", 5, 3),
        ("i", "grand piano", "wrong", 6, 0),     # contested; a is judged correct everywhere
    ]
    assert [r["verdict"] for r in rows] == [""] * 5
    assert rows[0]["gold_answers"] == "Mars" and rows[0]["question"] == "Which planet is red?"
    assert rows[1]["reason"].startswith("contested")
    assert (summary.rows, summary.questions, summary.judged_correct, summary.contested) == (5, 2, 3, 2)
    assert summary.passages == 5 + 6 - 2 + 5 + 5 + 6 - 2 - 2  # union per question: p 9, i 12


def test_min_f1_is_checked_as_declared(bench, tmp_path, monkeypatch, capsys):
    """--min-f1 / export_sheet(min_f1=) read as inferqa.parameters.MIN_F1 declares it: None is its default."""
    from conftest import one_line_error, run_cli as run_in_process
    from inferqa.parameters import MIN_F1

    with pytest.raises(InputError, match=r"option 'min_f1' takes a number in \[0, 1\], not 1.5"):
        export_sheet(bench, tmp_path / "sheet.csv", min_f1=1.5)
    assert not (tmp_path / "sheet.csv").exists()
    assert read_csv(export_sheet(bench, tmp_path / "a.csv").path) == \
        read_csv(export_sheet(bench, tmp_path / "b.csv", min_f1=MIN_F1.default).path)
    code, _, err = run_in_process(monkeypatch, capsys, "annotate", "export", bench, "--out", tmp_path / "c.csv",
                                  "--min-f1", "2")
    one_line_error(code, err, "'min_f1'", "[0, 1]")
    assert not (tmp_path / "c.csv").exists()


def test_export_by_split_and_jsonl(bench, tmp_path):
    splits = Benchmark(bench).splits
    test_qids = splits["test"]
    export_sheet(bench, tmp_path / "s.jsonl", split="test")
    rows = [json.loads(line) for line in open(tmp_path / "s.jsonl")]
    assert rows and {r["qid"] for r in rows} == set(test_qids)
    assert set(rows[0]) >= {"qid", "question", "gold_answers", "answer", "judge", "passages", "decides", "verdict"}


def test_round_trip_relabels_adds_aliases_drops_leaking_hint_and_is_idempotent(bench, tmp_path):
    export_sheet(bench, tmp_path / "sheet.csv")
    sheet = filled(tmp_path / "sheet.csv", tmp_path / "done.csv")
    before = labels_of(bench)
    s = import_sheet(bench, sheet, annotator="ada")
    assert (s.accepted, s.rejected, s.skipped) == (3, 1, 1)
    # p: accepting "Mars planet" lifts (2,0) and (2,1); i: rejecting "harpsichord" lowers (2,), (2,0), (2,1).
    assert (s.to_answerable, s.to_partial) == (2, 3)
    assert s.aliases_added == [("p", "Red Planet"), ("p", "Mars planet"), ("i", "pianoforte")]
    # "Red Planet" is written in p's hint 0: drop-hint (the build's policy) removes its 11 passages.
    assert [(f.qid, f.hint, f.alias) for f in s.leaks] == [("p", 0, "Red Planet")]
    assert s.leak_action == "drop-hint" and s.passages_dropped == 11 and s.questions_dropped == []

    after = labels_of(bench)
    assert {pid for pid in before if pid.startswith("p_")} - set(after) == \
        {passage_id("p", o, 3) for o in all_orders() if 0 in o}
    assert {pid: lab for pid, lab in after.items() if pid.startswith("p_")} == {
        "p_010_1": 2, "p_001_2": 1, "p_011_12": 2, "p_011_21": 2}
    changed_i = {pid: (before[pid], after[pid]) for pid in after if pid.startswith("i_") and before[pid] != after[pid]}
    assert changed_i == {"i_001_2": (2, 1), "i_101_20": (2, 1), "i_011_21": (2, 1)}

    b = Benchmark(bench)
    assert b.qrels["p"] == {pid: lab for pid, lab in after.items() if pid.startswith("p_")}
    assert b.questions["p"].answers == ["Mars", "Red Planet", "Mars planet"]
    assert b.questions["i"].answers == ["Piano", "pianoforte"]
    assert b.questions["p"].metadata["dropped_hints"] == [0]
    assert len(b.questions["p"].hints) == 3  # kept so that surviving passage ids stay valid
    corpus_p = [p.id for p in iter_corpus(b) if p.qid == "p"]
    assert sorted(corpus_p) == sorted(["p_010_1", "p_001_2", "p_011_12", "p_011_21"])
    meta = b.meta
    rnd = meta["label_verification"]["rounds"][-1]
    assert rnd["annotator"] == "ada" and rnd["timestamp"] and rnd["labels_1_to_2"] == 2
    assert meta["label_verification"]["verdicts"]["i"] == {"harpsichord": "reject", "pianoforte": "accept"}
    assert meta["counts"]["passages"] == 30 - 11
    assert meta["labels"] == {"1": sum(v == 1 for v in after.values()), "2": sum(v == 2 for v in after.values())}
    rows = [json.loads(line) for line in open(bench / "labels.jsonl")]
    r = next(r for r in rows if r["pid"] == "i_001_2")
    assert r["correct"] == {"llm:a": False, "llm:b": False} and r["answers"]["llm:a"] == "harpsichord"

    files = snapshot(bench)
    again = import_sheet(bench, sheet, annotator="bob")
    assert not again.changed and snapshot(bench) == files
    assert not list(bench.glob(".*tmp"))


def test_second_round_rejecting_an_added_alias_removes_it(bench, tmp_path):
    export_sheet(bench, tmp_path / "sheet.csv")
    import_sheet(bench, filled(tmp_path / "sheet.csv", tmp_path / "done.csv"), annotator="ada")
    export_sheet(bench, tmp_path / "again.csv")
    rows = read_csv(tmp_path / "again.csv")
    prev = {(r["qid"], r["answer"]): r["previous_verdict"] for r in rows}
    assert prev[("i", "pianoforte")] == "accept" and prev[("i", "harpsichord")] == "reject"
    for r in rows:
        r["verdict"] = "reject" if r["answer"] == "pianoforte" else "skip"
    write_csv(tmp_path / "r2.csv", rows)
    s = import_sheet(bench, tmp_path / "r2.csv", annotator="bob")
    assert s.aliases_removed == [("i", "pianoforte")]
    # pianoforte was a's answer after h0; b is correct only on 3-hint orderings.
    assert s.to_partial == 3 and s.to_answerable == 0
    b = Benchmark(bench)
    assert b.questions["i"].answers == ["Piano"]
    assert [r["annotator"] for r in b.meta["label_verification"]["rounds"]] == ["ada", "bob"]


def test_drop_question_and_flag_policies(bench, tmp_path):
    export_sheet(bench, tmp_path / "sheet.csv")
    sheet = filled(tmp_path / "sheet.csv", tmp_path / "done.csv")
    flagged = tmp_path / "flag"
    import shutil
    shutil.copytree(bench, flagged)

    s = import_sheet(bench, sheet, annotator="ada", leak_action="drop-question")
    assert s.questions_dropped == ["p"] and s.passages_dropped == 15
    b = Benchmark(bench)
    assert set(b.questions) == {"i"} and "p" not in b.qrels
    assert all("p" not in ids for ids in b.splits.values())
    assert all(p.qid == "i" for p in iter_corpus(b))
    assert b.meta["counts"]["questions"] == 1 and sum(b.meta["splits"].values()) == 1
    files = snapshot(bench)
    assert not import_sheet(bench, sheet, annotator="ada").changed  # p's rows are skipped, not unknown
    assert snapshot(bench) == files

    s = import_sheet(flagged, sheet, annotator="ada", leak_action="flag")
    assert s.passages_dropped == 0 and len(s.leaks) == 1
    b = Benchmark(flagged)
    assert len(b.qrels["p"]) == 15
    assert b.meta["label_verification"]["flagged_leaks"] == [{"qid": "p", "hint": 0, "alias": "Red Planet"}]


@pytest.mark.parametrize("edit, message", [
    (lambda rows: rows[2].update(qid="zz"), "row 4.*unknown question 'zz'"),
    (lambda rows: rows[1].update(answer="Saturn"), "row 3.*unknown answer 'Saturn'"),
    (lambda rows: rows[3].update(verdict=""), "row 5.*empty verdict"),
    (lambda rows: rows[0].update(verdict="maybe"), "row 2.*invalid verdict 'maybe'"),
    (lambda rows: rows[4].update(answer="Piano"), "row 6.*gold answer"),
    (lambda rows: rows[4].update(answer="the PIANOFORTE!"), "row 6.*also on row 5"),
])
def test_malformed_sheets_are_rejected_whole(bench, tmp_path, edit, message):
    export_sheet(bench, tmp_path / "sheet.csv")
    rows = read_csv(filled(tmp_path / "sheet.csv", tmp_path / "done.csv"))
    edit(rows)
    write_csv(tmp_path / "bad.csv", rows)
    files = snapshot(bench)
    with pytest.raises(InputError, match=message):
        import_sheet(bench, tmp_path / "bad.csv", annotator="ada")
    assert snapshot(bench) == files


def test_missing_verdict_column_and_jsonl_sheet(bench, tmp_path):
    export_sheet(bench, tmp_path / "sheet.csv")
    rows = read_csv(filled(tmp_path / "sheet.csv", tmp_path / "done.csv"))
    write_csv(tmp_path / "nocol.csv", [{k: v for k, v in r.items() if k != "verdict"} for r in rows])
    with pytest.raises(InputError, match="row 1.*missing column 'verdict'"):
        import_sheet(bench, tmp_path / "nocol.csv", annotator="ada")
    with open(tmp_path / "done.jsonl", "w") as fh:
        for r in rows:
            fh.write(json.dumps({"qid": r["qid"], "answer": r["answer"], "verdict": r["verdict"]}) + "\n")
    s = import_sheet(bench, tmp_path / "done.jsonl", annotator="ada", dry_run=True)
    assert s.changed and (s.to_answerable, s.to_partial) == (2, 3) and s.files_written == []
    assert "labels.jsonl" in import_sheet(bench, tmp_path / "done.jsonl", annotator="ada").files_written


def test_failed_write_leaves_everything_untouched(bench, tmp_path, monkeypatch):
    import inferqa.formats.bench_write as bench_write

    export_sheet(bench, tmp_path / "sheet.csv")
    sheet = filled(tmp_path / "sheet.csv", tmp_path / "done.csv")
    files = snapshot(bench)

    def boom(path, obj):
        raise OSError("disk full")

    monkeypatch.setattr(bench_write, "write_json", boom)  # meta.json is written last
    with pytest.raises(OSError):
        import_sheet(bench, sheet, annotator="ada")
    assert snapshot(bench) == files


def test_copied_rows_follow_their_source(tmp_path, bench):
    rows = [json.loads(line) for line in open(bench / "labels.jsonl")]
    # Make p_01_10's answers come from p_01_01 (subsets-style copy with empty answers).
    for r in rows:
        if r["pid"] == "p_110_10":
            r.update(answers={}, correct={}, copied_from="p_110_01")
    with open(bench / "labels.jsonl", "w") as fh:
        fh.writelines(json.dumps(r) + "\n" for r in rows)
    cands = collect_candidates(Labels.from_file(bench / "labels.jsonl"), Benchmark(bench).questions,
                               VerificationState())
    red = cands[("p", "red planet")]
    assert "p_110_10" in red.passages  # copied from an ordering that starts with h0
    assert cands[("p", "mars")].is_gold and not cands[("p", "mars")].exportable


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "inferqa", "annotate", *map(str, args)], capture_output=True,
                          text=True, env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"})


def test_cli_export_import_and_error_exit(bench, tmp_path):
    r = run_cli("export", bench, "--out", tmp_path / "sheet.csv")
    assert r.returncode == 0, r.stderr
    assert "wrote 5 answers" in r.stdout
    filled(tmp_path / "sheet.csv", tmp_path / "done.csv")
    rows = read_csv(tmp_path / "done.csv")
    rows[0]["verdict"] = "perhaps"
    write_csv(tmp_path / "bad.csv", rows)
    r = run_cli("import", bench, tmp_path / "bad.csv", "--annotator", "ada")
    assert r.returncode == 2 and r.stderr.count("\n") == 1 and "row 2" in r.stderr and "Traceback" not in r.stderr
    r = run_cli("import", bench, tmp_path / "done.csv", "--annotator", "ada")
    assert r.returncode == 0, r.stderr
    assert "labels: 2 passages 1 -> 2, 3 passages 2 -> 1" in r.stdout and "leak (drop-hint)" in r.stdout


def test_a_sheet_is_told_by_the_suffixes_its_sheet_format_declares():
    """The registry's `claimed` sniffs sheets as it does runs and sources; any other ending is CSV."""
    from inferqa import registry
    from inferqa.formats.sheets import guess_format

    assert set(registry.available("sheet-format")) == {"csv", "jsonl"}
    endings = (".csv", ".CSV", ".jsonl", ".json", ".NDJSON", ".tsv", "")
    assert [guess_format(f"sheet{e}") for e in endings] == ["csv", "csv", "jsonl", "jsonl", "jsonl", "csv", "csv"]
    assert guess_format("sheet.csv", "jsonl") == "jsonl"


def test_the_python_functions_are_the_commands(bench, tmp_path):
    """`inferqa.annotate.stage`'s functions check, guard and record as `inferqa annotate` does."""
    from inferqa.annotate.stage import annotate_export, annotate_import
    from inferqa.formats.outputs import is_own

    summary = annotate_export(bench, out=tmp_path / "sheet.csv")
    assert (summary.rows, summary.questions) == (5, 2) and is_own(tmp_path / "sheet.csv", "annotate export")
    with pytest.raises(InputError, match=r"^annotate export: option 'min_f1' takes a number in \[0, 1\], not 1.5$"):
        annotate_export(bench, out=tmp_path / "other.csv", min_f1=1.5)
    filled(tmp_path / "sheet.csv", tmp_path / "done.csv")
    before = (Path(bench) / "labels.jsonl").read_bytes()
    annotate_import(bench, tmp_path / "done.csv", annotator="ada", dry_run=True)
    assert (Path(bench) / "labels.jsonl").read_bytes() == before
    with pytest.raises(InputError, match="leak-judge 'string' has no option 'threshold'"):  # a judge option given
        annotate_import(bench, tmp_path / "done.csv", annotator="ada", leak_threshold=0.9)
    lines = annotate_import(bench, tmp_path / "done.csv", annotator="ada").lines()
    assert any("labels: 2 passages 1 -> 2, 3 passages 2 -> 1" in line for line in lines), lines
