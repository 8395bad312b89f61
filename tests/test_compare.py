"""`compare` / `inferqa compare`: paired tests of runs against the first, checked against
scipy (ttest_rel, permutation_test, bootstrap), statsmodels' multipletests when installed,
and hand-worked corrections."""

from __future__ import annotations

import json

import numpy as np
import pytest

from conftest import one_line_error, run_cli
from inferqa.errors import InputError
from inferqa.evaluation import compare, evaluate
from inferqa.evaluation.significance import adjust_p, paired_tests
from inferqa.formats import Qrels, Run

stats = pytest.importorskip("scipy.stats")


def test_holm_and_bonferroni_hand_worked():
    p = [0.01, 0.04, 0.03, np.nan, 0.20]
    # Holm over the 4 defined: sorted 0.01, 0.03, 0.04, 0.20 times 4, 3, 2, 1 -> 0.04, 0.09, 0.08 -> 0.09
    # (step-down keeps it monotone), 0.20
    assert adjust_p(p, "holm")[[0, 2, 1, 4]] == pytest.approx([0.04, 0.09, 0.09, 0.20])
    assert np.isnan(adjust_p(p, "holm")[3])
    assert adjust_p(p, "bonferroni")[[0, 1, 2, 4]] == pytest.approx([0.04, 0.16, 0.12, 0.80])
    assert adjust_p([0.5, 0.6], "bonferroni") == pytest.approx([1.0, 1.0])
    assert adjust_p(p, "none")[[0, 1]] == pytest.approx([0.01, 0.04])
    with pytest.raises(InputError, match="correction"):
        adjust_p(p, "fdr")


def test_p_values_print_alike_everywhere():
    from inferqa.evaluation.significance import format_p
    from inferqa.tabular import MISSING

    assert [format_p(p) for p in (0.0004, 0.001, 0.0456, 1.0, None)] == ["<0.001", "0.001", "0.046", "1.000", MISSING]


def test_corrections_equal_statsmodels():
    multipletests = pytest.importorskip("statsmodels.stats.multitest").multipletests
    p = np.random.default_rng(2).random(9) ** 3
    for ours, theirs in (("holm", "holm"), ("bonferroni", "bonferroni")):
        assert adjust_p(p, ours) == pytest.approx(multipletests(p, method=theirs)[1], abs=1e-12)



def _randomisation(diffs, **kw):
    """(p, exact) of the sign-flip test of mean(diffs) = 0, through `paired_tests` (diffs against 0)."""
    t = paired_tests(np.asarray(diffs, dtype=float), np.zeros(len(diffs)), **kw)[0]
    return t.p, t.exact


def _one(a, b, **kw):
    """One paired test of two vectors, through `paired_tests`."""
    return paired_tests(a, b, **kw)[0]


def _pair(seed=3, n=40):
    rng = np.random.default_rng(seed)
    a = rng.random(n)
    return a, a - rng.normal(0.08, 0.2, n)


def test_t_test_and_interval_equal_scipy():
    a, b = _pair()
    ours = _one(a, b, test="t")
    ref = stats.ttest_rel(a, b)
    ci = ref.confidence_interval(0.95)
    assert ours.p == pytest.approx(ref.pvalue, abs=1e-12)
    assert (ours.ci_low, ours.ci_high) == pytest.approx((ci.low, ci.high), abs=1e-12)
    # consistent by construction: the interval excludes 0 exactly when p < 0.05
    rows = paired_tests(np.array([a, a, b]), np.array([b, a, a]), test="t")
    assert [t.p < 0.05 for t in rows] == [not (t.ci_low <= 0 <= t.ci_high) for t in rows]
    assert rows[1].p == 1.0 and rows[1].ci_low == rows[1].ci_high == 0.0  # equal runs


def test_randomisation_rows_equal_scipy_permutation_test():
    a, b = _pair(5, 12)
    ours = paired_tests(np.array([a, b]), np.array([b, a]))
    ref = stats.permutation_test((a, b), lambda x, y: np.mean(x - y), permutation_type="samples",
                                 n_resamples=np.inf, alternative="two-sided")
    assert ours[0].exact and ours[0].p == pytest.approx(ref.pvalue, abs=1e-12) and ours[1].p == ours[0].p
    assert ours[0].p == _randomisation(a - b)[0]
    # Monte Carlo rows (more than 13 differing questions) are close to scipy's exact answer
    a, b = _pair(6, 16)
    mc = paired_tests(a, b, resamples=5_000, seed=1)[0]
    exact = stats.permutation_test((a, b), lambda x, y: np.mean(x - y), permutation_type="samples",
                                   n_resamples=np.inf, alternative="two-sided").pvalue
    assert not mc.exact and mc.p == pytest.approx(exact, abs=0.02)


def test_bootstrap_test_interval_equals_scipy_and_p_is_consistent():
    a, b = _pair(7, 50)
    ours = _one(a, b, test="bootstrap", seed=0)
    ref = stats.bootstrap((a - b,), np.mean, method="percentile", n_resamples=10_000,
                          random_state=0).confidence_interval
    assert ours.ci_low == pytest.approx(ref.low, abs=0.01) and ours.ci_high == pytest.approx(ref.high, abs=0.01)
    # hand-worked: all differences positive, every resampled mean is > 0 -> p = 2 / (R + 1)
    pos = _one([1, 2, 3, 4], [0, 0, 0, 0], test="bootstrap", resamples=999)
    assert pos.p == pytest.approx(2 / 1000)
    same = _one([1, 2, 3], [1, 2, 3], test="bootstrap")
    assert same.p == 1.0 and same.diff == 0.0
    rng = np.random.default_rng(11)
    a = rng.random((30, 25))
    b = a - rng.normal(0.05, 0.2, (30, 25))
    for t in paired_tests(a, b, test="bootstrap"):
        if abs(t.p - 0.05) > 0.01:  # away from the resampling granularity
            assert (t.p < 0.05) == (not t.ci_low <= 0 <= t.ci_high)


def _runs():
    qrels = Qrels({f"q{i}": {f"q{i}_rel": 1} for i in range(30)})
    rng = np.random.default_rng(4)
    runs = []
    for shift in (0, 5, 0):
        run = Run()
        for i in range(30):
            rank = int(rng.integers(0, 6)) + (shift if i % 3 else 0)
            ranked = [f"q{i}_x{j}" for j in range(10)]
            ranked.insert(min(rank, 10), f"q{i}_rel")
            run[f"q{i}"] = [(p, float(20 - r)) for r, p in enumerate(ranked)]
        runs.append(run)
    return runs, qrels


def test_compare_values_are_evaluate_and_paired_tests():
    runs, qrels = _runs()
    del runs[2]["q3"]  # a question the third run lacks counts as an empty ranking
    result = compare({"base": runs[0], "worse": runs[1], "other": runs[2]}, qrels, ["mrr", "hit@1"],
                     test="t", correction="holm")
    assert result.baseline == "base" and result.questions == 30 and result.rows[2]["missing"] == 1
    assert result.rows[0]["metrics"]["mrr"]["mean"] == pytest.approx(evaluate(runs[0], qrels, ["mrr"])["mrr"])
    per = {name: evaluate(Run({q: r.get(q, []) for q in runs[0]}), qrels, ["mrr"], per_query=True)["per_query"]
           for name, r in (("base", runs[0]), ("worse", runs[1]), ("other", runs[2]))}
    vec = {n: np.array([per[n][q]["mrr"] for q in runs[0]]) for n in per}
    raw = [stats.ttest_rel(vec["worse"], vec["base"]).pvalue, stats.ttest_rel(vec["other"], vec["base"]).pvalue]
    cell = result.rows[1]["metrics"]["mrr"]
    assert cell["diff"] == pytest.approx(vec["worse"].mean() - vec["base"].mean())
    assert cell["p"] == pytest.approx(raw[0], abs=1e-12)
    assert [result.rows[i]["metrics"]["mrr"]["p_corrected"] for i in (1, 2)] == pytest.approx(adjust_p(raw, "holm"))
    assert cell["diff"] < 0 and cell["p_corrected"] < 0.05
    md = result.to_markdown().splitlines()
    assert md[0] == "| run | mrr | Δ [95 % CI] | p | hit@1 | Δ [95 % CI] | p |"
    want = f"{100 * cell['mean']:.2f} | {100 * cell['diff']:+.2f} [{100 * cell['ci'][0]:.2f}, {100 * cell['ci'][1]:.2f}]"
    assert md[3].startswith(f"| worse | {want} | ") and md[4].startswith("| other (1 missing) | ")
    assert "t-test" in md[-1] and "holm-corrected over the 2 runs" in md[-1]
    with pytest.raises(InputError, match="at least two"):
        compare([runs[0]], qrels)
    with pytest.raises(InputError) as bad:
        compare(runs, qrels, test="wilcoxon")
    assert str(bad.value) == "compare: option 'test' takes one of randomisation, t, bootstrap, not 'wilcoxon'"


def test_compare_cli_table_and_json(monkeypatch, capsys, tmp_path, demo_bench_8q):
    bench = demo_bench_8q
    from inferqa.retrieve import get_retriever

    r1 = get_retriever("bm25").ensure_index(bench).retrieve(bench, split="all", depth=20)
    r2 = get_retriever("bm25", k1=0.5, b=0.2).ensure_index(bench).retrieve(bench, split="all", depth=20)
    r1.to_file(tmp_path / "a.trec")
    r2.to_file(tmp_path / "b.trec")
    code, out, err = run_cli(monkeypatch, capsys, "compare", tmp_path / "a.trec", f"tuned={tmp_path / 'b.trec'}",
                             "--bench", bench.path, "--metrics", "RR,nDCG@10", "--test", "bootstrap", "--json")
    assert code in (0, None), err
    got = json.loads(out)
    assert got["baseline"] == "a" and [r["run"] for r in got["runs"]] == ["a", "tuned"]
    assert got["metrics"] == ["RR", "nDCG@10"] and got["test"] == "bootstrap" and got["correction"] == "holm"
    want = evaluate(tmp_path / "b.trec", bench, ["RR"])["RR"] - evaluate(tmp_path / "a.trec", bench, ["RR"])["RR"]
    assert got["runs"][1]["metrics"]["RR"]["diff"] == pytest.approx(want)
    code, out, err = run_cli(monkeypatch, capsys, "compare", tmp_path / "a.trec", tmp_path / "b.trec", "--bench",
                             bench.path)
    assert code in (0, None), err
    assert "vs a" in out and "randomisation test" in out and "percentile bootstrap" in out
    for bad, what in ((["--test", "z"], "compare: option 'test' takes one of randomisation, t, bootstrap, not 'z'"),
                      (["--correction", "fdr"], "compare: option 'correction' takes one of holm, bonferroni, none, "
                                                "not 'fdr'"),
                      (["--metrics", "bpref"], "unknown metric")):
        code, _, err = run_cli(monkeypatch, capsys, "compare", tmp_path / "a.trec", tmp_path / "b.trec",
                               "--bench", bench.path, *bad)
        assert code == 2 and what in err and len(err.strip().splitlines()) == 1


@pytest.fixture(scope="module")
def bench4(bench_factory):
    """4 demo questions, split test = demo_02, demo_03; every passage of a question is labelled 1,
    so another question's passage is a non-relevant one there."""
    bench = bench_factory(4)
    assert bench.split_qids("test") == ["demo_02", "demo_03"]
    return bench


def _trec(path, rankings):
    path.write_text("".join(f"{q} Q0 {p} {r} {10 - r} t\n" for q, pids in rankings.items()
                            for r, p in enumerate(pids, 1)))
    return path


def test_compare_reads_a_run_with_duplicates_as_evaluate_does(bench4, tmp_path, monkeypatch, capsys):
    # baseline: demo_02 relevant at rank 3 behind a non-relevant passage listed twice (RR 1/3,
    # hit@1 0), demo_03 relevant at rank 1 (RR 1, hit@1 1): paper means mrr 2/3, hit@1 1/2
    base = _trec(tmp_path / "dup.trec", {"demo_02": ["demo_03_100_0", "demo_03_100_0", "demo_02_100_0"],
                                         "demo_03": ["demo_03_010_1"]})
    other = _trec(tmp_path / "other.trec", {"demo_02": ["demo_02_100_0"], "demo_03": ["demo_02_010_1", "demo_03_010_1"]})
    for protocol in ("inferqa", None):  # our protocol refuses the duplicate in both
        kw = {"protocol": protocol} if protocol else {}
        with pytest.raises(InputError, match="duplicate passage demo_03_100_0 for question demo_02"):
            evaluate(base, bench4, ["mrr"], split="test", **kw)
        with pytest.raises(InputError, match="duplicate passage demo_03_100_0 for question demo_02"):
            compare([base, other], bench4, ["mrr"], split="test", **kw)
    want = evaluate(base, bench4, ["mrr", "hit@1"], split="test", protocol="paper")
    assert want == {"mrr": 0.6667, "hit@1": 0.5}
    got = compare([base, other], bench4, ["mrr", "hit@1"], split="test", protocol="paper", test="t")
    assert got.questions == 2
    assert got.rows[0]["metrics"]["mrr"]["mean"] == pytest.approx(2 / 3)
    assert {m: round(got.rows[0]["metrics"][m]["mean"], 4) for m in want} == want
    # other: RR 1 and 1/2, so the difference is 3/4 - 2/3
    assert got.rows[1]["metrics"]["mrr"]["diff"] == pytest.approx(3 / 4 - 2 / 3)
    args = ("--bench", bench4.path, "--split", "test", "-m", "mrr,hit@1")
    for cmd in (("evaluate", base), ("compare", base, other)):
        code, _, err = run_cli(monkeypatch, capsys, *cmd, *args)
        one_line_error(code, err, "dup.trec", "line 2", "duplicate passage demo_03_100_0")
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", base, *args, "--protocol", "paper", "--json")
    assert code in (0, None), err
    assert json.loads(out)["metrics"] == want
    code, out, err = run_cli(monkeypatch, capsys, "compare", base, other, *args, "--protocol", "paper", "--json")
    assert code in (0, None), err
    means = {m: c["mean"] for m, c in json.loads(out)["runs"][0]["metrics"].items()}
    assert means == pytest.approx({"mrr": 2 / 3, "hit@1": 0.5})


def test_compare_reads_a_partial_json_run_as_evaluate_does(bench4, tmp_path, monkeypatch, capsys):
    # a Rankify run of demo_02 only: relevant at rank 2 (RR 1/2, hit@1 0)
    part = tmp_path / "part.json"
    part.write_text(json.dumps([{"question": bench4.questions["demo_02"].text,
                                 "ctxs": [{"id": "demo_03_100_0", "score": 2.0}, {"id": "demo_02_100_0", "score": 1.0}]}]))
    full = _trec(tmp_path / "full.trec", {"demo_02": ["demo_02_100_0"], "demo_03": ["demo_03_100_0"]})
    for call in (lambda: evaluate(part, bench4, ["mrr"], split="test"),
                 lambda: compare([part, full], bench4, ["mrr"], split="test")):
        with pytest.raises(InputError, match="1 questions in the run but 2 in split 'test'"):
            call()
    # scored on the run's judged questions only (--questions run); by default demo_03 counts 0
    with pytest.warns(UserWarning, match="part lacks 1 of the 2 judged questions of split test"):
        assert evaluate(part, bench4, ["mrr"], split="test", allow_partial=True) == {"mrr": 0.25}
    judged = compare([part, full], bench4, ["mrr"], split="test", allow_partial=True, test="t")
    assert judged.questions == 2 and [r["missing"] for r in judged.rows] == [1, 0]
    assert judged.rows[0]["metrics"]["mrr"]["mean"] == pytest.approx(0.25)
    want = evaluate(part, bench4, ["mrr", "hit@1"], split="test", allow_partial=True, questions="run")
    assert want == {"mrr": 0.5, "hit@1": 0.0}
    got = compare([part, full], bench4, ["mrr", "hit@1"], split="test", allow_partial=True, test="t",
                  questions="run")
    assert got.questions == 1 and [r["missing"] for r in got.rows] == [0, 0]
    assert {m: got.rows[0]["metrics"][m]["mean"] for m in want} == pytest.approx(want)
    assert got.rows[1]["metrics"]["mrr"]["mean"] == 1.0  # full, on the baseline's one question
    args = ("--bench", bench4.path, "--split", "test", "-m", "mrr,hit@1")
    for cmd in (("evaluate", part), ("compare", part, full)):
        code, _, err = run_cli(monkeypatch, capsys, *cmd, *args)
        one_line_error(code, err, "part.json", "1 questions in the run but 2", "--allow-partial")
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", part, *args, "--allow-partial", "--json",
                             "--questions", "run")
    assert code in (0, None), err
    assert json.loads(out)["metrics"] == want
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", part, *args, "--allow-partial")
    assert err == ("inferqa: warning: part lacks 1 of the 2 judged questions of split test (e.g. demo_03): each "
                   "counts 0 (--questions run scores only the run's)\n")
    assert "2 questions scored, 0 left out (not judged), 1 counted 0 (judged, not in the run)" in " ".join(out.split())
    code, out, err = run_cli(monkeypatch, capsys, "compare", part, full, *args, "--allow-partial", "--json",
                             "--questions", "run")
    assert code in (0, None), err
    got = json.loads(out)
    assert got["questions"] == 1
    assert {m: c["mean"] for m, c in got["runs"][0]["metrics"].items()} == pytest.approx(want)


def test_compare_note_says_run_or_runs():
    runs, qrels = _runs()
    one = compare(runs[:2], qrels, ["mrr"], test="t").note()
    assert "holm-corrected over the 1 run compared, per metric" in one
    assert "over the 2 runs compared" in compare(runs, qrels, ["mrr"], test="t").note()


def test_a_run_name_given_twice_is_one_line_and_exit_2(tmp_path, monkeypatch, capsys, bench_factory):
    from conftest import run_cli
    from inferqa.formats import Run

    bench = bench_factory(2)
    run = Run({q: [(p, 1.0 / (i + 1)) for i, p in enumerate(sorted(bench.qrels[q])[:3])] for q in bench.questions})
    run.to_file(tmp_path / "x.trec")
    run.to_file(tmp_path / "y.trec")
    code, out, err = run_cli(monkeypatch, capsys, "compare", f"a={tmp_path / 'x.trec'}", f"a={tmp_path / 'y.trec'}",
                             "--bench", bench.path)
    assert code == 2 and len(err.strip().splitlines()) == 1 and "run name 'a' is given twice" in err
    # names taken from the files' stems may repeat: told apart by their paths, as before
    (tmp_path / "d").mkdir()
    run.to_file(tmp_path / "d" / "x.trec")
    code, out, err = run_cli(monkeypatch, capsys, "compare", tmp_path / "x.trec", tmp_path / "d" / "x.trec",
                             "--bench", bench.path)
    assert code == 0, err
