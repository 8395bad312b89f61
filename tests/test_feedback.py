"""Feedback while commands run: progress bars that end at their total (cache hits counted,
one step per prompt), and models named by hub id that fail fast offline."""

from __future__ import annotations

import io
import itertools
import socket

import pytest

from inferqa.formats.benchmark import Benchmark
from inferqa.data import demo_path
from inferqa.errors import InputError
from inferqa.llm.base import LLM, GenerationParams
from inferqa.formats import Run
from conftest import one_line_error, run_cli


@pytest.fixture(scope="module")
def bench(bench_factory) -> Benchmark:
    return bench_factory(4)


# -- progress bars ---------------------------------------------------------------------------

class Bars:
    """Stands in for inferqa.progress.counter: real tqdm bars, always counting, into a buffer."""

    def __init__(self):
        from inferqa import progress

        self.real, self.bars = progress.counter, []

    def __call__(self, total, desc, unit, enabled, **options):
        stream = io.StringIO()
        bar = self.real(total, desc, unit, True, file=stream, **options)
        bar.stream, bar.updates, update = stream, [], bar.update
        bar.update = lambda n=1: (bar.updates.append(n), update(n))[1]
        self.bars.append(bar)
        return bar


@pytest.fixture
def bars(monkeypatch):
    import inferqa.progress
    import inferqa.reading.run
    import inferqa.scale.backends

    rec = Bars()
    for mod in (inferqa.progress, inferqa.reading.run, inferqa.scale.backends):
        monkeypatch.setattr(mod, "counter", rec)
    ticks = itertools.count(0.0, 60.0)  # a minute per reading: past the quiet start of a log's lines at once
    monkeypatch.setattr(inferqa.progress, "_clock", lambda: next(ticks))
    return rec


class EchoLLM(LLM):
    backend, model, mode = "fake", "echo", "chat"

    def complete(self, prompts, params=GenerationParams()):
        return [p[-12:] for p in prompts]

    def chat(self, conversations, params=GenerationParams()):
        return [c[-1]["content"][-12:] for c in conversations]

    def logprob(self, prompt, continuation):
        return -float(len(prompt) % 7)


def _first_run(bench: Benchmark) -> Run:
    return Run({q: [(pid, 10.0 - i) for i, pid in enumerate(list(bench.qrels[q])[:6])] for q in bench.questions})


def test_rerank_bar_reaches_its_total(bench, bars):
    from inferqa.reranking import rerank_run

    run = _first_run(bench)
    rerank_run(run, bench, "llm-pointwise", depth=4, options={"llm": EchoLLM()}, progress=True)
    (bar,) = bars.bars
    assert bar.total == len(run) == bar.n and bar.updates == [1] * len(run)
    assert f"{len(run)}/{len(run)}" in bar.stream.getvalue()


def test_imap_bar_reaches_its_total_when_the_caller_stops_at_the_last_item(bars):
    from inferqa.scale.backends import imap_batches

    items = list(range(10))
    got = [x for _, x in zip(items, imap_batches(items, lambda: lambda b: [i * 2 for i in b], batch_size=4))]
    assert got == [i * 2 for i in items] and bars.bars[0].n == 10


def test_reading_bar_counts_cache_hits_prompt_by_prompt(bench, bars, tmp_path):
    from inferqa.llm import CachedLLM, LLMCache
    from inferqa.reading import read_with_llm

    run = _first_run(bench)
    llm = CachedLLM(EchoLLM(), LLMCache(tmp_path / "c.sqlite"))
    first = read_with_llm(bench, run, llm, ["union_norm"], [1, 3], progress=True)
    asked = llm.stats.misses
    assert asked > len(run) and llm.stats.hits == 0
    again = read_with_llm(bench, run, llm, ["union_norm"], [1, 3], progress=True)
    assert again == first and llm.stats.misses == asked and llm.stats.hits == asked  # all from the cache
    for bar in bars.bars:
        assert bar.total == bar.n == asked and bar.updates == [1] * asked  # one step per prompt
        assert f"{asked}/{asked}" in bar.stream.getvalue()


def test_bm25_search_bar_reaches_its_total(bench, bars):
    from inferqa.retrieve import get_retriever, question_queries

    r = get_retriever("bm25", show_progress=True)
    r.index(bench)
    queries = question_queries(bench)
    r.search(queries, 5)
    bar = bars.bars[-1]
    assert bar.total == bar.n == len(queries)


# -- models by hub id, offline ---------------------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]  # closed again on leaving: a connection is refused


def test_offline_switch_is_read_one_way_by_models_and_download(monkeypatch):
    from inferqa.data.download import check_online
    from inferqa.models import env_on, hub_model

    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    for value, on in (("1", True), ("TRUE", True), (" yes ", True), ("On", True),
                      ("0", False), ("off", False), ("", False), ("2", False)):
        monkeypatch.setenv("HF_HUB_OFFLINE", value)
        assert env_on("HF_HUB_OFFLINE") is on, value
    monkeypatch.setenv("HF_HUB_OFFLINE", " Yes ")
    with pytest.raises(InputError, match="HF_HUB_OFFLINE is set"):
        hub_model("inferqa-tests/no-such-model")
    with pytest.raises(InputError, match="HF_HUB_OFFLINE is set"):
        check_online("http://127.0.0.1:9")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.setenv("TRANSFORMERS_OFFLINE", "on")
    assert env_on("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE") and not env_on("HF_HUB_OFFLINE")


def test_hub_id_offline_fails_in_one_line(monkeypatch):
    from inferqa.models import hub_model

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    with pytest.raises(InputError, match="not in the local Hugging Face cache and HF_HUB_OFFLINE is set"):
        hub_model("inferqa-tests/no-such-model")
    monkeypatch.delenv("HF_HUB_OFFLINE")
    monkeypatch.delenv("TRANSFORMERS_OFFLINE", raising=False)
    monkeypatch.setenv("HF_ENDPOINT", f"http://127.0.0.1:{_closed_port()}")
    with pytest.raises(InputError, match=r"127\.0\.0\.1 cannot be reached \(Connection refused\)"):
        hub_model("inferqa-tests/no-such-model")
    assert hub_model(str(demo_path())) == str(demo_path())  # a path is never looked up


@pytest.mark.parametrize("cmd", [
    ("index", "{bench}", "--retriever", "dense", "--model", "inferqa-tests/no-such-model"),
    ("rerank", "{run}", "--bench", "{bench}", "--reranker", "cross-encoder", "--model",
     "inferqa-tests/no-such-model", "--out", "{out}"),
])
def test_cli_offline_hub_id_is_one_line_and_exit_2(cmd, bench, monkeypatch, capsys, tmp_path):
    pytest.importorskip("sentence_transformers")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    run = tmp_path / "r.trec"
    _first_run(bench).to_file(run)
    args = [a.format(bench=bench.path, run=run, out=tmp_path / "o.trec") for a in cmd]
    code, _, err = run_cli(monkeypatch, capsys, *args)
    one_line_error(code, err, "inferqa-tests/no-such-model", "HF_HUB_OFFLINE")
    assert not (tmp_path / "o.trec").exists()


def test_offline_hub_id_fails_before_the_model_library_is_imported(tmp_path):
    """Importing sentence-transformers or transformers takes most of the wait: the check comes first."""
    import os
    import subprocess
    import sys

    code = ("import sys\n"
            "from inferqa.errors import InputError\n"
            "from inferqa.retrieve.dense import load_encoder\n"
            "from inferqa.llm import load_llm\n"
            "for load in (load_encoder, lambda m: load_llm('transformers:' + m, cache=None)):\n"
            "    try:\n"
            "        load('inferqa-tests/no-such-model')\n"
            "    except InputError as exc:\n"
            "        print(exc)\n"
            "print(sorted(m for m in ('sentence_transformers', 'transformers') if m in sys.modules))\n")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    lines = out.stdout.splitlines()
    assert len(lines) == 3 and all("HF_HUB_OFFLINE is set" in ln for ln in lines[:2]), out.stderr
    assert lines[2] == "[]"
