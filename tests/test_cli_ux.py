"""What a newcomer meets first: --version, flags, stats, evaluate's table and JSON, doctor's ties."""

from __future__ import annotations

import itertools
import json
import re

import pytest

import inferqa
from inferqa.formats import Run
from inferqa.formats.benchmark import Benchmark
from inferqa.construct import build_benchmark
from inferqa.data import load_questions
from inferqa.errors import InputError
from inferqa.evaluation import evaluate
from conftest import one_line_error, run_cli


def _jsonl(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def _row(qid, n=5):
    return {"id": qid, "question": "Which?", "answers": ["zzz"], "hints": [f"hint {i} of {qid}." for i in range(n)]}


@pytest.fixture(scope="module")
def bench(bench_factory) -> Benchmark:
    return bench_factory(4)


# -- the command line ------------------------------------------------------------------------

def test_version(monkeypatch, capsys):
    code, out, _ = run_cli(monkeypatch, capsys, "--version")
    assert code == 0 and out.strip() == f"inferqa {inferqa.__version__}"


def test_flags_show_no_type_and_refuse_a_value(monkeypatch, capsys, tmp_path):
    code, out, _ = run_cli(monkeypatch, capsys, "build", "--help")
    assert code == 0 and "--demo" in out and "<bool>" not in out
    code, out, _ = run_cli(monkeypatch, capsys, "run", "--help")
    assert "--progress" in out and "--no-progress" in out and "<bool>" not in out
    code, _, err = run_cli(monkeypatch, capsys, "build", "--demo", "true", "--out", tmp_path / "b")
    one_line_error(code, err, "--demo", "takes no value", "'true'")
    assert not (tmp_path / "b").exists()
    code, _, err = run_cli(monkeypatch, capsys, "run", "x.yaml", "--progress", "no")
    one_line_error(code, err, "--progress", "--no-progress")
    # a file that happens to be called `true` is still a source
    (tmp_path / "true").write_text(json.dumps(_row("a")) + "\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_cli(monkeypatch, capsys, "build", "--demo", "true", "--out", tmp_path / "c")
    assert code in (0, None), err


def test_stats_names_the_build_counts(monkeypatch, capsys, tmp_path):
    src = _jsonl(tmp_path / "mine.jsonl", [_row("a"), _row("b"), _row("c", 3)])
    code, _, err = run_cli(monkeypatch, capsys, "build", src, "--out", tmp_path / "b", "--split", "1,1")
    assert code in (0, None), err
    code, out, err = run_cli(monkeypatch, capsys, "stats", tmp_path / "b")
    assert code in (0, None), err
    assert "questions_in" not in out and "leak_hints_dropped" not in out and ": " not in out
    rows = {}
    for line in out.splitlines():
        cells = [c.strip() for c in line.strip("│ ").split("│")]
        if len(cells) == 2:
            rows[cells[0]] = cells[1]
    # 3 questions, 5 + 5 + 3 hints read; c has fewer than 5 hints; 2 kept x 325 passages
    assert rows["questions read"] == "3" and rows["hints read"] == "13"
    assert rows["questions skipped (too few hints)"] == "1" and rows["questions kept"] == "2"
    assert rows["passages per question"] == "325" and rows["passages"] == "650"
    assert rows["leaking hints dropped"] == "0"


def _noisy_run(bench: Benchmark) -> Run:
    """First relevant passage at ranks 1, 2 and 3 of three questions: MRR (1 + 1/2 + 1/3) / 3."""
    *qids, last = list(bench.questions)[:4]
    other = list(bench.qrels[last])[:2]  # label 0 for the three questions
    run = Run(tag="noisy")
    for depth, qid in enumerate(qids):
        own = next(iter(bench.qrels[qid]))
        run[qid] = [(pid, 3.0 - i) for i, pid in enumerate([*other[:depth], own])]
    return run


def test_evaluate_title_fits_and_json_is_rounded(bench, monkeypatch, capsys, tmp_path):
    run = _noisy_run(bench)
    path = tmp_path / "noisy.trec"
    run.to_file(path)
    # the run's 3 questions only (--questions run): by default the 4th, judged, would count 0
    want = evaluate(run, bench.qrels, ["mrr", "ndcg@10"], questions="run")
    assert want["mrr"] == (1 + 1 / 2 + 1 / 3) / 3 and len(repr(want["mrr"])) > 14  # 0.6111111111111112
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", path, "--bench", bench.path, "-m", "mrr,ndcg@10",
                             "--json", "--questions", "run")
    assert code in (0, None), err
    assert not re.search(r"\d\.\d{11,}", out)
    got = json.loads(out)["metrics"]
    assert got == {m: float(f"{v:.10g}") for m, v in want.items()} and got["mrr"] == 0.6111111111
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", path, "--bench", bench.path, "-m", "mrr",
                             "--questions", "run")
    assert code in (0, None), err
    lines = out.splitlines()
    assert [ln.strip() for ln in lines[:1]] == ["noisy.trec (%)"]  # the title, on one line
    assert any(ln.split("│")[1:3] == [" mrr    ", "  61.11 "] or "61.11" in ln for ln in lines)
    note = " ".join(" ".join(lines[[i for i, ln in enumerate(lines) if ln.startswith("└")][-1] + 1:]).split())
    assert note == ("3 questions scored, 0 left out (not judged), 0 counted 0 (judged, not in the run); "
                    "relevant: label ≥ 1, inferqa protocol, values in percent")


# -- doctor ----------------------------------------------------------------------------------

def _independent_ties(run: Run, qrels, tie_length: int):
    """Runs of equal scores (at least tie_length) sorted into the three kinds, computed here."""
    kinds = {"orderings": 0, "one label": 0, "mixed": 0}
    for qid, ranked in run.items():
        for _, group in itertools.groupby(ranked, key=lambda x: x[1]):
            pids = [pid for pid, _ in group]
            if len(pids) < tie_length:
                continue
            if len({pid.rsplit("_", 1)[0] for pid in pids}) == 1:  # qid_mask: one hint set
                kinds["orderings"] += 1
            elif len({qrels.get(qid, {}).get(pid, 0) for pid in pids}) == 1:
                kinds["one label"] += 1
            else:
                kinds["mixed"] += 1
    return kinds


def _write_plain(run, path):
    """A TREC run with 6-decimal scores, ties kept (as other tools write them; Run.to_file breaks ties)."""
    path.write_text("".join(f"{q} Q0 {pid} {r} {score:.6f} x\n" for q, ranked in run.items()
                            for r, (pid, score) in enumerate(ranked, 1)))


def test_doctor_notes_by_design_ties_and_fails_on_the_rest(bench, monkeypatch, capsys, tmp_path):
    def orderings(q):  # the 6 orderings of a question's 3 hints
        return [pid for pid in bench.qrels[q] if pid.split("_")[-2].count("1") == 3]

    qs = list(bench.questions)
    assert all(len(orderings(q)) == 6 for q in qs)
    tied = {q: [(pid, 2.0) for pid in orderings(q)] for q in qs}

    def doctor(name, run):
        _write_plain(run, tmp_path / name)
        code, out, err = run_cli(monkeypatch, capsys, "doctor", tmp_path / name, "--bench", bench.path,
                                 "--tie-length", 6, "--json")
        return code, json.loads(out)

    code, report = doctor("ok.trec", tied)
    assert code in (0, None) and report["ok"]
    assert report["info"]["tied_orderings"]["count"] == 4 and report["checks"]["tied_score_runs"]["count"] == 0
    # one passage of another question at the same score: a tie that decides the order of labels 1 and 0
    code, report = doctor("bad.trec", {**tied, qs[0]: tied[qs[0]][:5] + [(orderings(qs[1])[0], 2.0)]})
    assert code == 1 and not report["ok"] and report["checks"]["tied_score_runs"]["count"] == 1
    assert report["checks"]["tied_score_runs"]["examples"] == [f"{qs[0]} from rank 1: 6 at score 2.0"]
    # the same label everywhere (passages of other questions only): noted, not a failure
    tail = [(tied[qs[0]][0][0], 3.0)] + [(pid, 1.0) for q in qs[1:] for pid, _ in tied[q]]
    code, report = doctor("tail.trec", {**tied, qs[0]: tail})
    assert code in (0, None) and report["info"]["tied_same_label"]["count"] == 1
    assert report["info"]["tied_same_label"]["examples"] == [f"{qs[0]} from rank 2: 18 at score 1.0"]


def test_doctor_on_bm25_runs_of_wikihint(wikihint_file, monkeypatch, capsys, tmp_path):
    from inferqa.retrieve import get_retriever, question_queries

    out = tmp_path / "wh"
    build_benchmark(load_questions(wikihint_file), out)
    code, _, err = run_cli(monkeypatch, capsys, "index", out, "--retriever", "bm25")
    assert code in (0, None), err
    code, _, err = run_cli(monkeypatch, capsys, "retrieve", out, "--retriever", "bm25", "--split", "all",
                           "--out", tmp_path / "bm25.trec")
    assert code in (0, None), err
    # inferqa's own run file: ties broken as it is written, nothing to report
    code, text, _ = run_cli(monkeypatch, capsys, "doctor", tmp_path / "bm25.trec", "--bench", out, "--json")
    report = json.loads(text)
    assert code in (0, None) and report["ok"] and report["longest_tie"] == 1
    # the same ranking with its ties (as a 6-decimal writer leaves them): by-design ties are notes
    bench = Benchmark(out)
    r = get_retriever("bm25", show_progress=False)
    r.index(bench)
    run = Run(r.search(question_queries(bench), 1000))
    _write_plain(run, tmp_path / "tied.trec")
    code, text, _ = run_cli(monkeypatch, capsys, "doctor", tmp_path / "tied.trec", "--bench", out, "--json")
    report = json.loads(text)
    kinds = _independent_ties(Run.from_file(tmp_path / "tied.trec"), bench.qrels, 10)
    assert report["info"]["tied_orderings"]["count"] == kinds["orderings"] > 1000
    assert report["info"]["tied_same_label"]["count"] == kinds["one label"]
    assert report["checks"]["tied_score_runs"]["count"] == kinds["mixed"]
    assert code == (1 if kinds["mixed"] else 0) and report["ok"] == (not kinds["mixed"])


def _flag_help(command: tuple[str, ...], flag: str) -> str:
    import typer

    from inferqa.cli import app

    cmd = typer.main.get_command(app)
    for name in command:
        cmd = cmd.commands[name]
    return next(p.help for p in cmd.params if flag in p.opts)


@pytest.mark.parametrize("command, flag, declared, shown", [
    (("build",), "--leak-threshold", ("leak-judge", "embedding", "threshold", "LEAK_THRESHOLD"),
     "embedding leak judge: cosine from which a hint span leaks (a number in (0, 1], default 0.85)."),
    (("annotate", "import"), "--leak-threshold", ("leak-judge", "embedding", "threshold", "LEAK_THRESHOLD"),
     "embedding leak judge: cosine from which a hint span leaks (a number in (0, 1], default 0.85)."),
    (("build",), "--leak-llm", ("leak-judge", "llm", "llm", "LEAK_LLM"),
     "llm leak judge: LLM asked whether the hint gives the answer (text, default smollm2)."),
    (("annotate", "import"), "--leak-llm", ("leak-judge", "llm", "llm", "LEAK_LLM"),
     "llm leak judge: LLM asked whether the hint gives the answer (text, default smollm2)."),
    (("read",), "--alpha", ("context", "union_freq", "alpha", "UNION_ALPHA"),
     "union_freq: weight of 1/rank of the passage (a number ≥ 0, default 0.6)."),
    (("read",), "--beta", ("context", "union_freq", "beta", "UNION_BETA"),
     "union_freq: weight of 1/position of the hint in its passage (a number ≥ 0, default 0.4)."),
    (("annotate", "export"), "--min-f1", None,
     "Token F1 to a gold alias from which an answer the judge rejected is contested (so exported too), as is one "
     "contained in an alias or containing one (a number in [0, 1], default 0.5)."),
    (("build",), "--top-k", None, "Hints kept per question (an integer in [1, 10], default 5); 3 with --demo alone."),
    (("build",), "--split", None, "The train,dev,test split: fractions, counts (5000,862,1539), 'source' or a roles file "
                                 "(roles.yaml: per source file, its split names) (text, "
                                  "default 0.7,0.1,0.2); 6,4,38 with --demo alone."),
    (("build",), "--seed", None, "Seed of the split shuffle (an integer, default 13)."),
    (("evaluate",), "--min-label", None, "Lowest label counted as relevant; at most the largest label; 2: fully "
                                         "relevant only (an integer ≥ 1, default 1)."),
    (("compare",), "--min-label", None, "Lowest label counted as relevant; at most the largest label; 2: fully "
                                        "relevant only (an integer ≥ 1, default 1)."),
    (("oracle",), "--min-label", None, "Lowest label counted as relevant; at most the largest label (an integer "
                                       "≥ 1, default 1)."),
    (("stored-answers",), "--min-label", None, "Lowest label counted as relevant for optimal EM; inferqa protocol "
                                               "only (an integer ≥ 1, default 1)."),
    (("oracle",), "--seed", None, "Shuffle seed of the oracle retriever (an integer, default 0)."),
    (("read",), "--llm", None, "LLM spec of the reader: smollm2, gemma3-270m, llama-cpp:/path.gguf, openai:MODEL@URL "
                               "or transformers:ID_OR_PATH (text, default smollm2)."),
    (("tune-union",), "--llm", None, "LLM spec of the reader: smollm2, gemma3-270m, llama-cpp:/path.gguf, "
                                     "openai:MODEL@URL or transformers:ID_OR_PATH (text, default smollm2)."),
    (("read",), "--strategy", None, "Context strategies: union_norm, union_freq or concat (repeat the flag or "
                                    "comma-separate, default union_norm)."),
    (("read",), "--k", None, "Top-k passages merged into one context, one reading per k (repeat the flag or "
                             "comma-separate, default 1,3,5)."),
    (("tune-union",), "--alphas", None, "union_freq: alpha grid; beta = 1 - alpha (only their ratio orders hints) "
                                        "(repeat the flag or comma-separate, default "
                                        "0.0,0.1,0.2,0.3,0.4,0.5,0.6,0.7,0.8,0.9,1.0)."),
    (("build",), "--labeler", None, "LLM spec of a labeller; repeat the flag for several (text, default smollm2)."),
    (("label",), "--labeler", None, "LLM spec of a labeller; repeat the flag for several (text, default smollm2)."),
])
def test_stage_flags_show_the_declared_help_and_default(command, flag, declared, shown):
    """The build, leak, label, annotate and read flags take help and default from the one declaration in
    the parameter table (inferqa.parameters), the very Option object the stage's plugin declares."""
    from inferqa import parameters, registry

    assert _flag_help(command, flag) == shown
    if declared is not None:
        kind, name, option, attr = declared
        assert registry.options_of(kind, name)[option] is getattr(parameters, attr)


def test_cli_start_up_imports_no_heavy_library():
    """The command line reads every stage's signature at start-up (the stage modules), but no
    model, index or table library: those load inside the stage that needs them."""
    import subprocess
    import sys

    heavy = ("torch", "transformers", "sentence_transformers", "bm25s", "faiss", "scipy", "sklearn", "pandas", "ranx",
             "ir_measures", "llama_cpp", "openai", "ray", "yaml")
    code = f"import sys, inferqa.cli; print(sorted({{m.split('.')[0] for m in sys.modules}} & set({heavy!r})))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# -- messages that name the fix ------------------------------------------------------------

def test_evaluate_warns_in_one_line_when_run_and_qrels_share_no_question(bench, monkeypatch, capsys, tmp_path):
    run = _noisy_run(bench)
    run.to_file(tmp_path / "run.trec")
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "run.trec", "--bench", bench.path,
                             "-m", "mrr", "--questions", "run")
    assert code in (0, None) and err == ""  # questions shared: no word
    other = {f"x{qid}": labels for qid, labels in bench.qrels.items()}  # the same labels, other question ids
    (tmp_path / "other.tsv").write_text("".join(f"{q} 0 {p} {lab}\n" for q, labels in other.items()
                                                for p, lab in labels.items()))
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "run.trec", "--qrels",
                             tmp_path / "other.tsv", "-m", "mrr,hit@1", "--json")
    lines = err.strip().splitlines()
    assert code in (0, None) and len(lines) == 1
    assert lines[0] == f"inferqa: warning: the run's {len(run)} questions and the qrels' {len(other)} share none: " \
                       "every value is 0 or undefined"
    # every judged question is one the run lacks: each counts 0 (the field's rule; hit@1 was NaN before it)
    assert json.loads(out)["metrics"] == {"mrr": 0.0, "hit@1": 0.0}


def test_unknown_strategy_is_called_a_strategy_with_a_did_you_mean(bench, monkeypatch, capsys, tmp_path):
    _noisy_run(bench).to_file(tmp_path / "run.trec")
    code, _, err = run_cli(monkeypatch, capsys, "read", tmp_path / "run.trec", "--bench", bench.path,
                           "-s", "union_nrom", "-o", tmp_path / "a.jsonl")
    one_line_error(code, err, "unknown strategy 'union_nrom'", "(did you mean 'union_norm'?)")
    assert "context" not in err and not (tmp_path / "a.jsonl").exists()


def test_too_few_hints_names_the_top_k_that_builds(monkeypatch, capsys, tmp_path):
    src = _jsonl(tmp_path / "three.jsonl", [_row("a", 3), _row("b", 3), _row("c", 2)])
    code, _, err = run_cli(monkeypatch, capsys, "build", src, "--out", tmp_path / "b", "--split", "1,0,1")
    one_line_error(code, err, "no question has 5 usable hints", "the most any has is 3", "--top-k 3")
    assert not (tmp_path / "b").exists()
    code, _, err = run_cli(monkeypatch, capsys, "build", src, "--out", tmp_path / "b", "--split", "1,0,1",
                           "--top-k", "3")
    assert code in (0, None), err
    assert list(Benchmark(tmp_path / "b").questions) == ["a", "b"]


def test_a_bare_hub_id_is_a_transformers_model():
    from inferqa.llm import parse_spec

    spec = parse_spec("Qwen/Qwen2.5-0.5B-Instruct")
    assert (spec.backend, spec.target, spec.options) == ("transformers", "Qwen/Qwen2.5-0.5B-Instruct", {})
    spec = parse_spec("HuggingFaceTB/SmolLM2-135M-Instruct?device=cuda&batch_size=4")
    assert (spec.backend, spec.target) == ("transformers", "HuggingFaceTB/SmolLM2-135M-Instruct")
    assert spec.options == {"device": "cuda", "batch_size": "4"}
    assert parse_spec("transformers:Qwen/Qwen2.5-0.5B-Instruct") == parse_spec("Qwen/Qwen2.5-0.5B-Instruct")
    assert parse_spec("smollm2").backend == "smollm2"  # backend names win: none holds a slash
    for bad in ("Qwen/Qwen2.5/extra", "/Qwen2.5", "Qwen/", "nope:x"):
        with pytest.raises(InputError, match="unknown LLM spec .*or a Hugging Face id ORG/NAME"):
            parse_spec(bad)


def test_a_bare_hub_id_offline_names_the_id_and_the_cache(bench, monkeypatch, capsys, tmp_path):
    import huggingface_hub.constants

    from inferqa.llm import load_llm

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(huggingface_hub.constants, "HF_HUB_CACHE", str(tmp_path / "empty-hub-cache"))
    want = "model 'Qwen/Qwen2.5-0.5B-Instruct' is not in the local Hugging Face cache and HF_HUB_OFFLINE is set"
    with pytest.raises(InputError, match=re.escape(want)):
        load_llm("Qwen/Qwen2.5-0.5B-Instruct", cache=None)
    _noisy_run(bench).to_file(tmp_path / "run.trec")
    code, _, err = run_cli(monkeypatch, capsys, "read", tmp_path / "run.trec", "--bench", bench.path,
                           "--llm", "Qwen/Qwen2.5-0.5B-Instruct", "--no-cache", "-o", tmp_path / "a.jsonl")
    one_line_error(code, err, want)
    assert not (tmp_path / "a.jsonl").exists()


# -- tables at 80 columns, and --format ------------------------------------------------------

def _perfect_run(bench: Benchmark) -> Run:
    """Each question's own passages first: every metric at its best."""
    run = Run(tag="perfect")
    for qid in bench.questions:
        run[qid] = [(pid, 10.0 - i) for i, pid in enumerate(bench.qrels[qid])][:10]
    return run


def _pct(v):
    return "—" if v is None else f"{100 * v:.2f}"


MANY = "hit@1,hit@3,hit@10,recall@3,recall@10,mrr,mrr@10,nDCG@10,ndcg_exp@10,P@3,map,R@100"


def test_evaluate_per_query_fits_a_log_and_keeps_every_cell(bench, monkeypatch, capsys, tmp_path):
    from test_tables import parse_boxed

    path = tmp_path / "noisy.trec"
    _noisy_run(bench).to_file(path)
    args = ("evaluate", path, "--bench", bench.path, "-m", MANY, "--per-query")
    code, out, err = run_cli(monkeypatch, capsys, *args, "--json")
    assert code in (0, None), err
    want = json.loads(out)
    code, out, err = run_cli(monkeypatch, capsys, *args, columns=None)  # a pipe: 80 columns
    assert code in (0, None), err
    assert max(map(len, out.splitlines())) <= 80 and "…" not in out
    assert out.count("┃ question ") >= 2  # wrapped into blocks, the question ids repeated in each
    got = parse_boxed(out)
    for qid, values in want["per_query"].items():
        assert {m: got[qid, m] for m in values} == {m: _pct(v) for m, v in values.items()}
    assert {m: got["mean", m] for m in want["metrics"]} == {m: _pct(v) for m, v in want["metrics"].items()}
    code, wide, _ = run_cli(monkeypatch, capsys, *args, columns=300)
    assert wide.count("┃ question ") == 1 and parse_boxed(wide) == got


def test_compare_at_80_columns_and_every_format(bench, monkeypatch, capsys, tmp_path):
    import csv
    import io

    from test_tables import parse_boxed

    _noisy_run(bench).to_file(tmp_path / "noisy.trec")
    _perfect_run(bench).to_file(tmp_path / "perfect.trec")
    args = ("compare", tmp_path / "noisy.trec", f"a_long_run_name={tmp_path / 'perfect.trec'}", "--bench",
            bench.path, "-m", "mrr,ndcg_exp@10,hit@1", "--test", "t", "--questions", "run")
    code, out, err = run_cli(monkeypatch, capsys, *args, "--json")
    assert code in (0, None), err
    want = json.loads(out)
    assert json.loads(run_cli(monkeypatch, capsys, *args, "--format", "json")[1]) == want
    code, out, err = run_cli(monkeypatch, capsys, *args, columns=None)
    assert code in (0, None), err
    assert max(map(len, out.splitlines())) <= 80 and "…" not in out and "42.…" not in out
    got = parse_boxed(out)
    other = want["runs"][1]["metrics"]
    for m, c in other.items():
        assert got["a_long_run_name", m] == _pct(c["mean"]) and got["noisy", m] == _pct(want["runs"][0]["metrics"][m]["mean"])
    mrr = other["mrr"]
    diff = f"{100 * mrr['diff']:+.2f} [{_pct(mrr['ci'][0])}, {_pct(mrr['ci'][1])}]"
    assert any(diff in ln and "a_long_run_name" in ln for ln in out.splitlines())
    p = mrr["p_corrected"]
    assert any(("<0.001" if p < 0.001 else f"{p:.3f}") in ln for ln in out.splitlines() if "a_long_run_name" in ln)
    # md and csv: the same cells, read back with the csv module; tex: escaped
    from inferqa.evaluation import compare

    result = compare({"noisy": tmp_path / "noisy.trec", "a_long_run_name": tmp_path / "perfect.trec"}, bench,
                     ["mrr", "ndcg_exp@10", "hit@1"], test="t", questions="run")
    cells = [result.header(), *result.cells()]
    md = run_cli(monkeypatch, capsys, *args, "--format", "md", columns=None)[1].splitlines()
    rows = [[c.strip() for c in r] for r in csv.reader((ln[2:-2] for ln in md if ln.startswith("| ")),
                                                      delimiter="|", escapechar="\\", quoting=csv.QUOTE_NONE)]
    assert rows == cells
    # csv: tidy, one row per (run, metric), plain numbers in fractions (the json's `rows`)
    text = run_cli(monkeypatch, capsys, *args, "--format", "csv", columns=None)[1]
    header, *records = list(csv.reader(io.StringIO(text)))
    assert header == ["run", "metric", "value", "diff", "ci_low", "ci_high", "p", "p_corrected"]
    assert len(records) == 2 * 3 and [r[:2] for r in records[:3]] == [["noisy", m] for m in ("mrr", "ndcg_exp@10", "hit@1")]
    as_json = [[None if c == "" else c if i < 2 else float(c) for i, c in enumerate(r)] for r in records]
    assert as_json == [[pytest.approx(v) if isinstance(v, float) else v for v in row.values()] for row in want["rows"]]
    assert as_json[3][2] == pytest.approx(want["runs"][1]["metrics"]["mrr"]["mean"]) and as_json[0][3] is None
    tex = run_cli(monkeypatch, capsys, *args, "--format", "tex")[1]
    assert "a\\_long\\_run\\_name & " in tex and "ndcg\\_exp@10" in tex and "$\\Delta$ [95 \\% CI]" in tex
    assert "\\toprule" in tex and "\\bottomrule" in tex
    code, _, err = run_cli(monkeypatch, capsys, *args, "--format", "markdown")
    one_line_error(code, err, "unknown --format 'markdown'", "table | md | csv | tex | json")
    code, _, err = run_cli(monkeypatch, capsys, *args, "--format", "csv", "--json")
    one_line_error(code, err, "--json and --format csv disagree")


def test_stats_json_and_formats(bench, monkeypatch, capsys):
    import csv
    import io

    from inferqa.construct.stats import benchmark_stats

    code, out, err = run_cli(monkeypatch, capsys, "stats", bench.path, "--json")
    assert code in (0, None), err
    assert json.loads(out) == json.loads(json.dumps(benchmark_stats(bench.path)))
    assert json.loads(run_cli(monkeypatch, capsys, "stats", bench.path, "--format", "json")[1]) == json.loads(out)
    text = run_cli(monkeypatch, capsys, "stats", bench.path, "--format", "csv")[1]
    splits = list(csv.reader(io.StringIO(text.split("\n\n")[0])))
    test = benchmark_stats(bench.path)["splits"]["test"]
    assert splits[0][:3] == ["split", "questions", "passages"]
    assert {r[0]: r[1:3] for r in splits[1:]}["test"] == [str(test["questions"]), str(test["passages"])]
    md = run_cli(monkeypatch, capsys, "stats", bench.path, "--format", "md")[1]
    assert "| split | questions | passages |" in md and "**how it was built**" in md


@pytest.mark.parametrize("fmt", ["table", "md", "csv", "tex"])
def test_format_and_json_disagree_whatever_the_format(bench, monkeypatch, capsys, tmp_path, fmt):
    _noisy_run(bench).to_file(tmp_path / "run.trec")
    code, _, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "run.trec", "--bench", bench.path,
                           "--format", fmt, "--json")
    one_line_error(code, err, f"--json and --format {fmt} disagree")
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "run.trec", "--bench", bench.path,
                             "--format", "json", "--json", "-m", "RR")
    assert code in (0, None) and json.loads(out)["metrics"]
