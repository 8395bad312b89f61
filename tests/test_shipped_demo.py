"""The files shipped with the demo: SmolLM2's labels, applied at build time, and its answers,
copied into the LLM cache; and the demo itself, whose first run needs no model call."""

from __future__ import annotations

import json

import pytest

from inferqa.formats.benchmark import Benchmark
from inferqa.construct import build_benchmark
from inferqa.data import demo_path, load_questions
from inferqa.data.shipped_demo import DEMO_BUILD, apply_labels, cache_rows_path, labels_path, seed_llm_cache
from inferqa.io import iter_jsonl
from inferqa.evaluation.exact_match import exact_match
from inferqa.records import parse_passage_id

pytestmark = pytest.mark.skipif(not labels_path().exists(), reason="demo_labels.jsonl not generated "
                                "(python scripts/demo_data.py labels)")


@pytest.fixture(scope="module")
def bench(tmp_path_factory) -> Benchmark:
    out = tmp_path_factory.mktemp("demo") / "bench"
    build_benchmark(load_questions(demo_path()), out, **DEMO_BUILD, post_build=apply_labels)
    return Benchmark(out)


def test_every_passage_gets_its_shipped_label(bench):
    shipped = {(r["qid"], r["order"]): r for _, r in iter_jsonl(labels_path())}
    qrels = bench.qrels
    own = [(qid, pid) for qid, docs in qrels.items() for pid in docs]
    assert len(own) == len(bench.questions) * 15 == len(shipped)  # 3 hints: 15 orderings per question
    for qid, pid in own:
        q, order = parse_passage_id(pid)
        row = shipped[(q, "".join(map(str, order)))]
        assert qrels[qid][pid] == row["label"]
        # the label is what the labeller's answer earns under the reader's exact match
        gold = bench.questions[qid].answers
        assert row["correct"] == {who: exact_match(a, gold) for who, a in row["answers"].items()}
        assert row["label"] == (2 if any(row["correct"].values()) else 1)
    counts = bench.meta["labels"]
    assert set(counts) == {"1", "2"} and counts["2"] > 0  # label 2 exists
    assert bench.meta["labelling"]["mode"] == "full"
    labels = [r for _, r in iter_jsonl(bench.path / "labels.jsonl")]
    assert len(labels) == len(own) and all(r["copied_from"] is None and r["answers"] for r in labels)


def test_seeding_the_cache_adds_rows_once_and_keeps_the_users(tmp_path):
    if not cache_rows_path().exists():
        pytest.skip("demo_llm_cache.jsonl not generated (python scripts/demo_data.py answers)")
    from inferqa.llm.cache import LLMCache

    rows = [r for _, r in iter_jsonl(cache_rows_path())]
    path = tmp_path / "llm.sqlite"
    mine = LLMCache(path)
    mine.put_many([(rows[0]["key"], "my own answer")], rows[0]["identity"], rows[0]["kind"])
    mine.close()
    assert seed_llm_cache(path) == len(rows) - 1
    assert seed_llm_cache(path) == 0
    cache = LLMCache(path)
    got = cache.get_many([rows[0]["key"], rows[1]["key"]])
    cache.close()
    assert got == {rows[0]["key"]: "my own answer", rows[1]["key"]: rows[1]["value"]}


@pytest.mark.llm
@pytest.mark.slow
def test_demo_first_run_needs_no_model_call(tmp_path, monkeypatch):
    """Everything the demo asks SmolLM2 ships with it: a first run on an empty cache makes no call."""
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install inferqa[llm])")
    pytest.importorskip("sentence_transformers", reason="the demo's dense retriever needs inferqa[dense]")
    if not cache_rows_path().exists():
        pytest.skip("demo_llm_cache.jsonl not generated (python scripts/demo_data.py answers)")
    from typer.testing import CliRunner

    from inferqa.cli.app import app

    monkeypatch.setenv("INFERQA_LLM_CACHE", str(tmp_path / "llm.sqlite"))
    res = CliRunner().invoke(app, ["demo", "--out", str(tmp_path / "demo"), "--no-progress"])
    assert res.exit_code == 0, res.output
    assert "LLM answers: 0 computed" in res.output and f"from the cache ({tmp_path / 'llm.sqlite'})" in res.output
    results = json.loads((tmp_path / "demo" / "results.json").read_text())
    optimal = [r for r in results["reader"] if r["setting"] == "optimal"]
    assert optimal and all(r["questions"] == 38 for r in optimal)
    assert (tmp_path / "demo" / "explorer.html").exists()
