"""The file gateways (Run/Qrels from_file and to_file, bench.check) and the stage inputs
every stage function takes (a path, a Run, open_run's result, plain dicts)."""

from __future__ import annotations

import gzip
import json

import pytest

import inferqa
from inferqa.errors import InputError
from inferqa.formats import Benchmark, Qrels, Run, as_qrels, as_run, open_run


@pytest.fixture(scope="module")
def bench(bench_factory) -> Benchmark:
    return bench_factory(4)


def _run(bench: Benchmark, qids: list[str]) -> Run:
    """Each question's own passages with distinct scores, the first one relevant last."""
    return Run({q: [(p, 10.0 - i) for i, p in enumerate(sorted(bench.qrels[q])[:6])] for q in qids}, tag="t")


def test_a_trec_run_round_trips_plain_and_compressed(bench, tmp_path):
    run = _run(bench, list(bench.questions))
    run.to_file(tmp_path / "r.trec", tag="mine")
    assert (tmp_path / "r.trec").read_text().splitlines()[0].endswith(" mine")
    (tmp_path / "r.trec.gz").write_bytes(gzip.compress((tmp_path / "r.trec").read_bytes()))
    for name in ("r.trec", "r.trec.gz"):
        back = Run.from_file(tmp_path / name)
        assert back == run and back.format == "trec" and back.qids == list(run) and back.info == []
        assert dict(back.findings) == {}


def test_a_rankify_run_round_trips_through_its_split(bench, tmp_path):
    test = bench.split_qids("test")
    run = _run(bench, test)
    run.to_file(tmp_path / "r.json", "rankify", bench=bench, split="test", with_text=False)
    back = Run.from_file(tmp_path / "r.json", bench=bench, split="test")
    assert back == run and back.format == "rankify" and [d["qid"] for d in back.info] == test
    assert not back.reranked and set(back.titles) == set(test)
    with pytest.raises(InputError, match="give --bench DIR and --split SPLIT"):
        Run.from_file(tmp_path / "r.json")
    with pytest.raises(InputError, match="unknown"):
        Run.from_file(tmp_path / "r.json", "trek")


def test_qrels_round_trip(bench, tmp_path):
    bench.qrels.to_file(tmp_path / "q.txt")
    assert (tmp_path / "q.txt").read_text().splitlines()[0].split()[1] == "0"
    assert Qrels.from_file(tmp_path / "q.txt") == bench.qrels
    Qrels({"q": {"p": 2, "o": 0}}).to_file(tmp_path / "q")
    (tmp_path / "q.gz").write_bytes(gzip.compress((tmp_path / "q").read_bytes()))
    assert Qrels.from_file(tmp_path / "q.gz") == {"q": {"p": 2, "o": 0}}
    with pytest.raises(InputError, match="unknown qrels format 'json'"):
        Qrels.from_file(tmp_path / "q.txt", "json")


def test_bench_check_collects_or_raises(bench):
    qid = bench.split_qids("test")[0]
    good = sorted(bench.qrels[qid])[0]
    run = Run({qid: [(good, 2.0), ("nope", 1.0)], "elsewhere": [(good, 1.0)]})
    findings = bench.check(run, strict=False)
    assert findings == {"ids_not_in_corpus": [f"{qid} rank 2: nope"], "questions_not_in_benchmark": ["elsewhere"]}
    with pytest.raises(InputError) as exc:
        bench.check(run)
    assert exc.value.field == "pid" and exc.value.record == f"{qid} rank 2"
    assert bench.check(Run({qid: [(good, 1.0)]})) == {}


def test_open_run_is_one_run_cut_to_the_split(bench, tmp_path):
    run = _run(bench, list(bench.questions))
    run.to_file(tmp_path / "r.trec")
    test = bench.split_qids("test")
    got = open_run(tmp_path / "r.trec", bench, "test")
    assert isinstance(got, Run) and got.qids == test and list(got) == test and got == run.only(test)
    assert got.format == "trec" and dict(got.findings) == {}
    assert as_run(got) is got and as_run(tmp_path / "r.trec", bench, "test") == got


def test_as_run_takes_the_fields_dicts(bench):
    # ranx / pytrec_eval: {qid: {pid: score}}, best first, equal scores by passage id
    got = as_run({"q": {"b": 1.0, "c": 3.0, "a": 1.0}, 7: {"x": 2}})
    assert got == {"q": [("c", 3.0), ("a", 1.0), ("b", 1.0)], "7": [("x", 2.0)]} and isinstance(got, Run)
    assert as_run({"q": [("b", 2), ("a", 1)]}) == {"q": [("b", 2.0), ("a", 1.0)]}
    with pytest.raises(InputError, match="question 'q': a ranking must be"):
        as_run({"q": 3})
    test = bench.split_qids("test")
    cut = as_run(_run(bench, list(bench.questions)), bench, "test")
    assert list(cut) == test


def test_every_form_of_a_run_evaluates_the_same(bench, tmp_path):
    run = _run(bench, list(bench.questions))
    run.to_file(tmp_path / "r.trec")
    as_dict = {q: dict(r) for q, r in run.items()}
    metrics = ["hit@1", "mrr", "ndcg@10"]
    want = inferqa.evaluate(tmp_path / "r.trec", bench, metrics, split="test")
    for form in (inferqa.open_run(tmp_path / "r.trec", bench, "test"), inferqa.open_run(tmp_path / "r.trec"),
                 run, as_dict, str(tmp_path / "r.trec")):
        assert inferqa.evaluate(form, bench, metrics, split="test") == want
    # by hand: hit@1 is the share of questions whose first passage has label >= 1
    test = bench.split_qids("test")
    hits = [bench.qrels[q].get(run[q][0][0], 0) >= 1 for q in test]
    assert want["hit@1"] == pytest.approx(sum(hits) / len(test))
    assert inferqa.evaluate(inferqa.open_run(tmp_path / "r.trec"), bench, metrics) == \
        inferqa.evaluate(run, bench.qrels, metrics)


def test_a_wrong_type_names_the_argument(bench):
    with pytest.raises(InputError) as exc:
        inferqa.evaluate(42, bench, ["hit@1"])
    assert exc.value.field == "run" and "not int" in str(exc.value)
    with pytest.raises(InputError) as exc:
        as_qrels(3.5)
    assert exc.value.field == "qrels" and "not float" in str(exc.value)
    assert as_qrels({"q": {"p": 1}}) == (Qrels({"q": {"p": 1}}), None)


def test_a_ranking_checkpoint_resumes_only_under_its_header(tmp_path):
    from inferqa.formats.checkpoints import RankingCheckpoint

    path = tmp_path / "ckpt.jsonl"
    ckpt = RankingCheckpoint(path, {"reranker": "x", "depth": 3})
    assert ckpt.read() == {} and not path.exists()
    ckpt.start({"q1": [("q1_11", 2.0)]})
    ckpt.append("q2", [("q2_10", 1.5), ("q2_01", 0.5)])
    ckpt.close()
    with open(path, "a", encoding="utf-8") as fh:
        fh.write('{"qid": "q3", "ranked": [["q3_1')  # a run killed mid-write
    again = RankingCheckpoint(path, {"reranker": "x", "depth": 3})
    assert again.read() == {"q1": [("q1_11", 2.0)], "q2": [("q2_10", 1.5), ("q2_01", 0.5)]}
    assert again.read(lambda qid, ranked: len(ranked) == 2) == {"q2": [("q2_10", 1.5), ("q2_01", 0.5)]}
    assert RankingCheckpoint(path, {"reranker": "x", "depth": 4}).read() == {}
    again.start(again.read())  # the torn line is gone
    again.close()
    assert path.read_text(encoding="utf-8").splitlines()[-1] == '{"qid": "q2", "ranked": [["q2_10", 1.5], ["q2_01", 0.5]]}'


@pytest.mark.parametrize("line, where", [
    ('{"qid": "q2", "ranked": [["q2_10", "high"]]}', "record line 3: field 'ranked[0][1]': score 'high' is not a number"),
    ('{"qid": 7, "ranked": []}', "record line 3: field 'qid': expected a string, got int"),
    ('{"qid": "q2", "ranked": [["q2_10"]]}', "record line 3: field 'ranked[0]': expected [passage id, score]"),
    ("not json", "record line 3: malformed JSON"),
])
def test_a_damaged_checkpoint_is_a_run_readers_one_line_error(tmp_path, line, where):
    """Read by Run.from_file (run format `checkpoint`): only a torn last line is passed over."""
    from inferqa.formats.checkpoints import RankingCheckpoint

    path = tmp_path / "ckpt.jsonl"
    header = {"reranker": "x"}
    path.write_text(json.dumps({"config": header}) + '\n{"qid": "q1", "ranked": [["q1_11", 2.0]]}\n' + line + "\n"
                    + '{"qid": "q3", "ranked": []}\n', encoding="utf-8")
    with pytest.raises(InputError) as exc:
        RankingCheckpoint(path, header).read()
    assert str(exc.value).startswith(f"{path}: {where}")
    whole = "".join(path.read_text(encoding="utf-8").splitlines(keepends=True)[:2])
    path.write_bytes(whole.encode() + '{"qid": "q4", "ranked": [["é'.encode()[:-1])  # cut inside a character
    assert RankingCheckpoint(path, header).read() == {"q1": [("q1_11", 2.0)]}


def test_question_objects_keep_unknown_fields_through_write_questions(bench, tmp_path):
    from inferqa.formats.benchmark import write_questions

    objs = bench.question_objects()
    assert list(objs) == list(bench.questions)
    first = next(iter(objs.values()))
    first["extra"] = {"kept": "ü"}
    assert write_questions(tmp_path / "questions.jsonl", objs.values()) == len(objs)
    lines = (tmp_path / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(objs) and '"extra": {"kept": "ü"}' in lines[0]
    assert (tmp_path / "questions.jsonl").read_text(encoding="utf-8").count("\n") == len(objs)


def test_the_llm_cache_rows_export_sorted_by_key(tmp_path):
    from inferqa.data.shipped_demo import export_llm_cache
    from inferqa.io import iter_jsonl
    from inferqa.llm.cache import LLMCache

    cache = LLMCache(tmp_path / "llm.sqlite")
    cache.put_many([("b", {"text": "two"}), ("a", ["one"])], identity="m", kind="generate")
    assert cache.rows() == [("a", "m", "generate", ["one"]), ("b", "m", "generate", {"text": "two"})]
    cache.close()
    assert export_llm_cache(tmp_path / "llm.sqlite", tmp_path / "rows.jsonl") == 2
    assert [obj for _, obj in iter_jsonl(tmp_path / "rows.jsonl")] == [
        {"key": "a", "identity": "m", "kind": "generate", "value": ["one"]},
        {"key": "b", "identity": "m", "kind": "generate", "value": {"text": "two"}}]
