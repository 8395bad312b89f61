"""Every bad input to every command: exit code 2, one line on stderr, no traceback, nothing
written at the output path. Then every loader fuzzed with random JSON / CSV / bytes: it
returns or raises InputError, never anything else.

The benchmarks are tiny and built once; no case loads a model (each error comes first).
"""

from __future__ import annotations

import json
import shutil
import string
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inferqa.build import build_benchmark
from inferqa.cli import main
from inferqa.data import demo_path, load_questions
from inferqa.errors import InputError
from inferqa.records import Run

NOT_UTF8 = b"caf\xe9 \xff\xfe\n"


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> dict[str, Path]:
    """The files every case points at: a benchmark, another one, a run of each, answers, configs."""
    root = tmp_path_factory.mktemp("bad")
    questions = load_questions(demo_path())
    build_benchmark(questions[:4], root / "bench", top_k=3, split=(0.5, 0.0, 0.5))
    build_benchmark(questions[4:8], root / "other", top_k=3, split=(0.5, 0.0, 0.5))
    for name in ("bench", "other"):
        from inferqa.benchmark import Benchmark

        b = Benchmark(root / name)
        Run({qid: [(pid, 1.0 / (i + 1)) for i, pid in enumerate(list(b.qrels[qid])[:5])]
             for qid in b.questions}).save(root / f"{name}.trec")
    qid = next(iter(Benchmark(root / "bench").questions))
    row = {"qid": qid, "strategy": "union_norm", "k": 1, "prediction": "x", "golds": ["y"]}
    files = {
        "not_utf8.jsonl": NOT_UTF8, "not_utf8.trec": NOT_UTF8, "not_utf8.yaml": NOT_UTF8,
        "not_utf8.csv": b"id,question,answers,hint_1\n" + NOT_UTF8, "empty.jsonl": b"", "empty.yaml": b"\n",
        "empty.tsv": b"", "broken.jsonl": b'{"id": "a", "question": \n',
        "null_question.jsonl": json.dumps({"id": "a", "question": None, "answers": ["x"], "hints": ["h"]}).encode(),
        "wide.csv": b"id,question,answers,hint_1\na,Q?,x,h,extra\n",
        "null_prediction.jsonl": json.dumps({**row, "prediction": None}).encode(),
        "unknown_qid.jsonl": json.dumps({**row, "qid": "nope"}).encode(),
        "bad_k.jsonl": json.dumps({**row, "k": "3"}).encode(),
        "typo.yaml": b"name: t\nbenchmark: {demo: true}\nretrievers: [{name: b, kind: bm25}]\nreaderz: []\n",
        "bad_strategy.yaml": b"name: t\nbenchmark: {demo: true}\nretrievers: [{name: b, kind: bm25}]\n"
                             b"strategies: [nope]\n",
        "bad_option.yaml": b"name: t\nbenchmark: {demo: true}\nretrievers: [{name: b, kind: bm25, "
                           b"options: {nope: 1}}]\n",
        "bad_sheet.csv": b"qid,answer,verdict\n" + NOT_UTF8,
    }
    for name, data in files.items():
        (root / name).write_bytes(data)
    (root / "a_dir").mkdir()
    shutil.copytree(root / "bench", root / "bad_qrels")
    (root / "bad_qrels" / "qrels.tsv").write_bytes(NOT_UTF8)
    assert main_code(["index", root / "bench", "--retriever", "bm25"]) == 0
    return {"root": root}


def main_code(argv) -> int:
    old = sys.argv
    sys.argv = ["inferqa", *map(str, argv)]
    try:
        main()
    except SystemExit as exc:
        return exc.code or 0
    finally:
        sys.argv = old
    return 0


B, O = "{root}/bench", "{root}/other"
OUT = "{root}/out"
CASES = [
    # (command line, what the one line must contain)
    ("build {root}/missing.jsonl -o {out}", "file not found"),
    ("build {root}/a_dir -o {out}", "expected a file, got a directory"),
    ("build {root}/not_utf8.jsonl -o {out}", "not UTF-8"),
    ("build {root}/not_utf8.csv -o {out}", "not UTF-8"),
    ("build {root}/empty.jsonl -o {out}", "empty"),
    ("build {root}/broken.jsonl -o {out}", "malformed JSON"),
    ("build {root}/null_question.jsonl -o {out}", "field 'question'"),
    ("build {root}/wide.csv -o {out}", "row 2"),
    ("build --demo --split nan -o {out}", "finite"),
    ("build --demo --split inf,0,0 -o {out}", "finite"),
    ("build --demo --leak-threshold nan -o {out}", "finite"),
    ("build --demo --leak-judge nope -o {out}", "nope"),
    ("stats {root}/missing", "not found"),
    ("stats {root}/bad_qrels", "not UTF-8"),
    ("index {bench} --retriever nope", "nope"),
    ("index {bench} --retriever dense --model ./no/such/model", "model folder not found"),
    ("index {bench} --retriever bm25 --opt k1", "KEY=VALUE"),
    ("index {bench} --retriever bm25 --model minilm", "model"),
    ("index {bench} --retriever bm25 --opt stemmer=klingon", "stemmer"),
    ("retrieve {bench} --split nan -o {out}", "unknown split 'nan'"),
    ("retrieve {bench} --depth 0 -o {out}", "--depth"),
    ("retrieve {bench} --depth abc -o {out}", "--depth"),
    ("retrieve {bench} --k1 nan -o {out}", "finite"),
    ("evaluate {root}/not_utf8.trec --bench {bench}", "not UTF-8"),
    ("evaluate {root}/a_dir --bench {bench}", "directory"),
    ("evaluate {bench}.trec --qrels {root}/empty.tsv", "empty"),
    ("evaluate {other}.trec --bench {bench}", "not in the benchmark"),
    ("oracle {bench} --kind nope -o {out}", "nope"),
    ("oracle {bench} --kind reranker --run {root}/missing.trec -o {out}", "file not found"),
    ("oracle {bench} --kind reranker --run {other}.trec -o {out}", "not in the benchmark"),
    ("rerank {other}.trec -b {bench} -r cross-encoder -o {out}", "not in the benchmark"),
    ("rerank {bench}.trec -b {bench} -r nope -o {out}", "unknown reranker"),
    ("rerank {bench}.trec -b {bench} -r cross-encoder --model /no/such/model -o {out}", "model folder not found"),
    ("rerank {bench}.trec -b {bench} -r cross-encoder --depth 0 -o {out}", "depth"),
    ("rerank {bench}.trec -b {bench} -r cross-encoder --split nan -o {out}", "unknown split"),
    ("rerank {bench}.trec -b {bench} -r upr --option reduction=max -o {out}", "reduction"),
    ("rerank {bench}.trec -b {bench} -r llm-listwise --option window=0 -o {out}", "window"),
    ("rerank {bench}.trec -b {bench} -r cross-encoder --option windoww=3 -o {out}", "windoww"),
    ("read {other}.trec -b {bench} -o {out}", "not in the benchmark"),
    ("read {bench}.trec -b {bench} --split nan -o {out}", "unknown split 'nan'"),
    ("read {bench}.trec -b {bench} --strategy nope -o {out}", "unknown context 'nope'"),
    ("read {bench}.trec -b {bench} --llm smollm2?n_thread=1 -o {out}", "n_thread"),
    ("read {bench}.trec -b {bench} --k 0 -o {out}", "positive"),
    ("read {bench}.trec -b {bench} --k x -o {out}", "not a valid value"),
    ("read {bench}.trec -b {bench} --alpha nan -o {out}", "finite"),
    ("read {root}/not_utf8.trec -b {bench} -o {out}", "not UTF-8"),
    ("evaluate-answers {root}/null_prediction.jsonl", "field 'prediction'"),
    ("evaluate-answers {root}/not_utf8.jsonl", "not UTF-8"),
    ("evaluate-answers {root}/missing.jsonl", "file not found"),
    ("evaluate-answers {root}/unknown_qid.jsonl --bench {bench}", "not in the benchmark"),
    ("evaluate-answers {root}/bad_k.jsonl", "field 'k'"),
    ("evaluate-answers {root}/a_dir", "directory"),
    ("evaluate-answers {bench}.trec --judge smollm2", "--judge needs --bench"),
    ("label {bench} --label-mode nope", "label-mode"),
    ("label {bench} --split-by nope", "split-by"),
    ("label {root}/missing", "not found"),
    ("tune-union --bench {bench} --split test --alphas nan", "finite"),
    ("tune-union --bench {bench} --split test --alphas 2", "[0, 1]"),
    ("tune-union {other}.trec --bench {bench} --split test", "not in the benchmark"),
    ("tune-union --bench {bench} --split nope", "unknown split"),
    ("annotate export {bench} -o {out}", "labels.jsonl"),
    ("annotate import {bench} {root}/bad_sheet.csv --annotator me", "not UTF-8"),
    ("annotate import {bench} {root}/a_dir --annotator me", "directory"),
    ("run {root}/missing.yaml -o {out}", "file not found"),
    ("run {root}/not_utf8.yaml -o {out}", "not UTF-8"),
    ("run {root}/empty.yaml -o {out}", "empty"),
    ("run {root}/typo.yaml -o {out}", "readerz"),
    ("run {root}/bad_strategy.yaml -o {out}", "unknown context 'nope'"),
    ("run {root}/bad_option.yaml -o {out}", "nope"),
    ("run {root}/a_dir -o {out}", "directory"),
    ("finetune nope --bench {bench} -o {out}", "nope"),
    ("finetune retriever --bench {bench} --model ./no/such/model -o {out}", "model folder not found"),
    ("finetune retriever --bench {bench} --lr nan -o {out}", "finite"),
    ("finetune reranker --bench {root}/missing -o {out}", "not found"),
    ("nope", "No such command"),
]


@pytest.mark.parametrize("line,needle", CASES, ids=[c[0].split(" {")[0] + f"-{i}" for i, c in enumerate(CASES)])
def test_bad_input_is_one_line_and_exit_2(ws, line, needle, capsys, monkeypatch):
    root = ws["root"]
    monkeypatch.setenv("COLUMNS", "200")
    out = root / "out"
    argv = line.format(root=root, bench=root / "bench", other=root / "other", out=out).split()
    try:
        code = main_code(argv)
    except BaseException as exc:  # anything but SystemExit(2) is a failure: show what escaped
        pytest.fail(f"{line}: {type(exc).__name__} escaped: {exc}")
    _, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip() and "\r" not in ln and not ln.lstrip().startswith(
        ("bm25 search", "reading"))]  # progress bars redraw with \r, never a whole line
    assert code == 2, (line, code, err)
    assert len(lines) == 1, (line, err)
    assert lines[0].startswith("inferqa: error:") and "Traceback" not in err, err
    assert needle in lines[0], (needle, lines[0])
    assert not out.exists(), f"{line} left {out}"


def test_the_table_covers_every_command():
    commands = {line.split()[0] for line, _ in CASES}
    assert {"build", "stats", "index", "retrieve", "evaluate", "oracle", "rerank", "read", "evaluate-answers",
            "label", "tune-union", "annotate", "run", "finetune"} <= commands
    assert len(CASES) >= 30


# -- fuzzing: every loader returns or raises InputError -----------------------------------

_text = st.text(string.printable + "éß☃\x00", max_size=12)
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | _text,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
                     max_leaves=12)
_keys = ["id", "question", "answers", "hints", "text", "qid", "strategy", "k", "prediction", "golds",
         "name", "benchmark", "retrievers", "verdict", "answer", "convergence", "metadata"]
# records that look almost right: the loaders' own keys with random values
_record = st.dictionaries(st.sampled_from(_keys), _json, max_size=8)
_fuzz = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


def _loaders(bench_dir: Path):
    from inferqa.annotate.sheet import read_sheet
    from inferqa.benchmark import Benchmark
    from inferqa.experiments.config import load_config
    from inferqa.read import open_answers
    from inferqa.records import Qrels

    bench = Benchmark(bench_dir)
    return {
        "questions.jsonl": lambda p: load_questions(p),
        "questions.json": lambda p: load_questions(p),
        "questions.csv": lambda p: load_questions(p),
        "questions.tsv": lambda p: load_questions(p),
        "qrels.txt": Qrels.load,
        "run.trec": Run.load,
        "answers.jsonl": lambda p: open_answers(p, bench),
        "sheet.csv": lambda p: read_sheet(p),
        "sheet.jsonl": lambda p: read_sheet(p),
        "config.yaml": load_config,
    }


def _loads_or_input_error(load, path: Path) -> None:
    try:
        load(path)
    except InputError:
        pass  # any other exception fails the test with its traceback


@_fuzz
@given(rows=st.lists(_record | _json, max_size=4), as_lines=st.booleans())
def test_json_loaders_fuzzed(ws, tmp_path_factory, rows, as_lines):
    work = tmp_path_factory.mktemp("fz")
    for name, load in _loaders(ws["root"] / "bench").items():
        if name.endswith((".csv", ".tsv", ".txt", ".trec")):
            continue
        if name.endswith(".yaml"):
            import yaml

            text = yaml.safe_dump(rows[0] if rows else None, allow_unicode=True)
        elif as_lines or name.endswith(".jsonl"):
            text = "\n".join(json.dumps(r) for r in rows)
        else:
            text = json.dumps(rows)
        path = work / name
        path.write_text(text, encoding="utf-8")
        _loads_or_input_error(load, path)


_cell = st.text(string.printable.replace("\r", "") + "é", max_size=8)


@_fuzz
@given(header=st.lists(st.sampled_from(_keys + ["hint_1", "hint_2", "convergence_1", "x"]) | _cell, max_size=6),
       cells=st.lists(st.lists(_cell, max_size=7), max_size=4), sep=st.sampled_from([",", "\t", " "]))
def test_table_loaders_fuzzed(ws, tmp_path_factory, header, cells, sep):
    work = tmp_path_factory.mktemp("fz")
    text = "\n".join(sep.join(row) for row in [header, *cells])
    for name, load in _loaders(ws["root"] / "bench").items():
        if name.endswith((".csv", ".tsv", ".txt", ".trec")):
            path = work / name
            path.write_text(text, encoding="utf-8")
            _loads_or_input_error(load, path)


@_fuzz
@given(data=st.binary(max_size=64))
def test_every_loader_on_random_bytes(ws, tmp_path_factory, data):
    work = tmp_path_factory.mktemp("fz")
    for name, load in _loaders(ws["root"] / "bench").items():
        path = work / name
        path.write_bytes(data)
        _loads_or_input_error(load, path)
