"""`inferqa rerank` says where its scores came from: model calls computed (with their rate) and
those the LLM call cache answered; a rerun served from the cache computes none and gives no rate."""

from __future__ import annotations

import re
import zlib

from conftest import run_cli
from inferqa.llm.base import LLM, GenerationParams
from inferqa.registry import plugin


class HashLLM(LLM):
    """Deterministic stand-in: a log-probability is a hash of the request."""

    backend, model, mode = "hash-test", "hash", "chat"

    def complete(self, prompts, params=GenerationParams()):
        return ["yes" for _ in prompts]

    def chat(self, conversations, params=GenerationParams()):
        return ["yes" for _ in conversations]

    def logprob(self, prompt, continuation):
        return -(zlib.crc32((prompt + continuation).encode()) % 1000) / 100.0


def _calls(out: str) -> tuple[int, int, str]:
    m = re.search(r"model calls: ([\d,]+) computed, ([\d,]+) from the LLM cache, (.*)", out)
    assert m, out
    return int(m[1].replace(",", "")), int(m[2].replace(",", "")), m[3]


def test_a_rerun_served_by_the_cache_computes_no_call_and_gives_no_rate(bench_factory, scratch, tmp_path,
                                                                       monkeypatch, capsys):
    plugin("llm", "hash-test", target=False)(HashLLM)
    bench = bench_factory(3)
    run = {q: [(pid, float(-i)) for i, pid in enumerate(list(bench.qrels[q])[:5])] for q in bench.questions}
    from inferqa.formats import Run

    Run(run).to_file(tmp_path / "in.trec")
    args = ("rerank", tmp_path / "in.trec", "--bench", bench.path, "-r", "llm-pointwise", "--llm", "hash-test",
            "--depth", "4", "--cache", tmp_path / "calls.sqlite")
    # pointwise asks two log-probabilities (yes, no) per passage: 3 questions x 4 passages x 2
    code, out, err = run_cli(monkeypatch, capsys, *args, "-o", tmp_path / "first.trec")
    assert code == 0, err
    computed, cached, rate = _calls(out)
    assert (computed, cached) == (24, 0) and rate.endswith("computed calls/s")
    code, out, err = run_cli(monkeypatch, capsys, *args, "-o", tmp_path / "second.trec")
    assert code == 0, err
    computed, cached, rate = _calls(out)
    assert (computed, cached) == (0, 24) and rate.strip() == "none computed: no rate"
    assert "passages/s" not in out
    assert (tmp_path / "first.trec").read_text().split("\n")[0].split()[:5] == \
        (tmp_path / "second.trec").read_text().split("\n")[0].split()[:5]
