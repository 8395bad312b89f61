"""Local OpenAI-compatible servers (llm/servers.py): finding llama.cpp's binary, refusing
what a server kind cannot do, and one clear line when a server does not start."""

from __future__ import annotations

import pytest

from inferqa.errors import InputError
from inferqa.llm import servers


def _fake_binary(tmp_path, body: str):
    f = tmp_path / "llama-server"
    f.write_text(f"#!/bin/sh\n{body}\n")
    f.chmod(0o755)
    return f


def test_llama_server_found_by_env_then_missing(tmp_path, monkeypatch):
    fake = _fake_binary(tmp_path, "exit 0")
    monkeypatch.setenv("INFERQA_LLAMA_SERVER", str(fake))
    assert servers.find_llama_server() == fake and servers.missing_for("llama.cpp") is None
    fake.chmod(0o644)  # not executable: not a server
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    monkeypatch.setattr(servers.sys, "executable", str(tmp_path / "python"))
    assert servers.find_llama_server() is None
    assert "build_llama_server.sh" in servers.missing_for("llama.cpp")


def test_a_server_that_exits_is_one_line_naming_its_log(tmp_path, monkeypatch):
    monkeypatch.setenv("INFERQA_LLAMA_SERVER", str(_fake_binary(tmp_path, "echo 'error: failed to load model'; exit 1")))
    log = tmp_path / "server.log"
    with pytest.raises(InputError) as err:
        with servers.local_server(tmp_path / "m.gguf", "llama.cpp", parallel=2, log=log):
            pass
    msg = str(err.value)
    assert "did not start (error: failed to load model)" in msg and str(log) in msg and "\n" not in msg


def test_what_a_kind_cannot_do_is_refused(tmp_path, monkeypatch):
    with pytest.raises(InputError, match="unknown server kind 'vllm'"):
        servers.missing_for("vllm")
    with pytest.raises(InputError, match="one slot"):
        servers._command("llama-cpp-python", tmp_path / "m.gguf", 1, "m", 512, 1, 4, ())
    cmd = servers._command("llama.cpp", tmp_path / "m.gguf", 8080, "m", 512, 2, 4, ("--x",))
    # the context is per slot: llama-server splits -c over its slots
    assert cmd[cmd.index("-c") + 1] == "2048" and cmd[cmd.index("-np") + 1] == "4" and cmd[-1] == "--x"
