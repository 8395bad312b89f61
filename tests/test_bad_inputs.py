"""Every bad input to every command: exit code 2, one line on stderr, no traceback, nothing
written at the output path. Then every loader fuzzed with random JSON / CSV / bytes: it
raises InputError or returns what it promises (types, ids, counts), never anything else.

The benchmarks are tiny and built once; no case loads a model (each error comes first).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import shutil
import signal
import socket
import string
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from inferqa.construct import build_benchmark
from inferqa.cli import main
from inferqa.data import demo_path, load_questions
from inferqa.errors import InputError
from inferqa.formats import Qrels, Run
from inferqa.formats.outputs import LEDGER

NOT_UTF8 = b"caf\xe9 \xff\xfe\n"


@pytest.fixture(scope="module")
def ws(tmp_path_factory) -> dict[str, Path]:
    """The files every case points at: a benchmark, another one, a run of each, answers, configs."""
    root = tmp_path_factory.mktemp("bad")
    questions = load_questions(demo_path())
    build_benchmark(questions[:4], root / "bench", top_k=3, split=(0.5, 0.0, 0.5))
    build_benchmark(questions[4:8], root / "other", top_k=3, split=(0.5, 0.0, 0.5))
    for name in ("bench", "other"):
        from inferqa.formats.benchmark import Benchmark

        b = Benchmark(root / name)
        Run({qid: [(pid, 1.0 / (i + 1)) for i, pid in enumerate(list(b.qrels[qid])[:5])]
             for qid in b.questions}).to_file(root / f"{name}.trec")
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
    zstd = pytest.importorskip("zstandard").ZstdCompressor()
    trec = (root / "bench.trec").read_bytes()
    split_test = Benchmark(root / "bench").split_qids("test")
    rankify = json.dumps([{"question": Benchmark(root / "bench").questions[q].text, "ctxs": []} for q in split_test])
    files.update({
        # cut mid-record, as a copy or download that stopped leaves them (no newline at the end)
        "cut.jsonl": json.dumps({"id": "a", "question": "Q?", "answers": ["x"], "hints": ["h"]}).encode()[:-9],
        "cut.trec": trec[:trec.index(b" ", trec.index(b"\n") + 5)],
        "cut.json": rankify.encode()[:-3],
        "cut_answers.jsonl": json.dumps(row).encode() + b"\n" + json.dumps(row).encode()[:12],
        "corrupt.trec.zst": zstd.compress(trec)[:12] + b"\x00" * 40 + zstd.compress(trec)[52:],
        "cut.trec.zsd": zstd.compress(trec)[:-6],
        "cut.jsonl.gz": gzip.compress(b'{"id": "a", "question": "Q?", "answers": ["x"], "hints": ["h"]}\n')[:-10],
        "plain.zsd": trec,
    })
    b = Benchmark(root / "bench")
    own = [list(b.qrels[q])[:2] for q in split_test]
    texts = [b.questions[q].text for q in split_test]

    def rankify(*records):
        return json.dumps(list(records)).encode()

    ctx = lambda pid, **kw: {"id": pid, "score": 1.0, **kw}  # noqa: E731
    files.update({
        # a JSON run matched by position must cover the split, hold a ranking, and type its fields
        "partial.json": rankify({"question": texts[0], "ctxs": [ctx(own[0][0])]}),
        "no_ctxs.json": rankify({"question": texts[0], "ctxs": [ctx(own[0][0])]}, {"question": texts[1]}),
        "id_list.json": rankify({"question": texts[0], "ctxs": [ctx(own[0][0]), ctx([own[0][1]])]},
                                {"question": texts[1], "ctxs": []}),
        "score_list.json": rankify({"question": texts[0], "ctxs": [ctx(own[0][0], score=[1])]},
                                   {"question": texts[1], "ctxs": []}),
        "question_number.json": rankify({"question": 7, "ctxs": []}, {"question": texts[1], "ctxs": []}),
        "ctxs_string.json": rankify({"question": texts[0], "ctxs": "none"}, {"question": texts[1], "ctxs": []}),
        # the authors' retriever.jsonl with a mistyped field
        "context_string.jsonl": (json.dumps({"question": texts[0], "contexts": ["a passage"]}) + "\n").encode(),
        "contexts_string.jsonl": (json.dumps({"question": texts[0], "contexts": "a passage"}) + "\n").encode(),
        "question_number.jsonl": (json.dumps({"question": 42, "contexts": []}) + "\n").encode(),
        "label_string.jsonl": (json.dumps({"question": texts[0], "contexts": [{"id": own[0][0], "label": "2"}]})
                               + "\n").encode(),
        # an authors' reader output whose answer is not a string
        "answer_number.json": rankify({"predicted_answer": {"m": {f"{split_test[0]}_un_1": 3}}}),
        "unscored.jsonl": json.dumps(row).encode(),  # explore shows EM: a row without it is refused
    })
    for name, data in files.items():
        (root / name).write_bytes(data)
    os.mkfifo(root / "fifo")  # a writer never comes: opening it would block forever
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(str(root / "sock"))
    sock.close()
    shutil.copytree(root / "bench", root / "cut_corpus", ignore=shutil.ignore_patterns("indexes"))
    corpus = (root / "cut_corpus" / "corpus.jsonl").read_bytes()
    (root / "cut_corpus" / "corpus.jsonl").write_bytes(corpus[:len(corpus) // 2 + 7].rstrip(b"\n"))
    pid0, pid1 = own[0]
    for name, rows in (("label_3", [{"pid": pid0, "qid": split_test[0], "label": 3}]),
                       ("copied_nowhere", [{"pid": pid0, "qid": split_test[0], "label": 1, "copied_from": "nope_1_0"}]),
                       ("answers_list", [{"pid": pid1, "qid": split_test[0], "label": 2, "answers": ["x"]}])):
        shutil.copytree(root / "bench", root / name, ignore=shutil.ignore_patterns("indexes"))
        (root / name / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (root / "cut.csv").write_bytes(b"id,question,answers,hint_1\na,Q?,x,h\nb,Q2")
    (root / "cut_qrels.tsv").write_bytes(b"q 0 p 1\nq 0 p2")
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
    ("build --demo --leak-threshold nan -o {out}", "build: option 'leak_threshold' takes a number in (0, 1], not 'nan'"),
    ("build --demo --leak-judge nope -o {out}", "nope"),
    ("stats {root}/missing", "not found"),
    ("stats {root}/bad_qrels", "not UTF-8"),
    ("index {bench} --retriever nope", "nope"),
    ("index {bench} --retriever dense --model ./no/such/model", "model folder not found"),
    ("index {bench} --retriever bm25 --opt k1", "KEY=VALUE"),
    ("index {bench} --retriever bm25 --model minilm", "model"),
    ("index {bench} --retriever bm25 --opt stemmer=klingon", "stemmer"),
    ("retrieve {bench} --split nan -o {out}", "unknown split 'nan'"),
    ("retrieve {bench} --depth 0 -o {out}", "retrieve: option 'depth' takes an integer ≥ 1, not 0"),
    ("retrieve {bench} --depth abc -o {out}", "retrieve: option 'depth' takes an integer ≥ 1, not 'abc'"),
    ("retrieve {bench} --k1 nan -o {out}", "retrieve: option 'k1' takes a number or null, not 'nan'"),
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
    ("read {bench}.trec -b {bench} --strategy nope -o {out}", "unknown strategy 'nope'"),
    ("read {bench}.trec -b {bench} --llm smollm2?n_thread=1 -o {out}", "n_thread"),
    ("read {bench}.trec -b {bench} --k 0 -o {out}", "positive"),
    ("read {bench}.trec -b {bench} --k x -o {out}", "read: option 'ks' takes an integer, not 'x'"),
    ("read {bench}.trec -b {bench} --alpha nan -o {out}", "read: option 'alpha' takes a number ≥ 0, not 'nan'"),
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
    ("tune-union --bench {bench} --split test --alphas nan", "tune-union: option 'alphas' takes a number, not 'nan'"),
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
    ("run {root}/bad_strategy.yaml -o {out}", "unknown strategy 'nope'"),
    ("run {root}/bad_option.yaml -o {out}", "nope"),
    ("run {root}/a_dir -o {out}", "directory"),
    ("finetune nope --bench {bench} -o {out}", "nope"),
    ("finetune retriever --bench {bench} --model ./no/such/model -o {out}", "model folder not found"),
    ("finetune retriever --bench {bench} --lr nan -o {out}", "finetune: option 'lr' takes a number > 0, not 'nan'"),
    ("finetune reranker --bench {root}/missing -o {out}", "not found"),
    ("nope", "No such command"),
    # special files are refused before they are opened: nothing hangs or reads without end
    ("build {root}/fifo -o {out}", "got a FIFO"),
    ("evaluate {root}/fifo --bench {bench}", "got a FIFO"),
    ("doctor {root}/fifo --bench {bench}", "got a FIFO"),
    ("evaluate-answers {root}/fifo", "got a FIFO"),
    ("run {root}/fifo -o {out}", "got a FIFO"),
    ("evaluate /dev/zero --bench {bench}", "got a character device"),
    ("build /dev/zero -o {out}", "got a character device"),
    ("read /dev/zero -b {bench} -o {out}", "got a character device"),
    ("import-answers /dev/zero --bench {bench} --split test", "got a character device"),
    ("evaluate {root}/sock --bench {bench}", "got a socket"),
    ("rerank {root}/sock -b {bench} -r cross-encoder -o {out}", "got a socket"),
    # truncated inputs: the last record cut mid-way is named, never read as a shorter file
    ("build {root}/cut.jsonl -o {out}", "line 1: truncated"),
    ("evaluate {root}/cut.trec --bench {bench}", "line 2: truncated"),
    ("evaluate {root}/cut.json --bench {bench} --split test", "truncated"),
    ("evaluate-answers {root}/cut_answers.jsonl", "line 2: truncated"),
    ("index {root}/cut_corpus --retriever bm25", "truncated"),
    ("index {root}/cut_corpus --retriever bm25 --opt dedup=false", "truncated"),
    # compressed inputs: a corrupt or cut stream is one line naming the file
    ("evaluate {root}/corrupt.trec.zst --bench {bench}", "corrupt.trec.zst: corrupt zstd stream"),
    ("evaluate {root}/cut.trec.zsd --bench {bench}", "cut.trec.zsd: corrupt zstd stream"),
    ("build {root}/cut.jsonl.gz -o {out}", "cut.jsonl.gz: corrupt gzip stream"),
    ("evaluate {root}/plain.zsd --bench {bench}", "not a zstd stream"),
    ("evaluate {root}/partial.json --bench {bench} --split test", "must cover the whole split"),
    ("export rankify --bench {bench} --split test --run {root}/partial.json -o {out}", "must cover the whole split"),
    ("evaluate {root}/no_ctxs.json --bench {bench} --split test", "record 1 (question"),
    ("read {root}/no_ctxs.json -b {bench} --split test -o {out}", "field 'ctxs': no ranking"),
    # JSON fields of the wrong type: one line naming the field, never an AttributeError
    ("evaluate {root}/id_list.json --bench {bench} --split test", "field 'ctxs[1].id': expected a string"),
    ("evaluate {root}/score_list.json --bench {bench} --split test", "field 'ctxs[0].score'"),
    ("evaluate {root}/question_number.json --bench {bench} --split test", "field 'question': expected a string"),
    ("evaluate {root}/ctxs_string.json --bench {bench} --split test", "field 'ctxs': expected a list"),
    ("import-answers {root}/context_string.jsonl --bench {bench} --split test", "field 'contexts[0]'"),
    ("import-answers {root}/contexts_string.jsonl --bench {bench} --split test", "field 'contexts': expected a list"),
    ("import-answers {root}/question_number.jsonl --bench {bench} --split test", "field 'question': expected a string"),
    ("import-answers {root}/label_string.jsonl --bench {bench} --split test", "field 'contexts[0].label'"),
    ("evaluate-answers {root}/answer_number.json --bench {bench}", "expected a string, got int"),
    ("explore --bench {bench} --answers {root}/unscored.jsonl -o {out}", "field 'em'"),
    # a run of another benchmark, on every command that takes a run and a benchmark
    ("explore {other}.trec --bench {bench} -o {out}", "not in the benchmark"),
    ("stored-answers {bench} --run {other}.trec", "not in the benchmark"),
    ("export rankify --bench {bench} --split test --run {other}.trec -o {out}", "not in the benchmark"),
    ("finetune retriever --bench {bench} --negatives-from {other}.trec --split test -o {out}", "not in the benchmark"),
    ("doctor {root}/cut.trec --bench {bench}", "truncated"),
    ("fuse {bench}.trec {other}.trec -o {out}", "covers other questions"),
    # labels.jsonl read as typed rows, wherever it is read
    ("annotate export {root}/label_3 -o {out}", "field 'label': label 3 is not 1 or 2"),
    ("explore {bench}.trec --bench {root}/copied_nowhere -o {out}", "field 'copied_from'"),
    ("annotate export {root}/answers_list -o {out}", "field 'answers'"),
    ("build {root}/cut.csv -o {out}", "row 3: truncated"),
    ("evaluate {bench}.trec --qrels {root}/cut_qrels.tsv", "line 2: truncated"),
]


@pytest.mark.parametrize("line,needle", CASES, ids=[c[0].split(" {")[0] + f"-{i}" for i, c in enumerate(CASES)])
def test_bad_input_is_one_line_and_exit_2(ws, line, needle, capsys, monkeypatch):
    root = ws["root"]
    monkeypatch.setenv("COLUMNS", "200")
    out = root / "out"
    argv = line.format(root=root, bench=root / "bench", other=root / "other", out=out).split()

    def hung(*_):
        raise TimeoutError("still running after 240 s (blocked on a special file?)")

    old = signal.signal(signal.SIGALRM, hung)
    signal.alarm(240)
    try:
        code = main_code(argv)
    except BaseException as exc:  # anything but SystemExit(2) is a failure: show what escaped
        pytest.fail(f"{line}: {type(exc).__name__} escaped: {exc}")
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    _, err = capsys.readouterr()
    lines = [ln for ln in err.splitlines() if ln.strip() and "\r" not in ln and not ln.lstrip().startswith(
        ("bm25 search", "reading"))]  # progress bars redraw with \r, never a whole line
    assert code == 2, (line, code, err)
    assert len(lines) == 1, (line, err)
    assert lines[0].startswith("inferqa: error:") and "Traceback" not in err, err
    assert needle in lines[0], (needle, lines[0])
    assert not out.exists(), f"{line} left {out}"
    assert not [f for f in (root / "cut_corpus").rglob("*") if f.is_file() and "indexes" in f.parts], line


def test_the_table_covers_every_command():
    commands = {line.split()[0] for line, _ in CASES}
    assert {"build", "stats", "index", "retrieve", "evaluate", "oracle", "rerank", "read", "evaluate-answers",
            "label", "tune-union", "annotate", "run", "finetune"} <= commands
    assert len(CASES) >= 30


# Numeric options out of their declared range (issue 22, class 5): refused before any work.
RANGE_CASES = [
    ("fuse {bench}.trec {other}.trec --weights nan,1 -o {out}", "fuse: option 'weights' takes a number, not 'nan'"),
    ("fuse {bench}.trec {other}.trec --weights -1,1 -o {out}", "a weight is a finite number ≥ 0, not -1.0"),
    ("fuse {bench}.trec {other}.trec --weights 0,0 -o {out}", "all 0"),
    ("fuse {bench}.trec {other}.trec --weights 1 -o {out}", "1 weights for 2 runs"),
    ("fuse {bench}.trec {other}.trec --rrf-k -1 -o {out}", "option 'rrf_k' takes a number ≥ 0, not -1.0"),
    ("fuse {bench}.trec {other}.trec --rrf-k nan -o {out}", "fuse: option 'rrf_k' takes a number or null, not 'nan'"),
    ("fuse {bench}.trec {other}.trec --method rrf --norm zscore -o {out}", "fusion 'rrf' has no option 'norm'"),
    ("evaluate {bench}.trec --bench {bench} --min-label 0", "evaluate: option 'min_label' takes an integer ≥ 1, not 0"),
    ("evaluate {bench}.trec --bench {bench} --min-label -2", "evaluate: option 'min_label' takes an integer ≥ 1, not -2"),
    ("evaluate {bench}.trec --bench {bench} --min-label 9", "min-label 9 is above the largest label"),
    ("oracle {bench} --kind optimal --min-label 0 -o {out}", "oracle: option 'min_label' takes an integer ≥ 1, not 0"),
    ("oracle {bench} --kind retriever --min-label 9 -o {out}", "above the largest label"),
    ("stored-answers {bench} --min-label 9", "above the largest label"),
]


@pytest.mark.parametrize("line,needle", RANGE_CASES, ids=[f"range-{i}" for i in range(len(RANGE_CASES))])
def test_numeric_option_out_of_range_is_one_line_and_exit_2(ws, line, needle, capsys, monkeypatch):
    test_bad_input_is_one_line_and_exit_2(ws, line, needle, capsys, monkeypatch)


# `inferqa run` checks everything its YAML names before it computes or creates anything
# (issue 22, class 7): each config below is valid as a file, and each case's --out is new.
RUN_CASES = [
    ("benchmark: {{path: {root}/missing}}\nretrievers: [{{kind: bm25}}]\n", "benchmark directory not found"),
    ("benchmark: {{path: {root}/a_dir}}\nretrievers: [{{kind: bm25}}]\n", "not a benchmark directory"),
    ("benchmark: {{path: {bench}}}\nsplit: dev2\nretrievers: [{{kind: bm25}}]\n", "unknown split 'dev2'"),
    ("benchmark: {{demo: true}}\nsplit: dev2\nretrievers: [{{kind: bm25}}]\n", "unknown split 'dev2'"),
    ("benchmark: {{path: {bench}}}\nretrievers: [{{kind: dense, options: {{model: ./no/such/model}}}}]\n",
     "model folder not found"),
    ("benchmark: {{path: {bench}}}\nretrievers: [{{kind: bm25}}]\nrerankers: [{{kind: cross-encoder, "
     "options: {{model: /no/such/model}}}}]\n", "model folder not found"),
    ("benchmark: {{path: {bench}}}\nretrievers: [{{kind: bm25}}]\nrerankers: [{{kind: llm-pointwise, "
     "options: {{llm: smolm2}}}}]\n", "unknown LLM spec 'smolm2'"),
    ("benchmark: {{path: {bench}}}\nretrievers: [{{kind: bm25}}]\nreaders: [smolm2]\n", "unknown LLM spec 'smolm2'"),
    ("benchmark: {{path: {bench}}}\nretrievers: [{{kind: bm25}}]\nreaders: [llama-cpp:/no/such.gguf]\n",
     "LLM model file or folder not found"),
    ("benchmark: {{path: {bench}}}\nretrievers: [{{kind: bm25}}]\nreaders: ['smollm2?n_thread=1']\n", "n_thread"),
    ("benchmark: {{path: {bench}}}\nretrievers: [{{kind: bm25}}]\nllm_cache: {bench}.trec/llm.sqlite\n",
     "is a file, not a folder"),
]


@pytest.mark.parametrize("body,needle", RUN_CASES, ids=[f"run-{i}" for i in range(len(RUN_CASES))])
def test_run_checks_its_whole_config_before_it_creates_anything(ws, body, needle, capsys, monkeypatch, tmp_path):
    root = ws["root"]
    config = tmp_path / "exp.yaml"
    config.write_text("name: t\n" + body.format(root=root, bench=root / "bench") + "oracles: false\n",
                      encoding="utf-8")
    before = sorted(p.name for p in (root / "bench").iterdir())
    test_bad_input_is_one_line_and_exit_2(ws, f"run {config} -o {{out}}", needle, capsys, monkeypatch)
    assert sorted(p.name for p in (root / "bench").iterdir()) == before  # no index, no stage written


def test_run_reports_the_config_field(ws, tmp_path, capsys, monkeypatch):
    config = tmp_path / "exp.yaml"
    config.write_text(f"name: t\nbenchmark: {{path: {ws['root'] / 'bench'}}}\nretrievers: [{{kind: bm25}}]\n"
                      "readers: [bm25]\n", encoding="utf-8")
    monkeypatch.setenv("COLUMNS", "200")
    assert main_code(["run", config, "-o", tmp_path / "out"]) == 2
    err = capsys.readouterr().err
    assert f"{config}: field 'readers[0].llm': unknown LLM spec 'bm25'" in err and not (tmp_path / "out").exists()


# -- fuzzing: every loader returns valid records or raises InputError ------------------------

# words the loaders take (ids of the fuzzed benchmark's questions, labels, verdicts, a strategy),
# so that fuzzed files also load and what the loaders return gets checked
_words = st.sampled_from(["0", "1", "2", "3", "-1", "0.5", "Q0", "q1", "p1", "accept", "reject", "skip",
                          "union_norm", "bm25", "demo_01", "demo_02", "demo_03", "demo_04"])
_text = st.text(string.printable + "éß☃\x00", max_size=12) | _words
_json = st.recursive(st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | _text,
                     lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_text, inner, max_size=4),
                     max_leaves=12)
_keys = ["id", "question", "answers", "hints", "text", "qid", "strategy", "k", "prediction", "golds",
         "name", "benchmark", "retrievers", "verdict", "answer", "convergence", "metadata"]
# records that look almost right: the loaders' own keys with random values
_record = st.dictionaries(st.sampled_from(_keys), _json, max_size=8)
# records of a loader's shape with random values: a question, an answer row, a sheet row, an experiment
_shaped = (st.fixed_dictionaries({"id": _text, "question": _text, "answers": st.lists(_text, max_size=2),
                                  "hints": st.lists(_text, max_size=3)})
           | st.fixed_dictionaries({"qid": _text, "strategy": _text, "k": st.integers(-1, 5), "prediction": _text},
                                   optional={"golds": st.lists(_text, max_size=2)})
           | st.fixed_dictionaries({"qid": _text, "answer": _text, "verdict": _text})
           | st.fixed_dictionaries({"name": _text, "benchmark": st.just({"demo": True}),
                                    "retrievers": st.lists(st.fixed_dictionaries({"kind": _words | _text}),
                                                           max_size=2)}))
_fuzz = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                        HealthCheck.too_slow])


def _loaders(bench_dir: Path):
    from inferqa.formats.sheets import read_sheet
    from inferqa.formats.benchmark import Benchmark
    from inferqa.experiments.config import load_config
    from inferqa.formats import Answers, Qrels

    bench = Benchmark(bench_dir)
    return {
        "questions.jsonl": lambda p: load_questions(p),
        "questions.json": lambda p: load_questions(p),
        "questions.csv": lambda p: load_questions(p),
        "questions.tsv": lambda p: load_questions(p),
        "qrels.txt": Qrels.from_file,
        "run.trec": Run.from_file,
        "answers.jsonl": lambda p: Answers.from_file(p, bench),
        "sheet.csv": lambda p: read_sheet(p),
        "sheet.jsonl": lambda p: read_sheet(p),
        "config.yaml": load_config,
    }


def _text_id(value) -> bool:
    return isinstance(value, str) and value.strip() != ""


def _check_loaded(name: str, got, most: int, bench_dir: Path) -> None:
    """What loader `name` returned is what it promises: its type, non-empty text ids (unique
    where the format says so), typed values, and no more records than the file can hold (`most`)."""
    from inferqa.experiments.config import ExperimentConfig
    from inferqa.formats import Answers
    from inferqa.formats.benchmark import Benchmark
    from inferqa.formats.sheets import ACCEPT, REJECT, SKIP, SheetVerdict
    from inferqa.records import Hint, Question

    if name.startswith("questions."):
        assert isinstance(got, list) and all(isinstance(q, Question) for q in got)
        assert len(got) <= most
        ids = [q.id for q in got]
        assert all(_text_id(i) for i in ids) and len(set(ids)) == len(ids)  # ids unique within the file
        for q in got:
            assert isinstance(q.text, str) and q.text.strip()
            assert isinstance(q.answers, list) and all(isinstance(a, str) for a in q.answers)
            assert isinstance(q.hints, list) and all(isinstance(h, Hint) and isinstance(h.text, str) for h in q.hints)
    elif name == "qrels.txt":
        assert isinstance(got, Qrels) and sum(map(len, got.values())) <= most
        for qid, labels in got.items():
            assert _text_id(qid) and labels and all(_text_id(pid) for pid in labels)
            assert all(isinstance(v, int) and not isinstance(v, bool) for v in labels.values())
    elif name == "run.trec":
        assert isinstance(got, Run) and sum(map(len, got.values())) <= most
        for qid, ranked in got.items():
            pids = [pid for pid, _ in ranked]
            assert _text_id(qid) and ranked and all(_text_id(pid) for pid in pids)
            assert len(set(pids)) == len(pids)  # a passage ranked once per question
            assert all(isinstance(s, float) for _, s in ranked)
    elif name == "answers.jsonl":
        questions = Benchmark(bench_dir).questions
        assert isinstance(got, Answers) and 0 < len(got) <= most
        for row in got:
            assert row["qid"] in questions and _text_id(row["strategy"]) and isinstance(row["prediction"], str)
            assert isinstance(row["k"], int) and not isinstance(row["k"], bool) and row["k"] >= 1
            assert row["golds"] == questions[row["qid"]].answers
    elif name.startswith("sheet."):
        assert isinstance(got, list) and 0 < len(got) <= most
        for v in got:
            assert isinstance(v, SheetVerdict) and isinstance(v.row, int)
            assert _text_id(v.qid) and _text_id(v.answer) and v.verdict in (ACCEPT, REJECT, SKIP)
    elif name == "config.yaml":
        assert isinstance(got, ExperimentConfig) and _text_id(got.name) and got.retrievers
        assert len({s.name for s in got.retrievers}) == len(got.retrievers)  # stages named apart
    else:
        raise AssertionError(f"no check for what {name} returns")


def _loads_or_input_error(name: str, load, path: Path, most: int, bench_dir: Path) -> None:
    """`load(path)` raises InputError or returns valid records: at most `most` of them."""
    try:
        got = load(path)
    except InputError:
        return  # any other exception fails the test with its traceback
    _check_loaded(name, got, most, bench_dir)


@_fuzz
@given(rows=st.lists(_shaped | _record | _json, max_size=4), as_lines=st.booleans())
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
        _loads_or_input_error(name, load, path, 1 if name.endswith(".yaml") else len(rows), ws["root"] / "bench")


_cell = st.text(string.printable.replace("\r", "") + "é", max_size=8) | _words


@_fuzz
@given(header=st.lists(st.sampled_from(_keys + ["hint_1", "hint_2", "convergence_1", "x"]) | _cell, max_size=6)
       | st.sampled_from([["id", "question", "answers", "hint_1"], ["qid", "answer", "verdict"]]),
       cells=st.lists(st.lists(_cell, max_size=7), max_size=4), sep=st.sampled_from([",", "\t", " "]),
       headed=st.booleans(), width=st.sampled_from([None, 4, 6]))
def test_table_loaders_fuzzed(ws, tmp_path_factory, header, cells, sep, headed, width):
    work = tmp_path_factory.mktemp("fz")
    if width is not None:  # every row as wide as the header (TREC files, which have none: qrels 4, runs 6)
        width = len(header) if headed else width
        cells = [(row + [""] * width)[:width] for row in cells]
    text = "\n".join(sep.join(row) for row in ([header] if headed else []) + cells)
    for name, load in _loaders(ws["root"] / "bench").items():
        if name.endswith((".csv", ".tsv", ".txt", ".trec")):
            path = work / name
            path.write_text(text, encoding="utf-8")
            # a record per line at the most (a cell may hold a line break)
            _loads_or_input_error(name, load, path, len(text.splitlines()), ws["root"] / "bench")


@_fuzz
@given(data=st.binary(max_size=64))
def test_every_loader_on_random_bytes(ws, tmp_path_factory, data):
    work = tmp_path_factory.mktemp("fz")
    for name, load in _loaders(ws["root"] / "bench").items():
        path = work / name
        path.write_bytes(data)
        # a record per line, or per object of a one-line JSON array, at the most
        _loads_or_input_error(name, load, path, max(len(data.splitlines()), data.count(b"{")), ws["root"] / "bench")


# -- outputs: checked before any work, nothing written or left behind ----------------------

def _tree(root: Path) -> set[str]:
    return {str(p.relative_to(root)) for p in root.rglob("*")}


def _one_error_line(code: int, err: str, needle: str) -> str:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert code == 2, (code, err)
    assert len(lines) == 1 and lines[0].startswith("inferqa: error:") and "Traceback" not in err, err
    assert needle in lines[0], (needle, lines[0])
    return lines[0]


# Every command that writes, with the kind of output at {o}.
WRITERS = [
    ("retrieve {bench} -o {o}", "file"),
    ("oracle {bench} --kind optimal -o {o}", "file"),
    ("fuse {bench}.trec {bench}.trec -o {o}", "file"),
    ("rerank {bench}.trec -b {bench} -r oracle -o {o}", "file"),
    ("rerank {bench}.trec -b {bench} -r cross-encoder -o {o}", "file"),
    ("read {bench}.trec -b {bench} -o {o}", "file"),
    ("read {bench}.trec -b {bench} -o {root}/unused.jsonl --cache {o}", "file"),
    ("tune-union --bench {bench} --split test --cache {o}", "file"),
    ("export pyserini --bench {bench} -o {o}", "file"),
    ("export rankify --bench {bench} --run {bench}.trec --split test -o {o}", "file"),
    ("export retriever-jsonl --bench {bench} --split test -o {o}", "file"),
    ("explore {bench}.trec --bench {bench} -o {o}", "file"),
    ("annotate export {bench} -o {o}", "file"),
    ("build --demo -o {o}", "dir"),
    ("index {bench} --index-dir {o}", "dir"),
    ("run {root}/ok.yaml -o {o}", "dir"),
    ("demo -o {o}", "dir"),
    ("finetune retriever --bench {bench} -o {o}", "dir"),
]


def _writer_argv(ws, line: str, o: Path) -> list[str]:
    root = ws["root"]
    if not (root / "ok.yaml").exists():
        (root / "ok.yaml").write_text("name: t\nbenchmark: {demo: true}\nretrievers: [{name: b, kind: bm25}]\n")
    return line.format(root=root, bench=root / "bench", o=o).split()


@pytest.fixture
def no_models(monkeypatch):
    """Any model or LLM load fails the test: every output check comes first."""
    import inferqa.scale

    def boom(*a, **k):
        raise AssertionError("a model was loaded before the output was checked")

    monkeypatch.setattr(inferqa.scale, "load_scaled_llm", boom)
    try:
        import sentence_transformers
    except ImportError:
        return
    monkeypatch.setattr(sentence_transformers, "SentenceTransformer", boom)
    monkeypatch.setattr(sentence_transformers, "CrossEncoder", boom)


@pytest.mark.parametrize("line,kind", WRITERS, ids=[w[0].split(" {")[0] for w in WRITERS])
@pytest.mark.parametrize("bad", ["wrong-kind", "under-a-file"])
def test_bad_output_path_is_one_line_before_any_work(ws, line, kind, bad, capsys, monkeypatch, no_models):
    """An --out that is a directory (or, for a folder output, a file), or that sits under a
    file: one line naming it, exit 2, nothing written, no model loaded. Holds for root too."""
    root = ws["root"]
    work = root / f"w-{bad}"
    work.mkdir(exist_ok=True)
    if bad == "wrong-kind":
        o = work / f"taken-{kind}"
        if kind == "file":
            o.mkdir(exist_ok=True)
        else:
            o.write_text("a file\n")
        needle = "is a directory" if kind == "file" else "is a file"
    else:
        (work / "plain").write_text("a file\n")
        o = work / "plain" / "sub" / "out"
        needle = "plain is a file, not a folder"
    argv = _writer_argv(ws, line, o)
    before = _tree(root)
    monkeypatch.setenv("COLUMNS", "200")
    code = main_code(argv)
    _, err = capsys.readouterr()
    assert str(o) in _one_error_line(code, err, needle)
    assert _tree(root) == before


def _as_nobody(argv: list[str], warm_argv: list[str]) -> tuple[int, str]:
    """Run the CLI in a forked child as user nobody (root ignores mode bits). The child first
    runs `warm_argv` as root, failing at the same output check, so every module the command
    imports is loaded before it loses the right to read the interpreter's own library."""
    import io
    import os

    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.close(r)
        try:
            sys.stderr = io.StringIO()
            main_code(warm_argv)
            sys.stderr = io.StringIO()
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            code = main_code(argv)
            msg = f"{code}\n{sys.stderr.getvalue()}"
        except BaseException as exc:
            msg = f"99\n{type(exc).__name__}: {exc}"
        os.write(w, msg.encode())
        os._exit(0)
    os.close(w)
    data = b""
    while chunk := os.read(r, 1 << 16):
        data += chunk
    os.close(r)
    os.waitpid(pid, 0)
    code, _, err = data.decode().partition("\n")
    return int(code), err


# the commands whose first check is their -o (a child running as nobody reaches no other path)
RO_WRITERS = [w for w in WRITERS if "-o {o}" in w[0] and w[0].split()[0] in
              ("retrieve", "read", "export", "rerank", "oracle", "build", "fuse")]


@pytest.mark.parametrize("line,kind", RO_WRITERS, ids=[w[0].split(" {")[0] for w in RO_WRITERS])
def test_output_in_a_read_only_folder_is_one_line(ws, line, kind, capsys, monkeypatch, tmp_path_factory):
    """A folder the user may not write to: refused before any work. As root (who may write
    anywhere) the command runs in a forked child as user nobody, in a folder nobody can reach."""
    import os
    import tempfile

    monkeypatch.setenv("COLUMNS", "200")
    if os.geteuid() == 0:
        base = Path(tempfile.mkdtemp(dir="/tmp", prefix="inferqa-ro-"))
        try:
            base.chmod(0o755)
            (base / "ro").mkdir(mode=0o555)
            (base / "ro").chmod(0o555)
            (base / "plain").write_text("x\n")
            o = base / "ro" / "out"
            code, err = _as_nobody(_writer_argv(ws, line, o), _writer_argv(ws, line, base / "plain" / "x"))
            assert str(o) in _one_error_line(code, err, "is not writable")
            assert not any((base / "ro").iterdir())
        finally:
            (base / "ro").chmod(0o755)
            shutil.rmtree(base)
        return
    ro = tmp_path_factory.mktemp("ro")
    ro.chmod(0o555)
    try:
        o = ro / "out"
        code = main_code(_writer_argv(ws, line, o))
        _, err = capsys.readouterr()
        assert str(o) in _one_error_line(code, err, "is not writable")
        assert not any(ro.iterdir())
    finally:
        ro.chmod(0o755)


def test_check_output_refusals(tmp_path):
    """check_output by hand: what each refusal says, for root as for anyone."""

    from inferqa.io import check_output

    (tmp_path / "f").write_text("x")
    (tmp_path / "d").mkdir()
    assert check_output(tmp_path / "new" / "deeper" / "x.trec") == tmp_path / "new" / "deeper" / "x.trec"
    assert check_output(tmp_path / "d", kind="dir") == tmp_path / "d"
    assert check_output(tmp_path / "f") == tmp_path / "f"  # an existing file is replaced
    for path, kind, needle in [(tmp_path / "d", "file", "is a directory"), (tmp_path / "f", "dir", "is a file"),
                               (tmp_path / "f" / "x", "file", f"{tmp_path / 'f'} is a file, not a folder"),
                               (tmp_path / "f" / "a" / "b", "dir", "is a file, not a folder"),
                               (Path("/dev/null"), "file", "special file")]:
        with pytest.raises(InputError) as exc:
            check_output(path, kind=kind)
        assert needle in str(exc.value) and str(path) in str(exc.value)


@pytest.mark.parametrize("line,needle", [
    ("rerank {bench}.trec -b {bench} -r oracle -o {o}", None),
    ("rerank {bench}.trec -b {bench} -r llm-pointwise --llm smollm3 -o {o}", "unknown LLM spec 'smollm3'"),
    ("rerank {bench}.trec -b {bench} -r llm-listwise --llm nope:x -o {o}", "unknown LLM spec 'nope:x'"),
    ("rerank {bench}.trec -b {bench} -r upr --llm smollm -o {o}", "unknown LLM spec 'smollm'"),
])
def test_rerank_leaves_no_checkpoint(ws, line, needle, capsys, monkeypatch):
    """The per-question checkpoint beside --out is gone after a finished run, and never made
    by a run that fails before its first question (a mistyped --llm)."""
    root = ws["root"]
    work = root / "ckpt"
    work.mkdir(exist_ok=True)
    o = work / "reranked.trec"
    o.unlink(missing_ok=True)
    monkeypatch.setenv("COLUMNS", "200")
    code = main_code(line.format(bench=root / "bench", o=o).split())
    _, err = capsys.readouterr()
    if needle is None:
        assert code == 0, err
        assert [p.name for p in work.iterdir() if p.name != LEDGER] == ["reranked.trec"]
        assert set(Run.from_file(o)) == set(Run.from_file(root / "bench.trec"))
    else:
        _one_error_line(code, err, needle)
        assert not any(p.name != LEDGER for p in work.iterdir())  # the ledger of an earlier case's output


# -- modes: what open() and mkdir() give under the umask -----------------------------------

@pytest.fixture
def umask():
    import os

    def set_mask(mask: int) -> None:
        os.umask(mask)

    old = os.umask(0o022)
    os.umask(old)
    yield set_mask
    os.umask(old)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o077])
def test_written_files_and_folders_get_the_umask_mode(tmp_path, umask, mask):
    from inferqa.io import atomic_dir, atomic_open, write_json, write_jsonl

    umask(mask)
    write_json(tmp_path / "a.json", {"a": 1})
    write_jsonl(tmp_path / "b.jsonl", [{"b": 1}])
    with atomic_open(tmp_path / "c.bin", "wb") as fh:
        fh.write(b"c")
    with atomic_dir(tmp_path / "d") as tmp:
        (tmp / "inside.txt").write_text("x")
    Run({"q": [("p", 1.0)]}).to_file(tmp_path / "e.trec")
    build_benchmark(load_questions(demo_path())[:2], tmp_path / "bench", top_k=2, split=(1.0,))
    file_mode, dir_mode = 0o666 & ~mask, 0o777 & ~mask
    for name in ("a.json", "b.jsonl", "c.bin", "e.trec", "d/inside.txt", "bench/meta.json", "bench/corpus.jsonl"):
        assert (tmp_path / name).stat().st_mode & 0o777 == file_mode, name
    for name in ("d", "bench"):
        assert (tmp_path / name).stat().st_mode & 0o777 == dir_mode, name
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_cli_outputs_get_the_umask_mode(ws, tmp_path, umask, capsys):
    umask(0o002)
    bench = ws["root"] / "bench"
    assert main_code(["oracle", bench, "--kind", "optimal", "-o", tmp_path / "o.trec"]) == 0
    assert main_code(["export", "pyserini", "--bench", bench, "-o", tmp_path / "p.jsonl"]) == 0
    assert main_code(["build", "--demo", "--top-k", "2", "-o", tmp_path / "b"]) == 0
    capsys.readouterr()
    assert {p.name: p.stat().st_mode & 0o777 for p in tmp_path.iterdir()} == {"o.trec": 0o664, "p.jsonl": 0o664,
                                                                              LEDGER: 0o664, "b": 0o775}


# -- stale temporaries: left by a dead process, swept by the next writer -------------------

def _dead_pid() -> int:
    import subprocess

    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def _stale_line(err: str, path: Path) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("inferqa: removed ") and str(path) in lines[0], err
    assert "no longer runs" in lines[0]


def test_stale_temp_file_of_a_dead_writer_is_swept(tmp_path, capsys):
    from inferqa.io import write_json

    pid = _dead_pid()
    stale = tmp_path / f".x.json.inferqa-{pid}-0badc0de.tmp"
    stale.write_text('{"half": ')
    other = tmp_path / f".y.json.inferqa-{pid}-0badc0de.tmp"  # another target's: not this writer's business
    other.write_text("{")
    write_json(tmp_path / "x.json", {"a": 1})
    _stale_line(capsys.readouterr().err, stale)
    assert sorted(p.name for p in tmp_path.iterdir()) == [other.name, "x.json"]
    assert json.loads((tmp_path / "x.json").read_text()) == {"a": 1}


def test_stale_temp_folder_of_a_dead_build_is_swept(tmp_path, capsys):
    pid = _dead_pid()
    stale = tmp_path / f".bench.inferqa-{pid}-0badc0de.tmp"
    stale.mkdir()
    (stale / "corpus.jsonl").write_text('{"id": "half')
    assert main_code(["build", "--demo", "--top-k", "2", "-o", tmp_path / "bench"]) == 0
    out = capsys.readouterr()
    _stale_line(out.err, stale)
    assert [p.name for p in tmp_path.iterdir()] == ["bench"]


def test_old_output_of_a_writer_killed_mid_swap_is_restored(tmp_path, capsys):
    """Killed between moving the old folder aside and renaming the new one in: the next writer
    puts the old one back (then replaces it as asked)."""
    from inferqa.io import atomic_dir, sweep_stale

    pid = _dead_pid()
    old = tmp_path / f".d.inferqa-{pid}-0badc0de.old"
    old.mkdir()
    (old / "kept.txt").write_text("old")
    assert sweep_stale(tmp_path / "d") == [old]
    assert "restored" in capsys.readouterr().err
    assert (tmp_path / "d" / "kept.txt").read_text() == "old"
    with atomic_dir(tmp_path / "d") as tmp:
        (tmp / "new.txt").write_text("new")
    assert [p.name for p in tmp_path.iterdir()] == ["d"]
    assert [p.name for p in (tmp_path / "d").iterdir()] == ["new.txt"]


def test_temps_of_live_writers_are_left_alone(tmp_path, capsys):
    """Not age: a temp whose process runs (this one), or whose lock is held, stays."""
    import os
    import subprocess

    from inferqa.io import sweep_stale, write_json

    mine = tmp_path / f".x.json.inferqa-{os.getpid()}-0badc0de.tmp"
    mine.write_text("{")
    os.utime(mine, (0, 0))  # as old as can be
    holder = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\nfrom inferqa.io import temp_beside\n"
        f"with temp_beside({str(tmp_path / 'x.json')!r}):\n    print('ready', flush=True); sys.stdin.read()")],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        theirs = [p for p in tmp_path.iterdir() if f"inferqa-{holder.pid}-" in p.name]
        assert len(theirs) == 1
        write_json(tmp_path / "x.json", [1])
        assert sweep_stale(tmp_path / "x.json") == []
        assert capsys.readouterr().err == ""
        assert mine.exists() and theirs[0].exists()
    finally:
        holder.communicate("")
    assert not theirs[0].exists()  # its own writer removed it on the way out


def test_killed_build_leaves_nothing_after_the_next_run(wikihint_file, tmp_path):
    """SIGKILL cannot be trapped: `build` killed mid-write leaves its temp folder (a partial
    corpus); the next build of the same --out removes it with one notice and writes the same
    benchmark as an uninterrupted build."""
    import glob
    import os
    import signal
    import subprocess
    import time

    out = tmp_path / "bench"
    cmd = [sys.executable, "-m", "inferqa", "build", str(wikihint_file), "-o", str(out)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1] / "src")}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    pattern = str(tmp_path / f".bench.inferqa-{proc.pid}-*.tmp" / "corpus.jsonl")
    deadline = time.monotonic() + 300
    while proc.poll() is None and time.monotonic() < deadline:
        partial = glob.glob(pattern)
        if partial and os.path.getsize(partial[0]) > 0:
            os.kill(proc.pid, signal.SIGKILL)
            break
        time.sleep(0.002)
    assert proc.wait() == -signal.SIGKILL, "the build ended before it could be killed mid-write"
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].startswith(f".bench.inferqa-{proc.pid}-"), left

    rerun = subprocess.run(cmd, capture_output=True, text=True, env=env)
    assert rerun.returncode == 0, rerun.stderr
    notices = [ln for ln in rerun.stderr.splitlines() if ln.startswith("inferqa: removed")]
    assert len(notices) == 1 and left[0] in notices[0] and f"process {proc.pid}" in notices[0]
    assert [p.name for p in tmp_path.iterdir()] == ["bench"]

    reference = tmp_path.parent / f"{tmp_path.name}-reference"
    build_benchmark(load_questions(wikihint_file), reference, sources=[{"path": str(wikihint_file),
                                                                        "format": "auto"}])
    try:
        for name in ("questions.jsonl", "corpus.jsonl", "qrels.tsv", "splits.json"):
            assert (out / name).read_bytes() == (reference / name).read_bytes(), name
        meta, ref = (json.loads((d / "meta.json").read_text()) for d in (out, reference))
        assert {k: v for k, v in meta.items() if k != "created"} == {k: v for k, v in ref.items() if k != "created"}
    finally:
        shutil.rmtree(reference)


# -- write failures os.access cannot foresee: one line naming the output, no temp left ----

def test_a_folder_that_refuses_the_temp_is_one_line(ws, tmp_path, capsys, monkeypatch):
    """os.access says yes, the kernel says no (root on a root-squashed share): creating the
    temp file or folder fails, and that is one line naming the output, exit 2."""
    import errno
    import os

    import inferqa.io

    real_open, real_mkdir = os.open, os.mkdir

    def refuse(real):
        def wrapped(path, *a, **k):
            if ".inferqa-" in str(path):
                raise PermissionError(errno.EACCES, "Permission denied", str(path))
            return real(path, *a, **k)
        return wrapped

    monkeypatch.setattr(inferqa.io.os, "open", refuse(real_open))
    monkeypatch.setattr(inferqa.io.os, "mkdir", refuse(real_mkdir))
    bench = ws["root"] / "bench"
    for argv, o in [(["oracle", bench, "--kind", "optimal", "-o"], tmp_path / "o.trec"),
                    (["export", "pyserini", "--bench", bench, "-o"], tmp_path / "p.jsonl"),
                    (["build", "--demo", "--top-k", "2", "-o"], tmp_path / "b")]:
        code = main_code([*argv, o])
        line = _one_error_line(code, capsys.readouterr().err, "cannot write: Permission denied")
        assert str(o) in line
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("code", ["ENOSPC", "EDQUOT", "EROFS"])
def test_a_full_disk_while_writing_is_one_line_and_leaves_no_temp(tmp_path, code):
    import errno
    import os

    from inferqa.io import atomic_dir, atomic_open

    failure = OSError(getattr(errno, code), os.strerror(getattr(errno, code)))
    with pytest.raises(InputError) as exc:
        with atomic_open(tmp_path / "x.json") as fh:
            fh.write("{")
            raise failure
    assert str(exc.value) == f"{tmp_path / 'x.json'}: cannot write: {failure.strerror}"
    with pytest.raises(InputError, match="cannot write"):
        with atomic_dir(tmp_path / "d"):
            raise failure
    with pytest.raises(OSError) as other:  # other errors of the block are not ours to rename
        with atomic_open(tmp_path / "y.json"):
            raise FileNotFoundError(errno.ENOENT, "No such file", "some-input.json")
    assert not isinstance(other.value, InputError)
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("cut", ["last", "middle"])
def test_a_corpus_cut_mid_record_is_one_line_and_no_index(tmp_path, cut, capsys):
    questions = load_questions(demo_path())
    build_benchmark(questions[:4], tmp_path / "b", top_k=3, split=(0.5, 0.0, 0.5))
    corpus = tmp_path / "b" / "corpus.jsonl"
    lines = corpus.read_bytes().split(b"\n")
    if cut == "last":  # a copy that stopped: the file ends inside its last record
        corpus.write_bytes(b"\n".join(lines)[:-25])
        line = len([x for x in lines if x])
    else:  # a record cut and the next one written after it: its id is whole, its text is not
        lines[1] = lines[1][: len(lines[1]) // 2]
        corpus.write_bytes(b"\n".join(lines))
        line = 2
    before = _tree(tmp_path / "b")
    code = main_code(["index", str(tmp_path / "b")])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1
    assert f"{corpus}: record line {line}:" in err and ("cut" in err or "truncated" in err)
    assert _tree(tmp_path / "b") == before


@pytest.mark.parametrize("label", ["1.5", "x", "1_0", "+1", "\u0661"])
def test_a_non_integer_qrels_label_is_one_error_naming_line_and_field(tmp_path, label):
    path = tmp_path / "q.txt"
    path.write_text(f"q1 0 p1 1\nq1 0 p2 {label}\n", encoding="utf-8")
    with pytest.raises(InputError) as exc:
        Qrels.from_file(path)
    assert str(exc.value) == f"{path}: record line 2: field 'label': label {label!r} is not an integer"


# -- a release tree: a special file under a released name is refused, not skipped ------------

@pytest.mark.parametrize("rel", ["retriever/bm25/retriever.zsd", "index/test/retriever.zsd"])
def test_a_fifo_inside_a_release_tree_is_one_line_naming_it(tmp_path, rel, capsys, monkeypatch):
    from conftest import run_cli
    from test_reproduce import make_tree

    results = make_tree(tmp_path)
    fifo = results / rel
    fifo.unlink()
    os.mkfifo(fifo)  # opening it would block until a writer comes; listing it "absent" would hide it
    out = tmp_path / "tables"
    code, _, err = run_cli(monkeypatch, capsys, "reproduce", results, "--out", out)
    line = _one_error_line(code, err, str(fifo))
    assert "FIFO" in line
    assert not out.exists()


# -- an unlabelled benchmark: commands that need labels.jsonl say so, naming it -------------

@pytest.fixture
def unlabelled(tmp_path):
    build_benchmark(load_questions(demo_path())[:4], tmp_path / "b", top_k=3, split=(0.5, 0.0, 0.5))
    assert not (tmp_path / "b" / "labels.jsonl").exists()
    return tmp_path / "b"


def test_stored_answers_without_stored_answers_names_labels_and_field(unlabelled, capsys):
    before = _tree(unlabelled)
    code = main_code(["stored-answers", unlabelled])
    line = _one_error_line(code, capsys.readouterr().err, str(unlabelled / "labels.jsonl"))
    assert "field 'reader_answers'" in line and "no stored answers" in line
    assert _tree(unlabelled) == before


def test_annotate_export_without_labels_is_one_line_and_writes_no_sheet(unlabelled, tmp_path, capsys):
    sheet = tmp_path / "sheet.csv"
    code = main_code(["annotate", "export", unlabelled, "--out", sheet])
    line = _one_error_line(code, capsys.readouterr().err, str(unlabelled / "labels.jsonl"))
    assert "label the benchmark first" in line
    assert not sheet.exists() and not any(p.name.startswith(".") for p in tmp_path.iterdir())


# -- the Python API checks a run object as the CLI checks a run file -----------------------------

def test_api_refuses_a_run_of_another_benchmark_with_the_cli_message(ws, tmp_path, capsys):
    import inferqa

    bench = ws["root"] / "bench"
    (tmp_path / "zzz.trec").write_text("zzz Q0 foo 1 1.0 t\n")
    code = main_code(["evaluate", tmp_path / "zzz.trec", "--bench", bench, "-m", "RR"])
    cli = _one_error_line(code, capsys.readouterr().err, "zzz.trec").split("zzz.trec: ", 1)[1]
    for kw in ({}, {"split": "test"}):
        with pytest.raises(InputError) as caught:
            inferqa.evaluate({"zzz": {"foo": 1.0}}, bench, "RR", **kw)
        assert str(caught.value) == cli  # the same line, less the file name
        with pytest.raises(InputError, match="question 'zzz' is not in the benchmark"):
            inferqa.compare([{"zzz": {"foo": 1.0}}, ws["root"] / "bench.trec"], bench, "RR", **kw)


_qid = st.sampled_from(["demo_00", "q", "1"]) | st.integers(0, 3)
_bad_score = st.sampled_from([math.nan, math.inf, -math.inf, "1.0", None, [1.0], True]) | st.text(max_size=3)
_bad_ranking = (st.text(max_size=4) | st.integers() | st.none() | st.floats(allow_nan=True)
                | st.lists(st.text(max_size=3), min_size=1, max_size=3)  # entries that are not (pid, score)
                | st.lists(st.tuples(st.text(max_size=3)), min_size=1, max_size=2)
                | st.lists(st.tuples(st.text(max_size=3), st.floats(), st.floats()), min_size=1, max_size=2)
                | st.dictionaries(st.text(max_size=3), _bad_score, min_size=1, max_size=2)
                | st.lists(st.tuples(st.text(max_size=3), _bad_score), min_size=1, max_size=2))
_bad_run = (st.none() | st.integers() | st.text(max_size=0) | st.lists(st.integers(), max_size=2)
            | st.sets(st.integers(), max_size=2) | st.floats()
            | st.dictionaries(_qid, _bad_ranking, min_size=1, max_size=3))
_bad_qrels = (st.none() | st.integers() | st.lists(st.integers(), max_size=2)
              | st.dictionaries(_qid, st.integers() | st.text(max_size=2) | st.lists(st.integers(), max_size=2),
                                min_size=1, max_size=2)
              | st.dictionaries(_qid, st.dictionaries(st.text(max_size=2), st.floats(allow_nan=True).filter(
                  lambda x: not float(x).is_integer() if math.isfinite(x) else True)
                  | st.text(max_size=2) | st.none(), min_size=1, max_size=2), min_size=1, max_size=2))


@_fuzz
@given(run=_bad_run, good_first=st.booleans())
def test_malformed_run_objects_are_input_errors(run, good_first):
    from inferqa.evaluation import compare, evaluate
    from inferqa.formats import Qrels

    qrels = Qrels({"demo_00": {"a": 1, "b": 0}, "q": {"c": 2}})
    good = {"demo_00": {"a": 2.0, "b": 1.0}}
    with pytest.raises(InputError):
        evaluate(run, qrels, ["RR", "nDCG@10"])
    with pytest.raises(InputError):
        compare([good, run] if good_first else [run, good], qrels, ["RR"], resamples=10)


@_fuzz
@given(qrels=_bad_qrels)
def test_malformed_qrels_objects_are_input_errors(qrels):
    from inferqa.evaluation import compare, evaluate

    run = {"demo_00": {"a": 2.0, "b": 1.0}}
    with pytest.raises(InputError):
        evaluate(run, qrels, ["RR"])
    with pytest.raises(InputError):
        compare([run, run], qrels, ["RR"], resamples=10)
