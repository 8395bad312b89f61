"""The SQLite LLM cache: keys, hit/miss counts, and resume after kill -9 with no repeated call."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from inferqa.llm import CachedLLM, GenerationParams, default_cache_path, load_llm
from inferqa.llm.base import LLM


class Recording(LLM):
    """A deterministic backend double that records what reaches it."""
    backend, model = "recording", "v1"

    def __init__(self):
        self.calls = []

    def complete(self, prompts, params=GenerationParams()):
        self.calls += [("complete", p) for p in prompts]
        return [p[::-1][: params.max_tokens] for p in prompts]

    def chat(self, conversations, params=GenerationParams()):
        self.calls += [("chat", c[-1]["content"]) for c in conversations]
        return [c[-1]["content"].upper() for c in conversations]

    def logprob(self, prompt, continuation):
        self.calls.append(("logprob", prompt + "|" + continuation))
        return -float(len(continuation))


def test_hits_misses_and_keys(tmp_path):
    inner = Recording()
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    assert llm.complete(["abc", "xyz", "abc"]) == ["cba", "zyx", "cba"]
    assert (llm.stats.hits, llm.stats.misses) == (1, 2)  # the repeat inside one batch is asked once
    assert llm.complete(["xyz"]) == ["zyx"]
    assert (llm.stats.hits, llm.stats.misses) == (2, 2)
    # other parameters, other kind, other model: other keys
    assert llm.complete(["xyz"], GenerationParams(max_tokens=2)) == ["zy"]
    assert llm.chat([[{"role": "user", "content": "xyz"}]]) == ["XYZ"]
    assert llm.logprobs([("p", "ab"), ("p", "abc")]) == [-2.0, -3.0]
    assert llm.logprob("p", "ab") == -2.0
    assert llm.stats.misses == 6 and len(inner.calls) == 6
    other = Recording()
    other.model = "v2"
    llm2 = CachedLLM(other, llm.cache)
    llm2.complete(["abc"])
    assert llm2.stats.misses == 1
    # a second process-like reopen of the same file sees every answer
    again = CachedLLM(Recording(), tmp_path / "c.sqlite")
    assert again.complete(["abc", "xyz"]) == ["cba", "zyx"]
    assert again.logprob("p", "abc") == -3.0
    assert again.stats.misses == 0 and again.inner.calls == []


def test_default_cache_path(monkeypatch, tmp_path):
    monkeypatch.delenv("INFERQA_LLM_CACHE", raising=False)
    monkeypatch.setenv("INFERQA_CACHE", str(tmp_path))
    assert default_cache_path() == tmp_path / "llm.sqlite"
    monkeypatch.setenv("INFERQA_LLM_CACHE", str(tmp_path / "x.db"))
    assert default_cache_path() == tmp_path / "x.db"


def test_load_llm_cache_none_and_unknown_spec(tmp_path):
    import pytest
    from inferqa.errors import InputError
    with pytest.raises(InputError, match="unknown LLM spec"):
        load_llm("nope:model", cache=tmp_path / "c.sqlite")
    with pytest.raises(InputError, match="GGUF model file not found"):
        load_llm(f"llama-cpp:{tmp_path / 'missing.gguf'}", cache=None)


SCRIPT = textwrap.dedent('''
    import json, sys, time
    from pathlib import Path
    from inferqa.formats.benchmark import Benchmark
    from inferqa.io import write_jsonl
    from inferqa.llm import CachedLLM
    from inferqa.llm.base import LLM, GenerationParams
    from inferqa.reading import read_with_llm
    from inferqa.formats import Run

    bench_dir, cache, log, out = map(Path, sys.argv[1:5])

    class Slow(LLM):
        backend, model, mode = "slow", "echo", "chat"
        def complete(self, prompts, params=GenerationParams()):
            raise AssertionError
        def chat(self, conversations, params=GenerationParams()):
            answers = []
            for conv in conversations:
                text = conv[-1]["content"]
                with open(log, "a") as fh:
                    fh.write(json.dumps(text) + "\\n"); fh.flush()
                time.sleep(0.05)
                first_hint = text.split("\\n")[1][2:]
                answers.append(first_hint.split()[0])
            return answers
        def logprob(self, prompt, continuation):
            raise AssertionError

    bench = Benchmark(bench_dir)
    run = Run({qid: [(pid, 1.0 / (i + 1)) for i, pid in enumerate(sorted(bench.qrels[qid])[:5])]
               for qid in bench.questions})
    llm = CachedLLM(Slow(), cache, chunk_size=2)
    rows = read_with_llm(bench, run, llm, ["union_norm", "union_freq", "concat"], [1, 2, 3, 5], progress=False)
    write_jsonl(out, rows)
    print(json.dumps({"hits": llm.stats.hits, "misses": llm.stats.misses}))
''')


def _tiny_bench(bench_factory, root: Path, n_questions: int = 4) -> Path:
    from inferqa.records import Hint, Question

    qs = [Question(id=f"t{i}", text=f"Which thing number {i}?", answers=[f"solution{i}"],
                   hints=[Hint(f"w{i}{c} clue {c} about thing {i}") for c in "abc"]) for i in range(n_questions)]
    return bench_factory(qs, root=root, split=(1.0, 0.0, 0.0)).path


def test_kill_9_then_resume_repeats_no_call(bench_factory, tmp_path):
    bench = _tiny_bench(bench_factory, tmp_path)
    script = tmp_path / "reader.py"
    script.write_text(SCRIPT)
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}

    def run(cache, log, out):
        return [sys.executable, str(script), str(bench), str(cache), str(log), str(out)]

    # Reference: uninterrupted run with its own cache.
    ref = subprocess.run(run(tmp_path / "ref.sqlite", tmp_path / "ref.log", tmp_path / "ref.jsonl"),
                         env=env, capture_output=True, text=True, timeout=120)
    assert ref.returncode == 0, ref.stderr
    n_prompts = len((tmp_path / "ref.log").read_text().splitlines())
    assert n_prompts >= 20

    # Killed run: kill -9 once about half of the prompts reached the backend.
    log, out, cache = tmp_path / "k.log", tmp_path / "k.jsonl", tmp_path / "k.sqlite"
    proc = subprocess.Popen(run(cache, log, out), env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline:
        if log.exists() and len(log.read_text().splitlines()) >= n_prompts // 2:
            break
        time.sleep(0.02)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    assert proc.returncode == -signal.SIGKILL
    assert not out.exists()  # nothing half-written
    before = log.read_text().splitlines()
    assert 0 < len(before) < n_prompts

    resumed = subprocess.run(run(cache, log, out), env=env, capture_output=True, text=True, timeout=120)
    assert resumed.returncode == 0, resumed.stderr
    after = log.read_text().splitlines()[len(before):]
    # Only the chunk in flight at the kill (chunk_size=2) may be asked again.
    repeated = set(before) & set(after)
    assert len(repeated) <= 2
    assert len(set(before) | set(after)) == n_prompts
    assert out.read_text() == (tmp_path / "ref.jsonl").read_text()

    # A third run is served entirely from the cache.
    third = subprocess.run(run(cache, log, tmp_path / "third.jsonl"), env=env, capture_output=True,
                           text=True, timeout=120)
    stats = json.loads(third.stdout.strip().splitlines()[-1])
    assert stats["misses"] == 0 and stats["hits"] > 0
    assert len(log.read_text().splitlines()) == len(before) + len(after)


def test_an_answer_cached_under_the_0_1_key_is_read_through_and_not_asked_again(tmp_path):
    import hashlib
    from dataclasses import asdict

    from inferqa.llm.cache import LLMCache, cache_key

    params = GenerationParams()
    payload = {"identity": Recording().identity, "kind": "complete", "request": "abc", "params": asdict(params)}
    # 0.1's key, by hand: the full sha256 of the sorted JSON, non-ASCII kept
    old = hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False, default=list).encode()).hexdigest()
    store = LLMCache(tmp_path / "c.sqlite")
    store.put_many([(old, "cached long ago")], payload["identity"], "complete")
    store.close()
    inner = Recording()
    llm = CachedLLM(inner, tmp_path / "c.sqlite")
    assert llm.complete(["abc"]) == ["cached long ago"] and inner.calls == [] and llm.stats.hits == 1
    new = cache_key(payload["identity"], "complete", "abc", params)
    assert len(new) == 16 and llm.cache.get_many([new]) == {new: "cached long ago"}  # copied under the new key
