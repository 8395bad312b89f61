"""The one reading layer: every command reads runs through `formats.open_run`, so `optimal`,
the id checks, `--allow-partial` and the doctor's findings mean the same everywhere."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from inferqa.errors import InputError
from inferqa.evaluation.doctor import diagnose
from inferqa.formats import iter_corpus, Run, open_run, optimal

from conftest import one_line_error, run_cli


@pytest.fixture(scope="module")
def bench(bench_factory):
    return bench_factory(4)


def test_optimal_is_a_run_wherever_a_run_is_read(bench, tmp_path, monkeypatch, capsys):
    test = bench.split_qids("test")
    want = optimal(bench, test)
    run = open_run("optimal", bench, "test"); qids = run.qids
    assert run == want and qids == test and len(run[test[0]]) == 15  # 15 passages of 3 hints, all relevant
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", "optimal", "--bench", bench.path, "--split", "test",
                             "--json", "-m", "hit@1,mrr,ndcg@10")
    assert code in (0, None), err
    assert json.loads(out)["metrics"] == {"hit@1": 1.0, "mrr": 1.0, "ndcg@10": 1.0}
    code, _, err = run_cli(monkeypatch, capsys, "export", "rankify", "--bench", bench.path, "--split", "test",
                           "--run", "optimal", "--out", tmp_path / "o.json")
    assert code in (0, None), err
    assert Run.from_file(tmp_path / "o.json", bench=bench, split="test") == want
    with pytest.raises(InputError, match="give --bench"):
        open_run("optimal")


def test_a_partial_json_run_needs_allow_partial(bench, tmp_path, monkeypatch, capsys):
    test = bench.split_qids("test")
    first = list(bench.qrels[test[0]])[:3]
    path = tmp_path / "part.json"
    path.write_text(json.dumps([{"question": bench.questions[test[0]].text,
                                 "ctxs": [{"id": p, "score": 3.0 - i} for i, p in enumerate(first)]}]))
    with pytest.raises(InputError, match="1 questions in the run but 2 in split 'test'"):
        open_run(path, bench, "test")
    run = open_run(path, bench, "test", allow_partial=True); qids = run.qids
    assert qids == [test[0]] and [p for p, _ in run[test[0]]] == first
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", path, "--bench", bench.path, "--split", "test",
                             "--allow-partial", "--json", "-m", "hit@1", "--questions", "run")
    assert code in (0, None), err
    assert json.loads(out)["questions"] == 1 and json.loads(out)["metrics"] == {"hit@1": 1.0}


def test_fuse_refuses_runs_of_other_questions_unless_allowed(bench, tmp_path, monkeypatch, capsys):
    qs = list(bench.questions)
    a = Run({q: [(p, 1.0) for p in list(bench.qrels[q])[:2]] for q in qs})
    b = Run({q: [(p, 1.0) for p in list(bench.qrels[q])[1:3]] for q in qs[:3]})
    a.to_file(tmp_path / "a.trec")
    b.to_file(tmp_path / "b.trec")
    code, _, err = run_cli(monkeypatch, capsys, "fuse", tmp_path / "a.trec", tmp_path / "b.trec", "-o",
                           tmp_path / "f.trec")
    assert code == 2 and "b.trec" in err and f"1 of its questions missing (e.g. {qs[3]})" in err
    assert not (tmp_path / "f.trec").exists()
    code, _, err = run_cli(monkeypatch, capsys, "fuse", tmp_path / "a.trec", tmp_path / "b.trec", "-o",
                           tmp_path / "f.trec", "--allow-partial")
    assert code in (0, None), err
    assert set(Run.from_file(tmp_path / "f.trec")) == set(qs)


def test_doctor_is_never_ok_where_evaluate_refuses(bench, tmp_path):
    q = bench.split_qids("test")[0]
    assert bench.mask_bits == "left-to-right"
    pids = list(bench.qrels[q])
    two = next(p for p in pids if p.rsplit("_", 2)[1] == "110")  # hints 0 and 1, mask read from the left
    mirrored = two.replace("_110_", "_011_")  # names the same hints read from the right: not this corpus
    lines = [f"{q} Q0 {pids[0]} 1 3.0 t", f"{q} Q0 {mirrored} 2 2.0 t", f"{q} Q0 {pids[2]} 3 2.5 t",
             f"{q} Q0 {pids[3]} 4 nan t"]
    (tmp_path / "r.trec").write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError):
        open_run(tmp_path / "r.trec", bench)
    report = diagnose(tmp_path / "r.trec", bench, "test")
    c = report["checks"]
    assert c["ids_not_in_corpus"]["examples"] == [f"{q} rank 2: {mirrored}"]
    assert c["unsorted_ranks"]["count"] == 1 and c["nan_scores"]["count"] == 1 and not report["ok"]
    run = open_run(tmp_path / "r.trec", bench, strict=False)
    assert [p for p, _ in run[q]] == [pids[0], mirrored, pids[2], pids[3]]  # read past every finding


def test_rankify_reading_is_strict_about_its_fields(bench, tmp_path):
    test = bench.split_qids("test")
    texts = [bench.questions[q].text for q in test]
    own = list(bench.qrels[test[0]])
    path = tmp_path / "r.json"
    for record, field in (({"question": texts[0]}, "ctxs"),
                          ({"question": texts[0], "ctxs": [{"id": own[0], "score": {"x": 1}}]}, "ctxs[0].score"),
                          ({"question": texts[0], "ctxs": [{"id": own[0], "title": ["t"]}]}, "ctxs[0].title"),
                          ({"question": texts[0], "ctxs": [{"id": None}]}, "ctxs[0].id")):
        path.write_text(json.dumps([record, {"question": texts[1], "ctxs": []}]))
        with pytest.raises(InputError) as exc:
            Run.from_file(path, bench=bench, split="test")
        assert exc.value.field == field and exc.value.record == f"0 (question {test[0]})"
    # the record without a ranking is a finding for the doctor, not an empty ranking
    path.write_text(json.dumps([{"question": texts[0]}, {"question": texts[1], "ctxs": []}]))
    assert open_run(path, bench, "test", strict=False).findings == {"records_without_ranking": [test[0]]}


def test_the_runner_parses_and_evaluates_each_stage_once(tmp_path, monkeypatch):
    from inferqa.experiments import runner as runner_mod
    from inferqa.experiments.config import load_config

    cfg = tmp_path / "grid.yaml"
    cfg.write_text("name: once\nbenchmark: {demo: true}\nsplit: test\nmax_questions: 4\n"
                   "retrievers: [{name: bm25, kind: bm25}]\noracles: {reranker: true, optimal: true}\n")
    parsed, evaluated = [], []
    real_load = Run.from_file
    monkeypatch.setattr(Run, "from_file", lambda path, *a, **k: parsed.append(path) or real_load(path, *a, **k))
    import inferqa.evaluation as ev

    real = ev.evaluate
    monkeypatch.setattr(ev, "evaluate", lambda *a, **k: evaluated.append(k.get("per_query")) or real(*a, **k))
    outcome = runner_mod.run_experiment(load_config(cfg), tmp_path / "out", progress=False, log=lambda s: None)
    stages = {r.stage for r in outcome.results.ranking}
    # retrieve-bm25, rerank-bm25-oracle, retrieve-optimal: each read once, its metrics evaluated once (were
    # 6 reads and 2 evaluations), and its hit curve once
    assert len(stages) == 3 and len(parsed) == len(set(parsed)) == 3
    assert evaluated.count(True) == 3 and len(evaluated) == 6


def _toy_run_format():
    """A third party's run format: `qid<TAB>pid<TAB>score` lines, files ending in .tsv."""
    from inferqa.formats import RunFormat
    from inferqa.io import atomic_open, iter_lines
    from inferqa.registry import plugin

    @plugin("run-format", "toy-tsv", suffixes=(".tsv",), help="qid, pid, score per line")
    class ToyTsv(RunFormat):
        def read(self, path, bench, split, *, findings, allow_partial=False, allow_duplicates=False):
            run = Run(tag="toy")
            for lineno, line in iter_lines(path):
                qid, pid, score = line.rstrip("\n").split("\t")
                run.setdefault(qid, []).append((pid, float(score)))
            return run, []

        def write(self, run, path, *, tag=None):
            with atomic_open(path) as fh:
                fh.writelines(f"{qid}\t{pid}\t{score}\n" for qid, ranked in run.items() for pid, score in ranked)


def test_a_registered_run_format_is_read_and_written_by_its_suffix(bench, tmp_path, scratch, monkeypatch, capsys):
    import gzip

    from inferqa import registry

    _toy_run_format()
    test = bench.split_qids("test")
    run = Run({q: [(p, 3.0 - i) for i, p in enumerate(list(bench.qrels[q])[:3])] for q in test})
    run.to_file(tmp_path / "r.tsv")
    first = list(bench.qrels[test[0]])[:3]
    assert (tmp_path / "r.tsv").read_text().splitlines()[:3] == [f"{test[0]}\t{first[0]}\t3.0",
                                                                 f"{test[0]}\t{first[1]}\t2.0",
                                                                 f"{test[0]}\t{first[2]}\t1.0"]
    got = open_run(tmp_path / "r.tsv", bench, "test"); qids = got.qids
    assert got == run and qids == test and got.format == "toy-tsv"
    # compressed, the name before .gz chooses it; a named format wins over the file's ending
    (tmp_path / "r.tsv.gz").write_bytes(gzip.compress((tmp_path / "r.tsv").read_bytes()))
    assert Run.from_file(tmp_path / "r.tsv.gz") == run
    run.to_file(tmp_path / "r.txt", "toy-tsv")
    assert (tmp_path / "r.txt").read_text() == (tmp_path / "r.tsv").read_text()
    assert Run.from_file(tmp_path / "r.tsv").format == "toy-tsv"
    # its runs are checked against the benchmark like any other
    (tmp_path / "bad.tsv").write_text(f"{test[0]}\tnope_101_02\t1.0\n")
    with pytest.raises(InputError, match="unknown passage id"):
        open_run(tmp_path / "bad.tsv", bench)
    # and every command reads it: export rankify converts it
    code, _, err = run_cli(monkeypatch, capsys, "export", "rankify", "--bench", bench.path, "--split", "test",
                           "--run", tmp_path / "r.tsv", "--no-text", "--out", tmp_path / "r.json")
    assert code in (0, None), err
    assert [c["id"] for c in json.loads((tmp_path / "r.json").read_text())[0]["ctxs"]] == first
    assert "toy-tsv" in registry.available("run-format")


def test_run_formats_are_the_registrys(bench, tmp_path):
    from inferqa import registry

    assert {"trec", "rankify"} <= set(registry.available("run-format"))
    assert "toy-tsv" not in registry.available("run-format")  # the toy of the test above is gone
    run = Run({"q": [("q_1_0", 1.0)]})
    with pytest.raises(InputError, match=r"unknown run-format 'trek' \(did you mean 'trec'\?\)"):
        run.to_file(tmp_path / "r.trec", "trek")
    with pytest.raises(InputError, match="a Rankify JSON run is written in a split's dataset order"):
        run.to_file(tmp_path / "r.json", "rankify")
    assert not (tmp_path / "r.json").exists()
    run.to_file(tmp_path / "r.json")  # no format claims .json: TREC, as before
    assert (tmp_path / "r.json").read_text() == "q Q0 q_1_0 1 1.000000 inferqa\n"
    test = bench.split_qids("test")
    own = Run({test[0]: [(p, 1.0 / (i + 1)) for i, p in enumerate(list(bench.qrels[test[0]])[:2])]})
    own.to_file(tmp_path / "own.json", "rankify", bench=bench, split="test", with_text=False)
    data = json.loads((tmp_path / "own.json").read_text())
    assert [c["id"] for c in data[0]["ctxs"]] == [p for p, _ in own[test[0]]] and data[1]["ctxs"] == []
    assert Run.from_file(tmp_path / "own.json", bench=bench, split="test").format == "rankify"


def test_doctor_from_python_checks_as_the_command_does(bench, tmp_path):
    from inferqa.evaluation.stage import doctor

    test = bench.split_qids("test")
    Run({q: [(p, -float(i)) for i, p in enumerate(bench.qrels[q])] for q in test}).to_file(tmp_path / "r.trec")
    report = doctor(tmp_path / "r.trec", bench=bench.path, split="test")
    assert report == diagnose(tmp_path / "r.trec", bench, "test")
    assert report["ok"] and report["questions"] == len(test) and report["longest_tie"] == 1
    with pytest.raises(InputError) as bad:
        doctor(tmp_path / "r.trec", bench=bench.path, tie_length=1)
    assert str(bad.value) == "doctor: option 'tie_length' takes an integer ≥ 2, not 1"


def test_a_registered_export_target_is_run_by_inferqa_export(bench, tmp_path, scratch, monkeypatch, capsys):
    from inferqa.io import atomic_open
    from inferqa.registry import Option, plugin

    out = tmp_path / "ids.txt"
    seen = {}

    @plugin("export", "toy-ids", Option("upper", bool, False, "upper-case ids"), counts="passages",
            help="the corpus's passage ids, one a line")
    def toy_ids(bench_, path, split, upper=False):
        ids = [p.id.upper() if upper else p.id for p in iter_corpus(bench_)]
        with atomic_open(path) as fh:
            fh.write("\n".join(ids) + "\n")
            fh.flush()
            seen["during"] = (path.exists(), Path(fh.name).parent == path.parent)
        return len(ids)

    code, text, err = run_cli(monkeypatch, capsys, "export", "toy-ids", "--bench", bench.path, "--out", out)
    assert code in (0, None), err
    ids = [p.id for p in iter_corpus(bench)]
    assert out.read_text().splitlines() == ids and text.strip() == f"{out}: {len(ids):,} passages"
    assert seen["during"] == (False, True)  # written beside the target, renamed onto it at the end
    assert sorted(p for p in tmp_path.iterdir() if p.name != ".inferqa-outputs.json") == [out]  # but its ledger
    code, _, err = run_cli(monkeypatch, capsys, "export", "toy-ids", "--bench", bench.path, "--out", out, "--no-text")
    one_line_error(code, err, "--no-text does not apply to export toy-ids")
    code, _, err = run_cli(monkeypatch, capsys, "export", "toy-ids", "--bench", bench.path, "--out", out,
                           "--opt", "upper=true")
    assert code in (0, None), err
    assert out.read_text().splitlines() == [i.upper() for i in ids]
    code, _, err = run_cli(monkeypatch, capsys, "export", "toy-ids", "--bench", bench.path, "--out", out,
                           "--opt", "uper=true")
    one_line_error(code, err, "export 'toy-ids' has no option 'uper' (did you mean 'upper'?)")


def test_export_targets_are_the_registrys(bench, tmp_path, monkeypatch, capsys):
    out = tmp_path / "x.json"
    code, _, err = run_cli(monkeypatch, capsys, "export", "rankfy", "--bench", bench.path, "--split", "test",
                           "--out", out)
    one_line_error(code, err, "unknown export 'rankfy' (did you mean 'rankify'?); available: pyserini, qrels, rankify, "
                              "retriever-jsonl, topics")
    code, _, err = run_cli(monkeypatch, capsys, "export", "qrels", "--bench", bench.path, "--run", "optimal",
                           "--out", out)
    one_line_error(code, err, "--run does not apply to export qrels")
    code, _, err = run_cli(monkeypatch, capsys, "export", "rankify", "--bench", bench.path, "--split", "test",
                           "--out", out)
    one_line_error(code, err, "export rankify needs --run RUN")
    assert not out.exists()


def test_export_from_python_is_the_command(bench, tmp_path):
    from inferqa.exports import export
    from inferqa.formats.outputs import LEDGER

    out, test = tmp_path / "test.qrels", bench.split_qids("test")
    assert export("qrels", bench=bench, out=out, split="test") == len(test)
    assert sorted({line.split()[0] for line in out.read_text().splitlines()}) == sorted(test)
    assert json.loads((tmp_path / LEDGER).read_text())["test.qrels"]["command"] == "export"
    with pytest.raises(InputError) as bad:
        export("qrels", bench=bench, out=out, split=3)
    assert str(bad.value) == "export: option 'split' takes text or null, not 3 (int)"


def test_a_plugin_distribution_adds_an_export_target_and_a_run_format(tmp_path):
    """The third-party route: a module listed under the `inferqa.plugins` entry points."""
    import subprocess
    import sys

    site = tmp_path / "site"
    (site / "toy_inferqa-0.1.dist-info").mkdir(parents=True)
    (site / "toy_inferqa-0.1.dist-info" / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-inferqa\n"
                                                                  "Version: 0.1\n")
    (site / "toy_inferqa-0.1.dist-info" / "entry_points.txt").write_text("[inferqa.plugins]\ntoy = toy_inferqa\n")
    (site / "toy_inferqa.py").write_text(
        "from inferqa.formats import RunFormat\nfrom inferqa.registry import plugin\n\n"
        "@plugin('export', 'toy-ids', counts='passages', help='passage ids, one a line')\n"
        "def toy_ids(bench, path, split):\n    return 0\n\n"
        "@plugin('run-format', 'toy-tsv', suffixes=('.tsv',), help='qid, pid, score per line')\n"
        "class ToyTsv(RunFormat):\n    pass\n")
    src = Path(__file__).resolve().parents[1] / "src"
    env = {**os.environ, "PYTHONPATH": f"{src}{os.pathsep}{site}", "COLUMNS": "200"}

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "inferqa", *args], env=env, capture_output=True, text=True)

    res = cli("export", "--help")
    assert res.returncode == 0 and "toy-ids: passage ids, one a line" in " ".join(res.stdout.split()), res.stderr
    res = cli("plugins", "run-format")
    assert res.returncode == 0 and "toy-tsv" in res.stdout and "rankify" in res.stdout, res.stderr
    (tmp_path / "r.tsv").write_text("q\tq_1_0\t1.0\n")
    (tmp_path / "q.qrels").write_text("q 0 q_1_0 1\n")
    res = cli("evaluate", tmp_path / "r.tsv", "--qrels", tmp_path / "q.qrels")
    assert res.returncode == 2 and res.stderr.strip() == f"inferqa: error: {tmp_path / 'r.tsv'}: run format " \
        "'toy-tsv' cannot be read", res.stderr


# -- labels, answers and the corpus: each read and written by one gateway ---------------------

def test_labels_written_then_read_are_equal(bench, tmp_path):
    from inferqa.formats import LabelRow, Labels
    from inferqa.formats.labels import read_order_labels, write_order_labels

    pids = list(bench.qrels[next(iter(bench.qrels))])[:3]
    qid = pids[0].rsplit("_", 2)[0]
    rows = Labels([
        LabelRow(pids[0], qid, 2, {"m": "Paris"}, {"m": True}, reader_answers={"r": "Rome"}),
        LabelRow(pids[1], qid, 1, {}, {}, copied_from=pids[0], extra={"not_asked": ["m2"]}),
        LabelRow(pids[2], qid, 1, {"m": "Nîmes \"x\""}, {"m": False}),
    ])
    f = tmp_path / "labels.jsonl"
    assert rows.to_file(f) == 3
    back = Labels.from_file(f)
    assert back == rows and isinstance(back, Labels)
    assert json.loads(f.read_text().splitlines()[1]) == {"pid": pids[1], "qid": qid, "label": 1, "answers": {},
                                                         "correct": {}, "copied_from": pids[0], "not_asked": ["m2"]}
    assert Labels.from_file(f, [qid]).by_pid()[pids[2]].answers == {"m": "Nîmes \"x\""}
    assert Labels.from_file(f, ["other"]) == []
    portable = tmp_path / "demo_labels.jsonl"
    assert write_order_labels(portable, [rows[0]]) == 1
    order = "".join(pids[0].rsplit("_", 1)[1])
    shipped = read_order_labels(portable)
    assert list(shipped) == [(qid, order)] and shipped[qid, order].answers == {"m": "Paris"}


@pytest.mark.parametrize("field,value,needle", [
    ("label", 3, "label 3 is not 1 or 2"),
    ("correct", {"m": "yes"}, "true/false"),
    ("answers", ["Paris"], "labeller -> answer string"),
    ("reader_answers", {"r": 1}, "reader model -> answer string"),
])
def test_a_label_row_field_of_the_wrong_type_is_one_error_naming_it(tmp_path, field, value, needle):
    from inferqa.formats import Labels

    good = {"pid": "q_1_0", "qid": "q", "label": 1, "answers": {"m": "x"}, "correct": {"m": False}}
    f = tmp_path / "labels.jsonl"
    f.write_text(json.dumps(good) + "\n" + json.dumps({**good, field: value}) + "\n")
    with pytest.raises(InputError) as exc:
        Labels.from_file(f)
    msg = str(exc.value)
    assert needle in msg and str(f) in msg and "line 2" in msg and field in msg and "\n" not in msg


def test_answers_written_then_read_are_equal(bench, tmp_path):
    from inferqa.formats import Answers

    qid = bench.split_qids("test")[0]
    q = bench.questions[qid]
    rows = Answers([{"qid": qid, "strategy": "union_norm", "k": 3, "prediction": "x", "em": 0.0,
                     "golds": q.answers, "question": q.text, "pids": ["a", "b"]},
                    {"qid": qid, "strategy": "union_freq", "k": 1, "prediction": "", "em": 1,
                     "golds": q.answers, "question": q.text}])
    f = tmp_path / "ANSWERS.jsonl"
    assert rows.to_file(f) == 2
    assert Answers.from_file(f) == rows == Answers.from_file(f, bench, scored=True)
    bad = tmp_path / "bad.jsonl"
    bad.write_text(json.dumps(rows[0]) + "\n" + json.dumps({**rows[1], "k": 1.5}) + "\n")
    with pytest.raises(InputError) as exc:
        Answers.from_file(bad)
    msg = str(exc.value)
    assert str(bad) in msg and "line 2" in msg and "k" in msg and "positive integer" in msg


def test_retriever_records_written_then_read_are_equal(tmp_path):
    from inferqa.formats import RetrieverContext, RetrieverRecord, read_retriever_records
    from inferqa.formats.answers import write_retriever_records

    recs = [RetrieverRecord("Where?", ["Paris"], [RetrieverContext("q_1_0", 2, {"r": "Paris"}, "a clue"),
                                                  RetrieverContext("q_10_1", 1, {}, "b clue")]),
            RetrieverRecord("Who?", ["Ann"], [])]
    f = tmp_path / "retriever.jsonl"
    assert write_retriever_records(f, recs) == 2
    assert read_retriever_records(f, complete=True) == recs
    assert json.loads(f.read_text().splitlines()[0])["contexts"][0] == {"id": "q_1_0", "text": "a clue", "label": 2,
                                                                         "rag_answers": {"r": "Paris"}}
    f.write_text(json.dumps({"question": "Where?", "answers": ["P"], "contexts": [{"id": "q_1_0", "label": "2"}]}) + "\n")
    with pytest.raises(InputError) as exc:
        read_retriever_records(f)
    assert str(f) in str(exc.value) and "line 1" in str(exc.value) and "contexts[0].label" in str(exc.value)


def test_the_corpus_written_then_read_is_equal(bench, tmp_path):
    from inferqa.construct.passages import order_table
    from inferqa.formats import write_corpus
    from inferqa.formats.corpus import corpus_writer

    passages = list(iter_corpus(bench))
    f = tmp_path / "corpus.jsonl"
    assert write_corpus(f, passages) == len(passages)
    assert list(iter_corpus(f)) == passages
    assert f.read_bytes() == (bench.path / "corpus.jsonl").read_bytes()  # the builder's bytes, the same writer
    # a question's passages at once: the same bytes, hints padded with whitespace too
    g = tmp_path / "one.jsonl"
    hints = [" a \"b\"", "c\n", "d"]
    with corpus_writer(g) as out:
        ids = [pid for _, pid in out.write_question("q", hints, order_table(3))]
    got = list(iter_corpus(g))
    assert [p.id for p in got] == ids and len(ids) == 15
    assert [p.text for p in got] == [" ".join(hints[i] for i in p.order).strip() for p in got]
    h = tmp_path / "again.jsonl"
    write_corpus(h, got)
    assert h.read_bytes() == g.read_bytes()


def test_a_trec_line_of_other_than_six_columns_says_how_many(tmp_path):
    from inferqa.errors import InputError
    from inferqa.formats import Run

    path = tmp_path / "five.trec"
    path.write_text("q1 Q0 a 1 2.0 t\nq1 Q0 b 2 1.0\n")
    with pytest.raises(InputError) as caught:
        Run.from_file(path)
    assert str(caught.value) == (f"{path}: record line 2: expected 6 columns 'qid Q0 pid rank score tag', found 5")
    path.write_text("q1 Q0 a 1 inf t\n")
    with pytest.raises(InputError, match="score is infinite"):
        Run.from_file(path)
