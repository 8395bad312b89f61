"""The three cases of the older bad-input matrix: each is one line, exit 2, and nothing written."""

from __future__ import annotations

import json
from pathlib import Path

from conftest import one_line_error, run_cli


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _labels_without_answers(bench) -> None:
    """labels.jsonl as `import-answers` leaves an unlabelled benchmark: the qrels labels, no
    labeller's answer, no reader's answer."""
    rows = [{"pid": pid, "qid": qid, "label": label, "answers": {}, "correct": {}}
            for qid, labels in bench.qrels.items() for pid, label in labels.items()]
    (bench.path / "labels.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))


def test_a_non_integer_relevance_in_the_benchmarks_qrels(bench_factory, tmp_path, monkeypatch, capsys):
    bench = bench_factory(2, root=tmp_path)
    lines = (bench.path / "qrels.tsv").read_text().splitlines()
    qid, zero, pid, _ = lines[2].split()
    lines[2] = f"{qid} {zero} {pid} 1.5"
    (bench.path / "qrels.tsv").write_text("\n".join(lines) + "\n")
    (tmp_path / "run.trec").write_text(f"{qid} Q0 {pid} 1 1.0 x\n")
    before = _tree(tmp_path)
    for args in (("oracle", bench.path, "--kind", "optimal", "-o", tmp_path / "oracle.trec"),
                 ("evaluate", tmp_path / "run.trec", "--bench", bench.path, "-m", "mrr"),
                 ("export", "qrels", "--bench", bench.path, "-o", tmp_path / "test.qrels")):
        code, out, err = run_cli(monkeypatch, capsys, *args)
        one_line_error(code, err, f"{bench.path / 'qrels.tsv'}: record line 3: field 'label': label '1.5' is not "
                                  "an integer")
        assert out == "" and _tree(tmp_path) == before


def test_stored_answers_over_labels_that_hold_no_stored_answer(bench_factory, tmp_path, monkeypatch, capsys):
    bench = bench_factory(2, root=tmp_path)
    _labels_without_answers(bench)
    (tmp_path / "answers.jsonl").write_text('{"qid": "demo_01", "strategy": "union_norm", "k": 1, '
                                            '"prediction": "x"}\n')
    before = _tree(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, "stored-answers", bench.path, "--split", "all")
    one_line_error(code, err, f"{bench.path / 'labels.jsonl'}: field 'reader_answers': no stored answers for "
                              "split 'all'")
    # a model named: the rows hold no answer of any model, said so (not "no answers of model x (have: )")
    code, out, err = run_cli(monkeypatch, capsys, "stored-answers", bench.path, "--model", "smollm2")
    one_line_error(code, err, f"{bench.path}: no stored answers for these questions")
    assert "have:" not in err
    # an answers file given for the benchmark
    code, out, err = run_cli(monkeypatch, capsys, "stored-answers", tmp_path / "answers.jsonl")
    one_line_error(code, err, f"{tmp_path / 'answers.jsonl'}: a file, not a benchmark directory")
    assert out == "" and _tree(tmp_path) == before


def test_annotate_export_on_a_benchmark_without_labeller_answers(bench_factory, tmp_path, monkeypatch, capsys):
    """Without labels.jsonl, or with one holding no labeller's answer (only the qrels labels):
    nothing to review, so no sheet."""
    bench = bench_factory(2, root=tmp_path / "b")
    sheet = tmp_path / "sheet.csv"
    before = _tree(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, "annotate", "export", bench.path, "--out", sheet)
    one_line_error(code, err, f"{bench.path / 'labels.jsonl'}: labels.jsonl is missing: label the benchmark first")
    assert _tree(tmp_path) == before
    _labels_without_answers(bench)
    before = _tree(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, "annotate", "export", bench.path, "--out", sheet)
    one_line_error(code, err, f"{bench.path / 'labels.jsonl'}: field 'answers': no labeller answers for split "
                              "'all': label the benchmark first")
    assert out == "" and _tree(tmp_path) == before and not sheet.exists()
