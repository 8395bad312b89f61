"""Every fusion method against ranx's `fuse` on the same runs (scores to 1e-9, same order up
to ties, which ranx leaves unordered), with passages the runs share and passages only one
run has; the normalisations by hand where ranx floors a zero span at 1e-9; `fuse --bench`."""

from __future__ import annotations

import random

import pytest

from inferqa.formats.benchmark import Benchmark
from inferqa.errors import InputError
from inferqa.formats import Run
from inferqa.records import Hint, Question
from inferqa.retrieve.fusion import NORMS, fuse, methods
from conftest import one_line_error, run_cli

try:
    import ranx
except ImportError:  # the hand-worked and CLI tests below still run
    ranx = None
needs_ranx = pytest.mark.skipif(ranx is None, reason="ranx is not installed (the reference implementation)")

RANX_NORM = {"minmax": "min-max", "max": "max", "sum": "sum", "zscore": "zmuv", "rank": "rank", "none": None}
SCORED = ("combsum", "combmnz", "combmax")  # ranx "sum", "mnz", "max"


def _runs(seed: int = 7) -> list[Run]:
    """Three runs of three questions: q-share draws every run from one pool of 12 passages
    (most shared), q-apart gives each run its own passages, q-mixed a bit of both. Scores
    are distinct within a ranking and positive (ranx's max norm divides by 1e-9 otherwise)."""
    rng = random.Random(seed)
    pools = {"q-share": [[f"s{i}" for i in range(12)]] * 3,
             "q-apart": [[f"a{r}-{i}" for i in range(6)] for r in range(3)],
             "q-mixed": [[f"m{i}" for i in range(4)] + [f"m{r}-{i}" for i in range(5)] for r in range(3)]}
    runs = [Run(tag=f"r{r}") for r in range(3)]
    for qid, per_run in pools.items():
        for r, pool in enumerate(per_run):
            picked = rng.sample(pool, rng.randint(4, len(pool)))
            scores = sorted(rng.sample(range(1, 10_000), len(picked)), reverse=True)
            runs[r][qid] = [(pid, s / 97.0 + r) for pid, s in zip(picked, scores)]
    return runs


def _ranx_run(run: Run):
    return ranx.Run({q: dict(ranked) for q, ranked in run.items()})


def _tie_groups(ranked: list[tuple[str, float]]) -> list[set[str]]:
    """The ranking as consecutive groups of equal scores (to 1e-9)."""
    groups: list[tuple[float, set[str]]] = []
    for pid, s in ranked:
        if groups and abs(groups[-1][0] - s) <= 1e-9:
            groups[-1][1].add(pid)
        else:
            groups.append((s, {pid}))
    return [g for _, g in groups]


def _same(ours: Run, theirs) -> None:
    theirs = theirs.to_dict()
    assert set(ours) == set(theirs)
    for qid, ranked in ours.items():
        want = list(theirs[qid].items())
        assert dict(ranked).keys() == dict(want).keys(), qid
        assert max(abs(s - theirs[qid][p]) for p, s in ranked) <= 1e-9, qid
        assert _tie_groups(ranked) == _tie_groups(want), qid


RUNS = _runs()
RANX_RUNS = [_ranx_run(r) for r in RUNS] if ranx is not None else []


def test_the_runs_have_shared_and_disjoint_passages():
    share = [set(p for p, _ in r["q-share"]) for r in RUNS]
    apart = [set(p for p, _ in r["q-apart"]) for r in RUNS]
    assert len(share[0] & share[1] & share[2]) >= 2
    assert not (apart[0] & apart[1]) and not (apart[1] & apart[2]) and not (apart[0] & apart[2])


@needs_ranx
@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("method", SCORED)
def test_comb_methods_match_ranx(method, norm):
    theirs = ranx.fuse(RANX_RUNS, norm=RANX_NORM[norm], method={"combsum": "sum", "combmnz": "mnz",
                                                                 "combmax": "max"}[method])
    _same(fuse(RUNS, method, norm=norm), theirs)


@needs_ranx
@pytest.mark.parametrize("norm", NORMS)
def test_weighted_combsum_and_combmnz_match_ranx_wsum_and_wmnz(norm):
    weights = [0.5, 2.0, 1.25]
    for method, theirs in (("combsum", "wsum"), ("combmnz", "wmnz")):
        want = ranx.fuse(RANX_RUNS, norm=RANX_NORM[norm], method=theirs, params={"weights": weights})
        _same(fuse(RUNS, method, norm=norm, weights=weights), want)


@needs_ranx
def test_weighted_with_minmax_is_ranx_wsum():
    # min-max puts every run's lowest at 0, so `weighted`'s floor for a missing passage is ranx's 0
    want = ranx.fuse(RANX_RUNS, norm="min-max", method="wsum", params={"weights": [1.0, 3.0, 0.5]})
    _same(fuse(RUNS, "weighted", norm="minmax", weights=[1, 3, 0.5]), want)


@needs_ranx
@pytest.mark.parametrize("rrf_k", [60, 0, 7.5])
def test_rrf_and_isr_match_ranx(rrf_k):
    _same(fuse(RUNS, "rrf", rrf_k=rrf_k), ranx.fuse(RANX_RUNS, norm=None, method="rrf", params={"k": rrf_k}))
    _same(fuse(RUNS, "isr"), ranx.fuse(RANX_RUNS, norm="min-max", method="isr"))


@needs_ranx
def test_weighted_rrf_is_ranx_wsum_of_each_runs_rrf_scores():
    from ranx.fusion import rrf as ranx_rrf

    weights = [2.0, 0.0, 1.0]
    per_run = [ranx_rrf([r], k=10) for r in RANX_RUNS]  # 1 / (10 + rank) per run, by ranx
    want = ranx.fuse(per_run, norm=None, method="wsum", params={"weights": weights})
    _same(fuse(RUNS, "rrf", rrf_k=10, weights=weights), want)


def test_every_method_is_checked_here():
    assert set(methods()) == {*SCORED, "rrf", "isr", "weighted"}


def test_norms_where_every_score_is_equal_by_hand():
    flat = Run({"q": [("a", 2.0), ("b", 2.0)]})
    other = Run({"q": [("c", 4.0), ("a", 1.0)]})
    # minmax: 1 for both of flat's (ranx: 0); other → c 1, a 0
    assert dict(fuse([flat, other], "combsum", norm="minmax")["q"]) == {"a": 1.0, "b": 1.0, "c": 1.0}
    # sum: 1/2 each for flat's; other → c 1, a 0
    assert dict(fuse([flat, other], "combsum", norm="sum")["q"]) == {"a": 0.5, "b": 0.5, "c": 1.0}
    assert dict(fuse([flat, other], "combmax", norm="zscore")["q"]) == {"a": 0.0, "b": 0.0, "c": 1.0}
    neg = Run({"q": [("a", -1.0), ("b", -3.0)]})  # max ≤ 0: left as it is
    assert dict(fuse([neg, Run({"q": [("c", 4.0), ("d", 1.0)]})], "combmax", norm="max")["q"]) == \
        {"a": -1.0, "b": -3.0, "c": 1.0, "d": 0.25}
    assert fuse([neg, other], "combmnz", norm="rank")["q"] == [("a", 3.0), ("c", 1.0), ("b", 0.5)]


def test_options_and_weights_are_checked():
    with pytest.raises(InputError, match="did you mean 'norm'"):
        fuse(RUNS, "combsum", nrom="minmax")
    with pytest.raises(InputError, match="takes one of minmax, max, sum, zscore, rank, none, not 'min-max'"):
        fuse(RUNS, "combmnz", norm="min-max")
    with pytest.raises(InputError, match="rrf' has no option 'norm'"):
        fuse(RUNS, "rrf", norm="minmax")
    with pytest.raises(InputError, match="'isr' takes no weights"):
        fuse(RUNS, "isr", weights=[1, 1, 1])
    with pytest.raises(InputError, match="'combmax' takes no weights"):
        fuse(RUNS, "combmax", weights=[1, 2, 1])
    with pytest.raises(InputError, match="unknown fusion method 'combsun'"):
        fuse(RUNS, "combsun")


@pytest.fixture(scope="module")
def bench(bench_factory) -> Benchmark:
    qs = [Question(f"q{i}", "Which?", ["x"], [Hint(f"Hint {j} of {i}.") for j in range(3)]) for i in range(4)]
    return bench_factory(qs, leak_policy="none")


def _write(bench, path, shift, extra=()):
    run = Run({q: [(p, float(i + shift) if i % 2 else -float(i)) for i, p in enumerate(list(bench.qrels[q])[:5])]
               for q in bench.questions})
    for qid, pid in extra:
        run[qid] = run[qid] + [(pid, -99.0)]
    run.to_file(path)
    return path


def test_cli_fuse_checks_ids_against_the_bench_and_cuts_to_a_split(bench, monkeypatch, capsys, tmp_path):
    a, b = _write(bench, tmp_path / "a.trec", 0), _write(bench, tmp_path / "b.trec", 3)
    code, out, err = run_cli(monkeypatch, capsys, "fuse", a, b, "--bench", bench.path, "--method", "combmnz",
                             "--norm", "sum", "-o", tmp_path / "f.trec")
    assert code in (0, None), err
    assert Run.from_file(tmp_path / "f.trec") == load_run_saved(fuse([Run.from_file(a), Run.from_file(b)], "combmnz", norm="sum"),
                                                           tmp_path)
    test = bench.split_qids("test")
    code, out, err = run_cli(monkeypatch, capsys, "fuse", a, b, "--bench", bench.path, "--split", "test",
                             "-o", tmp_path / "t.trec")
    assert code in (0, None), err
    assert list(Run.from_file(tmp_path / "t.trec")) == test and f"{len(test)} questions" in out
    # a passage id the benchmark does not have: refused, nothing written
    bad = _write(bench, tmp_path / "bad.trec", 3, extra=[("q0", "q9_111_012")])
    code, _, err = run_cli(monkeypatch, capsys, "fuse", a, bad, "--bench", bench.path, "-o", tmp_path / "x.trec")
    one_line_error(code, err, "bad.trec", "q9_111_012")
    assert not (tmp_path / "x.trec").exists()
    # without --bench the same file fuses (nothing to check it against)
    code, _, err = run_cli(monkeypatch, capsys, "fuse", a, bad, "-o", tmp_path / "y.trec")
    assert code in (0, None), err
    for args, needles in ((["--split", "test"], ["split needs a benchmark"]),
                          (["--method", "isr", "--weights", "1,2"], ["'isr' takes no weights"]),
                          (["--method", "rrf", "--norm", "minmax"], ["has no option 'norm'"]),
                          (["--method", "combsum", "--norm", "min-max"], ["norm", "'min-max'"])):
        code, _, err = run_cli(monkeypatch, capsys, "fuse", a, b, *args, "-o", tmp_path / "z.trec")
        one_line_error(code, err, *needles)
        assert not (tmp_path / "z.trec").exists()


def load_run_saved(run: Run, folder):
    run.to_file(folder / "want.trec")
    return Run.from_file(folder / "want.trec")


# -- the field's objects in and out: ranx.Run / ranx.Qrels and PyTerrier frames ------------------

@needs_ranx
def test_ranx_objects_round_trip_and_give_the_same_metrics():
    import inferqa
    from conftest import random_graded_case
    from inferqa.formats import Qrels

    run, qrels = random_graded_case(11, n_q=12, n_docs=80, depth=30)
    r_run, r_qrels = run.to_ranx(), qrels.to_ranx()
    assert isinstance(r_run, ranx.Run) and isinstance(r_qrels, ranx.Qrels)
    from inferqa.formats.coerce import as_qrels, as_run

    assert as_run(r_run) == run and as_qrels(r_qrels)[0] == qrels and isinstance(as_qrels(r_qrels)[0], Qrels)
    names = ["RR", "nDCG@10", "hit@5", "P@5", "AP"]
    want = inferqa.evaluate(run, qrels, names)
    for got in (inferqa.evaluate(r_run, r_qrels, names), inferqa.evaluate(r_run, qrels, names),
                inferqa.evaluate(run, r_qrels, names)):
        assert got == pytest.approx(want, abs=1e-12)  # ranx may hold the questions in another order
    theirs = ranx.evaluate(r_qrels, r_run, ["mrr", "ndcg@10", "hit_rate@5", "precision@5", "map"])
    assert list(want.values()) == pytest.approx(list(theirs.values()), abs=1e-9)
    other = Run({q: list(reversed(r)) for q, r in run.items()})
    got = inferqa.compare([r_run, other.to_ranx()], r_qrels, ["RR"], resamples=50)
    assert got.rows[0]["metrics"]["RR"]["mean"] == pytest.approx(want["RR"])


def test_pyterrier_frames_round_trip_and_give_the_same_metrics():
    pd = pytest.importorskip("pandas")
    import inferqa
    from conftest import random_graded_case
    from inferqa.formats.coerce import as_qrels, as_run

    run, qrels = random_graded_case(12, n_q=10, n_docs=80, depth=30)
    frame, qframe = run.to_pyterrier(), qrels.to_dataframe()
    assert list(frame.columns) == ["qid", "docno", "score", "rank"] and list(qframe.columns) == ["qid", "docno", "label"]
    assert len(frame) == sum(map(len, run.values())) and len(qframe) == sum(map(len, qrels.values()))
    assert as_run(frame) == run and as_qrels(qframe)[0] == qrels
    names = ["RR", "nDCG(gain=exp)@10", "R@10"]
    assert inferqa.evaluate(frame, qframe, names) == inferqa.evaluate(run, qrels, names)
    # a frame without a rank column (as a transformer may give it) is ordered by score
    shuffled = frame.drop(columns="rank").sample(frac=1.0, random_state=0)
    assert as_run(shuffled) == run
    with pytest.raises(InputError, match="a run frame needs columns qid, docno, score; it lacks score"):
        as_run(pd.DataFrame({"qid": ["q"], "docno": ["d"]}))
    with pytest.raises(InputError, match="score is NaN"):
        as_run(pd.DataFrame({"qid": ["q"], "docno": ["d"], "score": [float("nan")]}))


def test_a_missing_optional_library_is_an_input_error(monkeypatch):
    import sys

    for module in ("ranx", "pandas"):
        monkeypatch.setitem(sys.modules, module, None)  # importing it raises ImportError
    run = Run({"q": [("d", 1.0)]})
    with pytest.raises(InputError, match="Run.to_ranx needs ranx, which is not installed"):
        run.to_ranx()
    with pytest.raises(InputError, match="Run.to_dataframe needs pandas"):
        run.to_dataframe()
    from inferqa.formats import Qrels

    with pytest.raises(InputError, match="Qrels.to_ranx needs ranx"):
        Qrels({"q": {"d": 1}}).to_ranx()
