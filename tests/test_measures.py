"""Measure names and parameters: every family against ir_measures and ranx on graded 0/1/2
labels (distinct scores, so no tie order), rel=1 and rel=2; the API's name handling."""

from __future__ import annotations

import warnings

import pytest

from conftest import random_graded_case
from inferqa.errors import InputError
from inferqa.evaluation import compare, evaluate, parse_measure
from inferqa.formats import Qrels, Run

ir_measures = pytest.importorskip("ir_measures")


def _relevant_only(run, qrels, rel):
    """The questions with a passage of label >= rel: ours leaves the others out of Success and R,
    both libraries count them 0, so the libraries are compared on these."""
    keep = [q for q, docs in qrels.items() if any(v >= rel for v in docs.values())]
    return Run({q: run[q] for q in keep}), Qrels({q: qrels[q] for q in keep})


def _ir(measures, run, qrels):
    """ir_measures' value of each measure, each computed in a call of its own: one call with two
    gain settings of nDCG may hand one setting's values to the other, depending on the hash seed
    (seen with ir_measures 0.4.3 and PYTHONHASHSEED=1)."""
    ir_qrels = [ir_measures.Qrel(q, d, lab) for q, docs in qrels.items() for d, lab in docs.items()]
    ir_run = [ir_measures.ScoredDoc(q, d, s) for q, ranked in run.items() for d, s in ranked]
    return {m: ir_measures.calc_aggregate([m], ir_qrels, ir_run)[m] for m in measures}


@pytest.mark.parametrize("rel", [1, 2])
@pytest.mark.parametrize("seed", [5, 6])
def test_families_against_ir_measures(seed, rel):
    from ir_measures import AP, P, R, RR, Judged, Rprec, Success, nDCG

    run, qrels = _relevant_only(*random_graded_case(seed), rel)
    lin = {0: 0, 1: 1 if rel == 1 else 0, 2: 2}
    exp = {0: 0, 1: 1 if rel == 1 else 0, 2: 3}
    r = f"(rel={rel})"
    theirs_by = {
        f"Success{r}@1": Success(rel=rel) @ 1, f"success{r}@10": Success(rel=rel) @ 10,
        f"R{r}@10": R(rel=rel) @ 10, f"recall{r}@50": R(rel=rel) @ 50,
        f"P{r}@5": P(rel=rel) @ 5, f"precision{r}@20": P(rel=rel) @ 20,
        f"RR{r}": RR(rel=rel), f"mrr{r}@10": RR(rel=rel) @ 10,
        f"AP{r}": AP(rel=rel), f"map{r}@20": AP(rel=rel) @ 20,
        f"Rprec{r}": Rprec(rel=rel),
        f"nDCG{r}@10": nDCG(gains=lin) @ 10, f"NDCG{r}@100": nDCG(gains=lin) @ 100,
        f"nDCG(rel={rel},gain=exp)@10": nDCG(gains=exp) @ 10,
        "Judged@10": Judged @ 10, "judged@50": Judged @ 50,
    }
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no two names here are one measure
        ours = evaluate(run, qrels, list(theirs_by))
    theirs = _ir(list(theirs_by.values()), run, qrels)
    for name, measure in theirs_by.items():
        assert ours[name] == pytest.approx(theirs[measure], abs=1e-9), name
    # rel as the call's min_label is the same measure as rel written in the name
    assert evaluate(run, qrels, ["P@5", "RR"], min_label=rel) == pytest.approx(
        {"P@5": ours[f"P{r}@5"], "RR": ours[f"RR{r}"]}, abs=1e-12)


def test_ir_measures_objects_are_read_by_their_names():
    from ir_measures import RR, P, nDCG

    run, qrels = random_graded_case(7)
    objects = [nDCG @ 10, RR(rel=2), P(rel=2) @ 5]
    ours = evaluate(run, qrels, objects)
    assert list(ours) == ["nDCG@10", "RR(rel=2)", "P(rel=2)@5"]
    assert ours == evaluate(run, qrels, "nDCG@10,RR(rel=2),P(rel=2)@5")


RANX = ["hit_rate@10", "hits@10", "recall@50", "precision@5", "mrr", "mrr@10", "map", "map@20", "ndcg@10",
        "ndcg@100", "ndcg_burges@10", "r-precision"]


@pytest.mark.parametrize("rel", [1, 2])
def test_ranx_names_give_ranx_values(rel):
    ranx = pytest.importorskip("ranx")
    run, qrels = _relevant_only(*random_graded_case(8), rel)
    names = [n if rel == 1 else f"{n}-l{rel}" for n in RANX]
    theirs = ranx.evaluate(ranx.Qrels(dict(qrels)), ranx.Run({q: dict(r) for q, r in run.items()}), names)
    ours = evaluate(run, qrels, names)
    for name in names:
        assert ours[name] == pytest.approx(float(theirs[name]), abs=1e-9), name
    if rel == 1:  # ndcg@10 is ranx's ndcg@10, whatever the case; 2^label - 1 is ndcg_burges
        assert evaluate(run, qrels, "NDCG@10")["NDCG@10"] == pytest.approx(float(theirs["ndcg@10"]), abs=1e-9)
        assert evaluate(run, qrels, "ndcg_exp@10")["ndcg_exp@10"] == pytest.approx(
            float(theirs["ndcg_burges@10"]), abs=1e-9)


def test_names_and_parameters():
    same = {"nDCG@10": ["ndcg@10", "NDCG@10", "ndcg_cut_10", "nDCG(gain=lin)@10"],
            "nDCG(gain=exp)@10": ["ndcg_exp@10", "NDCG_EXP@10", "ndcg_burges@10"],
            "Success@10": ["hit@10", "HIT@10", "hit_rate@10", "success_10"],
            "RR": ["mrr", "MRR", "recip_rank", "rr"], "RR@10": ["mrr@10"],
            "R@100": ["recall@100", "recall_100", "r@100"], "P@5": ["p@5", "precision@5", "P_5"],
            "AP": ["map", "ap"], "AP@100": ["map@100", "map_cut_100"], "Hits@10": ["hits@10"],
            "P(rel=2)@5": ["p(rel=2)@5", "precision@5-l2", "P(REL=2)@5"], "RR(rel=2)": ["mrr-l2"],
            "Rprec": ["r-precision", "rprec"], "Judged@10": ["judged@10"]}
    for canonical, spellings in same.items():
        for name in [canonical, *spellings]:
            m = parse_measure(name)
            assert m.canonical() == canonical and m.name == name, name
    assert parse_measure("P@5").canonical(min_label=2) == "P(rel=2)@5"
    for bad, says in {"RR@0": "at least 1", "R": "needs a cutoff", "Rprec@5": "takes no cutoff",
                      "nDCG(gain=log)@10": "lin or exp", "P(rel=0)@5": ">= 1", "Judged(rel=2)@5": "no parameter",
                      "ndgc@10": "did you mean ndcg@10", "hitrate@10": "did you mean hit_rate@10", "bpref": "unknown"}.items():
        with pytest.raises(InputError, match=says):
            parse_measure(bad)


def test_strings_lists_and_spellings_of_one_measure():
    run, qrels = random_graded_case(9)
    assert list(evaluate(run, qrels, "RR")) == ["RR"]  # one metric, not its letters
    assert list(evaluate(run, qrels, "RR, P@5")) == ["RR", "P@5"]
    assert list(evaluate(run, qrels, ["RR", "P@5,hit@10"])) == ["RR", "P@5", "hit@10"]
    with pytest.warns(UserWarning, match=r"nDCG@10, ndcg@10, NDCG@10 are one measure \(nDCG@10\)"):
        got = evaluate(run, qrels, "nDCG@10,ndcg@10,NDCG@10,ndcg_exp@10")
    assert list(got) == ["nDCG@10", "ndcg@10", "NDCG@10", "ndcg_exp@10"]
    assert got["nDCG@10"] == got["ndcg@10"] == got["NDCG@10"] != got["ndcg_exp@10"]
    with pytest.warns(UserWarning, match="one measure"):
        res = compare({"a": run, "b": run}, qrels, ["mrr", "RR"], resamples=200)
    assert res.metrics == ["mrr", "RR"] and res.rows[1]["metrics"]["RR"]["mean"] == res.rows[0]["metrics"]["mrr"]["mean"]


def test_paper_provider_keeps_its_own_ndcg_gain():
    run, qrels = random_graded_case(10)
    paper = evaluate(run, qrels, ["ndcg@10", "ndcg_exp@10", "nDCG(gain=lin)@10"], protocol="paper")
    assert paper["ndcg@10"] == paper["ndcg_exp@10"] != paper["nDCG(gain=lin)@10"]


def test_ideal_ranking_is_cut_at_k_when_every_list_is_shorter():
    from ir_measures import nDCG

    qrels = Qrels({"q1": {"a": 1, "b": 2, "c": 1, "d": 2}, "q2": {"e": 1, "f": 1}})
    run = Run({"q1": [("a", 2.0), ("x", 1.0)], "q2": [("f", 1.0)]})
    theirs = _ir([nDCG @ 10, nDCG(gains={0: 0, 1: 1, 2: 3}) @ 10, nDCG], run, qrels)
    ours = evaluate(run, qrels, ["nDCG@10", "ndcg_exp@10", "nDCG"])
    assert ours == pytest.approx({"nDCG@10": theirs[nDCG @ 10], "nDCG": theirs[nDCG],
                                  "ndcg_exp@10": theirs[nDCG(gains={0: 0, 1: 1, 2: 3}) @ 10]}, abs=1e-12)


def test_cli_keeps_every_spelling_with_a_note_and_suggests_names(tmp_path, monkeypatch, capsys):
    import json

    from conftest import run_cli

    run, qrels = random_graded_case(11)
    run.to_file(tmp_path / "run.trec")
    (tmp_path / "qrels.tsv").write_text("".join(f"{q} 0 {d} {lab}\n" for q, docs in qrels.items()
                                                for d, lab in docs.items()))
    code, out, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "run.trec", "--qrels", tmp_path / "qrels.tsv",
                             "-m", "nDCG@10,ndcg@10,P(rel=2)@5", "--json")
    got = json.loads(out)["metrics"]
    assert code == 0 and list(got) == ["nDCG@10", "ndcg@10", "P(rel=2)@5"] and got["nDCG@10"] == got["ndcg@10"]
    assert err.strip() == "note: nDCG@10, ndcg@10 are one measure (nDCG@10): computed once, reported under each name"
    code, _, err = run_cli(monkeypatch, capsys, "evaluate", tmp_path / "run.trec", "--qrels", tmp_path / "qrels.tsv",
                           "-m", "hitrate@10")
    assert code == 2 and "did you mean hit_rate@10?" in err


@pytest.mark.parametrize("seed", [12, 13])
def test_ir_measures_parameters_gains_judged_only_and_rel(seed):
    """Each object as ir_measures writes it, read by its str, against ir_measures' own value
    (one measure per call: docs/field.md), on runs with unjudged passages."""
    from ir_measures import AP, P, R, RR, Rprec, Success, nDCG

    run, qrels = _relevant_only(*random_graded_case(seed), 2)
    qrels = Qrels({q: dict(list(docs.items())[: len(docs) // 2 + 1]) for q, docs in qrels.items()})  # more unjudged
    qrels = Qrels({q: docs for q, docs in qrels.items() if max(docs.values()) >= 2})
    run = Run({q: run[q] for q in qrels})
    objects = [nDCG(gains={0: 0, 1: 1, 2: 3}) @ 10, nDCG(gains={1: 0, 2: 1}) @ 10, nDCG(gains={2: 5}) @ 20,
               nDCG(judged_only=True) @ 10, nDCG(gains={0: 0, 1: 1, 2: 3}, judged_only=True) @ 10,
               P(judged_only=True) @ 5, P(rel=2, judged_only=True) @ 5, RR(judged_only=True), RR(rel=2) @ 10,
               AP(judged_only=True) @ 20, Success(judged_only=True) @ 1, R(judged_only=True) @ 10,
               Rprec(judged_only=True), Rprec(rel=2)]
    ours = evaluate(run, qrels, objects)
    theirs = _ir(objects, run, qrels)
    for m in objects:
        assert ours[str(m)] == pytest.approx(theirs[m], abs=1e-9), str(m)
    assert parse_measure(str(nDCG(gains={0: 0, 1: 1, 2: 3}) @ 10)).canonical() == "nDCG(gains={2:3})@10"


def test_trec_eval_names_with_a_dot_and_names_that_need_their_cutoff():
    run, qrels = random_graded_case(14)
    dotted = evaluate(run, qrels, ["ndcg_cut.10", "P.5", "recall.100", "map_cut.100", "success.10"])
    plain = evaluate(run, qrels, ["ndcg_cut_10", "P_5", "recall_100", "map_cut_100", "success_10"])
    assert list(dotted.values()) == list(plain.values())
    for name in ("ndcg_cut", "map_cut"):  # trec_eval: every default cutoff, not the whole list
        with pytest.raises(InputError, match=f"'{name}' is trec_eval's .* at several cutoffs: give one, e.g. {name}.10"):
            parse_measure(name)
    assert parse_measure("ndcg").canonical() == "nDCG"  # trec_eval's ndcg is the whole list
    for bad, says in {"nDCG(gain=exp,gains={2:3})@10": "not both", "nDCG(gains={a:1})@10": "mapping of labels",
                      "P(judged_only=yes)@5": "True or False", "Judged(judged_only=True)@5": "no parameter"}.items():
        with pytest.raises(InputError, match=says):
            parse_measure(bad)
    assert parse_measure("nDCG(gains={0:0,1:1,2:2})@10").canonical() == "nDCG@10"


def test_cli_repeated_metrics_add_up_and_gains_keep_their_commas(tmp_path, monkeypatch, capsys):
    import json

    from conftest import run_cli

    run, qrels = random_graded_case(15)
    run.to_file(tmp_path / "run.trec")
    qrels.to_file(tmp_path / "qrels.tsv")
    args = ("evaluate", tmp_path / "run.trec", "--qrels", tmp_path / "qrels.tsv", "--json")
    code, out, err = run_cli(monkeypatch, capsys, *args, "-m", "P@5", "-m", "nDCG(gains={0:0,1:1,2:3})@10,RR",
                             "--metrics", "ndcg_cut.10")
    assert code in (0, None), err
    got = json.loads(out)["metrics"]
    assert list(got) == ["P@5", "nDCG(gains={0:0,1:1,2:3})@10", "RR", "ndcg_cut.10"]
    assert got == pytest.approx(evaluate(run, qrels, list(got)), abs=1e-9)
    assert got["nDCG(gains={0:0,1:1,2:3})@10"] == pytest.approx(evaluate(run, qrels, "ndcg_exp@10")["ndcg_exp@10"])
