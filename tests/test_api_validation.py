"""The Python API checks what it is given as the command line checks its files.

`evaluate`, `compare`, `fuse` and `diversify` read every run through `formats.as_run` (the
scores through `score_problem`, the ids through `Benchmark.check`): a malformed object is an
InputError, never another exception, a silent 0.0 or a NaN. The bad runs and qrels that the
CLI refuses (tests/test_bad_inputs.py) are refused by the API with the same message.
"""

from __future__ import annotations

import math
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import inferqa
from inferqa.cli import main
from inferqa.errors import InputError
from inferqa.formats import Run
from inferqa.diversification import diversify


@pytest.fixture(scope="module")
def bench(tmp_path_factory):
    from inferqa.construct import build_benchmark
    from inferqa.data import demo_path, load_questions
    from inferqa.formats import Benchmark

    out = tmp_path_factory.mktemp("api") / "bench"
    build_benchmark(load_questions(demo_path())[:4], out, top_k=3, split=(0.5, 0.0, 0.5))
    return Benchmark(out)


def _good(bench) -> dict:
    """A valid run of every question: its first three passages, best first."""
    return {q: {p: 3.0 - i for i, p in enumerate(list(bench.qrels[q])[:3])} for q in bench.questions}


def _cli_error(argv: list) -> str:
    """The one line `inferqa ARGV` prints on bad input, less 'inferqa: error: '; exit 2."""
    import io

    old, err = (sys.argv, sys.stderr), io.StringIO()
    sys.argv, sys.stderr = ["inferqa", *map(str, argv)], err
    try:
        with pytest.raises(SystemExit) as exc:
            main()
    finally:
        sys.argv, sys.stderr = old
    lines = [ln for ln in err.getvalue().splitlines() if ln.strip()]
    assert exc.value.code == 2 and len(lines) == 1, err.getvalue()
    return lines[0].removeprefix("inferqa: error: ")


def _every_api(bench, run) -> list:
    """Each public function of the API given `run` (with a good run beside it where it takes two)."""
    good = _good(bench)
    return [lambda: inferqa.evaluate(run, bench.path, ["RR", "nDCG@10"]),
            lambda: inferqa.compare([good, run], bench.path, ["RR"], resamples=10),
            lambda: inferqa.compare([run, good], bench.path, ["RR"], resamples=10),
            lambda: inferqa.fuse([good, run], "combsum", bench=bench.path),
            lambda: inferqa.fuse([run, good], "rrf", bench=bench, allow_partial=True),
            lambda: diversify(run, bench.path, 1)]


# -- the CLI's bad runs and qrels, refused by the API with the CLI's message -------------------

def _pid(bench, qid: str, i: int = 0) -> str:
    return list(bench.qrels[qid])[i]


# (name, TREC line of the file (format: {q} the first question, {p} its first passage), the
#  same run as an object, whether the record is named alike: a file names its line, an object
#  its question)
RUN_CASES = [
    ("nan", "{q} Q0 {p} 1 nan t", lambda q, p: {q: {p: math.nan}}, False),
    ("inf", "{q} Q0 {p} 1 inf t", lambda q, p: {q: [(p, math.inf)]}, False),
    ("-inf", "{q} Q0 {p} 1 -inf t", lambda q, p: {q: {p: -math.inf}}, False),
    ("unknown question", "zzz Q0 {p} 1 1.0 t", lambda q, p: {"zzz": {p: 1.0}}, True),
    ("malformed passage id", "{q} Q0 foo 1 1.0 t", lambda q, p: {q: {"foo": 1.0}}, True),
    ("passage of no corpus", "{q} Q0 zzz_100_0 1 1.0 t", lambda q, p: {q: {"zzz_100_0": 1.0}}, True),
    ("duplicate passage", "{q} Q0 {p} 1 2.0 t\n{q} Q0 {p} 2 1.0 t", lambda q, p: {q: [(p, 2.0), (p, 1.0)]},
     False),
]


@pytest.mark.parametrize("name,lines,obj,same_record", RUN_CASES, ids=[c[0] for c in RUN_CASES])
def test_api_refuses_a_bad_run_with_the_cli_message(bench, tmp_path, name, lines, obj, same_record):
    q = bench.split_qids("test")[0]
    p = _pid(bench, q)
    path = tmp_path / "bad.trec"
    path.write_text(lines.format(q=q, p=p) + "\n")
    cli = _cli_error(["evaluate", path, "--bench", bench.path, "-m", "RR"]).removeprefix(f"{path}: ")
    for call in _every_api(bench, obj(q, p)):
        with pytest.raises(InputError) as caught:
            call()
        err = caught.value
        if same_record:
            assert str(err) == cli
        else:  # the file's 'record line N' is the object's question
            assert cli.endswith(f"field '{err.field}': {err.message}"), (cli, str(err))
            assert str(err.record).split()[0] == q


@pytest.mark.parametrize("label", ["1.5", "x"])
def test_api_refuses_a_bad_qrels_label_with_the_cli_message(bench, tmp_path, label):
    q = bench.split_qids("test")[0]
    p = _pid(bench, q)
    run, qrels = tmp_path / "run.trec", tmp_path / "qrels.tsv"
    run.write_text(f"{q} Q0 {p} 1 1.0 t\n")
    qrels.write_text(f"{q} 0 {p} {label}\n")
    cli = _cli_error(["evaluate", run, "--qrels", qrels, "-m", "RR"]).removeprefix(f"{qrels}: record line 1: ")
    for call in (lambda: inferqa.evaluate({q: {p: 1.0}}, {q: {p: label}}, "RR"),
                 lambda: inferqa.compare([{q: {p: 1.0}}, {q: {p: 2.0}}], {q: {p: label}}, "RR", resamples=10)):
        with pytest.raises(InputError) as caught:
            call()
        assert f"field '{caught.value.field}': {caught.value.message}" == cli
        assert caught.value.record == f"{q} {p}"


def test_an_empty_run_is_refused_by_the_api_as_by_the_cli(bench, tmp_path):
    (tmp_path / "empty.trec").write_text("")
    assert _cli_error(["evaluate", tmp_path / "empty.trec", "--bench", bench.path]).endswith("run file is empty")
    for call in _every_api(bench, {}):
        with pytest.raises(InputError, match="run is empty: it ranks no question"):
            call()


def test_fuse_refuses_runs_of_other_questions_as_the_cli_does(bench, tmp_path):
    good = _good(bench)
    first, *rest = bench.questions
    part = {q: good[q] for q in rest}
    Run({q: sorted(r.items(), key=lambda x: -x[1]) for q, r in good.items()}).to_file(tmp_path / "all.trec")
    Run({q: sorted(r.items(), key=lambda x: -x[1]) for q, r in part.items()}).to_file(tmp_path / "part.trec")
    cli = _cli_error(["fuse", tmp_path / "all.trec", tmp_path / "part.trec", "-o", tmp_path / "f.trec"])
    with pytest.raises(InputError) as caught:
        inferqa.fuse([tmp_path / "all.trec", tmp_path / "part.trec"])
    assert str(caught.value) == cli
    with pytest.raises(InputError, match=f"1 of its questions missing \\(e.g. {first}\\)"):
        inferqa.fuse([good, part])
    fused = inferqa.fuse([good, part], allow_partial=True)
    assert list(fused) == list(good) and fused.qids == list(good)
    # the first question from the first run alone: rrf gives rank r 1 / (60 + r)
    assert fused[first] == [(p, 1 / (60 + r)) for r, p in enumerate(good[first], 1)]


def test_fuse_and_diversify_check_their_benchmark_and_split(bench):
    good = _good(bench)
    with pytest.raises(InputError, match="split needs a benchmark"):
        inferqa.fuse([good, good], split="test")
    with pytest.raises(InputError, match="bench must be a Benchmark or a benchmark directory, not int"):
        diversify(good, 7, 1)
    test = bench.split_qids("test")
    fused = inferqa.fuse([good, good], bench=bench.path, split="test")
    assert list(fused) == test and fused.qids == test


# -- random malformed objects ---------------------------------------------------------------

_FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
_bad_score = st.sampled_from([math.nan, math.inf, -math.inf, "1.0", None, [1.0], True, b"1", 1j])
_bad_ranking = (st.text(max_size=4) | st.integers() | st.none() | st.floats(allow_nan=True)
                | st.lists(st.text(max_size=3), min_size=1, max_size=3)
                | st.lists(st.tuples(st.text(max_size=3)), min_size=1, max_size=2)
                | st.lists(st.tuples(st.text(max_size=3), st.floats(), st.floats()), min_size=1, max_size=2)
                | st.dictionaries(st.text(max_size=3), _bad_score, min_size=1, max_size=2)
                | st.lists(st.tuples(st.text(max_size=3), _bad_score), min_size=1, max_size=2))


@st.composite
def _bad_run(draw, bench_qids: tuple[str, ...] = ("demo_01", "demo_02")):
    """A run object every API must refuse: of the wrong type, empty, with a malformed ranking,
    a non-finite score, a duplicate passage, or an id the benchmark lacks."""
    qid = draw(st.sampled_from(bench_qids))
    pid = f"{qid}_100_0"
    kind = draw(st.sampled_from(["type", "empty", "ranking", "score", "duplicate", "qid", "pid"]))
    if kind == "type":
        return draw(st.none() | st.integers() | st.floats() | st.lists(st.integers(), max_size=2)
                    | st.sets(st.integers(), max_size=2) | st.binary(max_size=3))
    if kind == "empty":
        return draw(st.sampled_from([{}, Run(), []]))
    if kind == "ranking":
        return {qid: draw(_bad_ranking)}
    if kind == "score":
        return {qid: {pid: draw(_bad_score)}}
    if kind == "duplicate":
        return {qid: [(pid, 2.0), (pid, draw(st.floats(allow_nan=False, allow_infinity=False)))]}
    if kind == "qid":
        return {draw(st.text(max_size=5).filter(lambda q: q not in bench_qids)): {pid: 1.0}}
    return {qid: {draw(st.text(max_size=8).filter(lambda p: not p.startswith(qid + "_"))): 1.0}}


@_FUZZ
@given(run=_bad_run())
def test_malformed_run_objects_are_input_errors_in_every_api(bench, run):
    for call in _every_api(bench, run):
        with pytest.raises(InputError):
            call()


@_FUZZ
@given(runs=st.none() | st.integers() | st.text(max_size=3) | st.binary(max_size=3)
       | st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
def test_a_runs_argument_that_is_no_list_of_runs_is_an_input_error(bench, runs):
    for call in (lambda: inferqa.fuse(runs), lambda: inferqa.compare(runs, bench.path, ["RR"], resamples=10)):
        with pytest.raises(InputError):
            call()


@_FUZZ
@given(qrels=st.none() | st.integers() | st.lists(st.integers(), max_size=2)
       | st.dictionaries(st.text(max_size=3), st.integers() | st.text(max_size=2), min_size=1, max_size=2)
       | st.dictionaries(st.text(max_size=3), st.dictionaries(
           st.text(max_size=2), st.floats(allow_nan=True).filter(lambda x: not (math.isfinite(x) and x.is_integer()))
           | st.text(max_size=2) | st.none(), min_size=1, max_size=2), min_size=1, max_size=2))
def test_malformed_qrels_objects_are_input_errors_in_every_api(bench, qrels):
    good = _good(bench)
    for call in (lambda: inferqa.evaluate(good, qrels, ["RR"]),
                 lambda: inferqa.compare([good, good], qrels, ["RR"], resamples=10)):
        with pytest.raises(InputError):
            call()


def test_a_valid_run_gives_finite_values_in_every_api(bench):
    """The counterpart of the refusals: the good run these tests pair with is accepted."""
    good = _good(bench)
    values = inferqa.evaluate(good, bench.path, ["RR", "nDCG@10"])
    assert all(math.isfinite(v) for v in values.values())
    assert inferqa.compare([good, good], bench.path, ["RR"], resamples=10).rows[1]["metrics"]["RR"]["diff"] == 0
    fused = inferqa.fuse([good, good], "combsum", bench=bench.path)
    assert all(math.isfinite(s) for r in fused.values() for _, s in r)
    assert set(diversify(good, bench.path, 1)) == set(good)


# -- a run keeps its questions, format and info through every run-to-run step (Run.derive) --------

@pytest.fixture(scope="module")
def rankify_run(bench, tmp_path_factory):
    """A Rankify file of split test (every passage titled 'T:pid', worst first so that a step
    reorders it), read back: format rankify, qids the split's, info with titles."""
    import json

    from inferqa.formats import open_run

    qids = bench.split_qids("test")
    records = [{"question": bench.questions[q].text,
                "ctxs": [{"id": p, "score": float(i), "title": f"T:{p}"} for i, p in enumerate(list(bench.qrels[q])[:6])]}
               for q in qids]
    records = [{**r, "ctxs": sorted(r["ctxs"], key=lambda c: -c["score"])} for r in records]
    path = tmp_path_factory.mktemp("rankify") / "run.json"
    path.write_text(json.dumps(records))
    run = open_run(path, bench, "test")
    assert run.format == "rankify" and run.qids == qids and set(run.titles) == set(qids)
    return run


def _keeps_metadata(out: Run, run: Run) -> None:
    assert out.format == run.format == "rankify"
    assert out.qids == run.qids
    assert [d["qid"] for d in out.info] == [d["qid"] for d in run.info]
    assert all(d["question"] == bench_d["question"] for d, bench_d in zip(out.info, run.info))
    for qid, ranked in out.items():  # each title follows its passage
        assert out.titles[qid] == [f"T:{p}" for p, _ in ranked]


def test_diversify_keeps_the_runs_metadata(bench, rankify_run):
    out = diversify(rankify_run, bench, 1)  # 110_01 follows 110_10 (one hint set): moved below
    assert any([p for p, _ in out[q]] != [p for p, _ in rankify_run[q]] for q in out)
    _keeps_metadata(out, rankify_run)


def test_fuse_keeps_the_first_runs_metadata(bench, rankify_run):
    reverse = Run({q: [(p, -float(i)) for i, (p, _) in enumerate(reversed(r))] for q, r in rankify_run.items()})
    out = inferqa.fuse([rankify_run, reverse], "rrf", weights=[1, 3], bench=bench)
    assert out.tag == "fuse-rrf"
    assert all([p for p, _ in out[q]] == [p for p, _ in reversed(rankify_run[q])] for q in out)
    _keeps_metadata(out, rankify_run)


def test_rerank_keeps_the_runs_metadata(bench, rankify_run):
    from inferqa.reranking import rerank_run

    out = rerank_run(rankify_run, bench, "oracle", depth=6)
    for q, ranked in out.items():  # the oracle sorts by label, best first
        labels = [bench.qrels[q].get(p, 0) for p, _ in ranked]
        assert labels == sorted(labels, reverse=True)
    _keeps_metadata(out, rankify_run)


def test_top_and_only_keep_the_metadata_of_what_is_left(rankify_run):
    first, *rest = rankify_run.qids
    top = rankify_run.top(2)
    _keeps_metadata(top, rankify_run)
    only = rankify_run.only(rest)
    assert only.qids == rest and [d["qid"] for d in only.info] == rest and only.format == "rankify"


def test_fuse_and_diversify_are_top_level_names():
    from inferqa.retrieve.fusion import fuse

    assert inferqa.fuse is fuse and inferqa.diversify is diversify
    assert {"fuse", "diversify"} <= set(dir(inferqa))
