"""The real bundled SmolLM2-135M-Instruct (GGUF, llama-cpp) as pointwise, listwise and UPR
reranker on a few demo questions. Kept small for CI: 3 questions x depth 8 for pointwise
and UPR (short one- and two-hint passages), one window of 8 for listwise. These check that
scores are the model's log-probabilities, that the call cache makes a rerun free, and that
the passage set is kept; reranking quality is measured in benchmarks/, not asserted here."""

from __future__ import annotations

import math

import pytest

pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed (pip install 'inferqa[llm]')")

from inferqa.errors import InputError  # noqa: E402
from inferqa.formats import Run
from inferqa.records import passage_id  # noqa: E402
from inferqa.reranking import get_reranker  # noqa: E402
from inferqa.reranking.llm import POINTWISE_PROMPT, UPR_PROMPT  # noqa: E402

pytestmark = pytest.mark.llm
DEPTH = 8


@pytest.fixture(scope="module")
def smollm2(tmp_path_factory):
    from inferqa import models
    from inferqa.llm import load_llm

    try:
        models.smollm2_path()
    except InputError as exc:
        pytest.skip(str(exc))
    # one thread: llama.cpp's spinning worker threads slow down ~10x on a busy 2-core machine
    llm = load_llm("smollm2", cache=tmp_path_factory.mktemp("llm-cache") / "calls.sqlite", n_threads=1)
    yield llm
    llm.close()


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    """The first 3 demo questions built into a benchmark; a run of 8 short passages each
    (hints 0..3 alone, then 4 two-hint passages) plus 4 more below the reranking depth."""
    from inferqa.formats.benchmark import Benchmark
    from inferqa.construct import build_benchmark
    from inferqa.data import demo_path, load_questions

    out = tmp_path_factory.mktemp("demo-bench") / "bench"
    build_benchmark(load_questions(demo_path())[:3], out, top_k=5)
    bench = Benchmark(out)
    run = Run(tag="handmade")
    for qid in bench.questions:
        orders = [(0,), (1,), (2,), (3,), (0, 1), (2, 3), (4, 1), (3, 0), (4,), (1, 2), (2, 4), (0, 4)]
        run[qid] = [(passage_id(qid, o, 5), float(-i)) for i, o in enumerate(orders)]
    return bench, run


def _check_kept(out: Run, run: Run, depth: int) -> None:
    for qid in run:
        assert sorted(p for p, _ in out[qid]) == sorted(p for p, _ in run[qid])
        assert [p for p, _ in out[qid][depth:]] == [p for p, _ in run[qid][depth:]]
        scores = [s for _, s in out[qid]]
        assert all(math.isfinite(s) for s in scores) and scores == sorted(scores, reverse=True)


def test_smollm2_pointwise(smollm2, demo):
    bench, run = demo
    rr = get_reranker("llm-pointwise", llm=smollm2)
    before = smollm2.stats.misses
    out = rr.rerank(run, bench, depth=DEPTH)
    _check_kept(out, run, DEPTH)
    misses = smollm2.stats.misses
    assert misses - before == 2 * DEPTH * len(run)  # one " yes" and one " no" per passage
    # the score is the model's: recompute one directly on the uncached backend
    qid = next(iter(run))
    pid, score = out[qid][0]
    prompt = POINTWISE_PROMPT.format(query=bench.questions[qid].text, passage=bench.passage_text(pid))
    direct = smollm2.inner.logprob(prompt, " yes") - smollm2.inner.logprob(prompt, " no")
    assert score == pytest.approx(direct, abs=1e-3)
    assert len({round(s, 4) for _, s in out[qid][:DEPTH]}) > 1  # depends on the passage
    # a rerun is served from the cache: the same run, no new model call
    assert rr.rerank(run, bench, depth=DEPTH) == out
    assert smollm2.stats.misses == misses


def test_smollm2_upr(smollm2, demo):
    bench, run = demo
    out = get_reranker("upr", llm=smollm2).rerank(run, bench, depth=DEPTH)
    _check_kept(out, run, DEPTH)
    qid = next(iter(run))
    pid, score = out[qid][DEPTH - 1]  # the last reranked passage
    direct = smollm2.inner.logprob(UPR_PROMPT.format(passage=bench.passage_text(pid)),
                                   " " + bench.questions[qid].text)
    assert score == pytest.approx(direct, abs=1e-3) and score < 0


def test_smollm2_listwise_one_window(smollm2, demo):
    bench, run = demo
    qid = next(iter(run))
    rr = get_reranker("llm-listwise", llm=smollm2)  # window 20 > depth: one window
    before = smollm2.stats.misses
    out = rr.rerank(run, bench, depth=DEPTH, qids=[qid])
    assert smollm2.stats.misses == before + 1  # one chat call
    _check_kept(out, Run({qid: run[qid]}), DEPTH)
    assert [s for _, s in out[qid][:DEPTH]] == [float(DEPTH - i) for i in range(DEPTH)]
