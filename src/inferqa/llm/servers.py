"""Local OpenAI-compatible servers for a GGUF model, for the `openai` backend's tests and
benchmarks (and for anyone who wants one on a laptop). Two kinds:
- `llama-cpp-python`: `python -m llama_cpp.server` (the `[llm]` extra's server deps). It
  serves one request at a time, reusing the previous prompt's prefix.
- `llama.cpp`: llama.cpp's own `llama-server` binary, with `parallel` slots batched together
  (continuous batching) and a per-slot prompt cache. `scripts/build_llama_server.sh` builds
  it from the llama.cpp sources inside the llama-cpp-python sdist (no other download).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from ..errors import InputError
from .llamacpp import FLASH_ATTN, N_CTX

SERVER_KINDS = ("llama-cpp-python", "llama.cpp")
PYTHON_SERVER_MODULES = ("uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def find_llama_server() -> Path | None:
    """llama.cpp's server: $INFERQA_LLAMA_SERVER, else beside this Python (the venv's bin/), else PATH."""
    candidates = [os.environ.get("INFERQA_LLAMA_SERVER"), Path(sys.executable).parent / "llama-server",
                  shutil.which("llama-server")]
    return next((Path(c) for c in candidates if c and Path(c).is_file() and os.access(c, os.X_OK)), None)


def missing_for(kind: str) -> str | None:
    """Why a server of `kind` cannot start here, or None."""
    if kind not in SERVER_KINDS:
        raise InputError(f"unknown server kind {kind!r} (have: {', '.join(SERVER_KINDS)})", field="server")
    if kind == "llama.cpp":
        return None if find_llama_server() else (
            "no llama-server binary (scripts/build_llama_server.sh builds one; or set INFERQA_LLAMA_SERVER)")
    gone = [m for m in ("llama_cpp", *PYTHON_SERVER_MODULES) if importlib.util.find_spec(m) is None]
    return f"llama-cpp-python's server needs {', '.join(gone)}" if gone else None


def _command(kind: str, model: Path, port: int, alias: str, n_ctx: int, threads: int, parallel: int,
             extra: tuple[str, ...], binary: Path | None = None) -> list[str]:
    if kind == "llama.cpp":
        # n_ctx is per slot: the server splits -c over its slots
        return [str(binary or find_llama_server()), "-m", str(model), "--host", "127.0.0.1", "--port", str(port),
                "--alias", alias, "-c", str(n_ctx * parallel), "-np", str(parallel), "-t", str(threads),
                "-tb", str(threads), "-fa", "on" if FLASH_ATTN.default else "off", "--no-webui", *extra]
    if parallel != 1:
        raise InputError("llama-cpp-python's server has one slot: parallel must be 1", field="parallel")
    return [sys.executable, "-m", "llama_cpp.server", "--model", str(model), "--host", "127.0.0.1",
            "--port", str(port), "--n_ctx", str(n_ctx), "--n_threads", str(threads),
            "--n_threads_batch", str(threads), "--model_alias", alias,
            "--flash_attn", str(FLASH_ATTN.default).lower(), *extra]  # as the in-process backend runs


@contextmanager
def local_server(model: str | os.PathLike, kind: str = "llama-cpp-python", *, alias: str = "smollm2",
                 n_ctx: int = N_CTX.default, threads: int = 1, parallel: int = 1, extra_args: tuple[str, ...] = (),
                 log: str | os.PathLike | None = None, start_timeout: float = 180.0) -> Iterator[str]:
    """Start a server for the GGUF `model`, yield its base URL (…/v1), stop it on exit.
    `extra_args` go to the server's command line as they are."""
    why = missing_for(kind)
    if why:
        raise InputError(f"cannot start a {kind} server: {why}", field="server")
    binary = find_llama_server() if kind == "llama.cpp" else None
    port = free_port()
    log_path = Path(log) if log else Path(os.environ.get("TMPDIR", "/tmp")) / f"inferqa-{kind}-server-{port}.log"
    with open(log_path, "wb") as log_fh:  # a file, not a pipe: a full pipe would block the server
        proc = subprocess.Popen(_command(kind, Path(model), port, alias, n_ctx, threads, parallel, extra_args, binary),
                                stdout=log_fh, stderr=subprocess.STDOUT)
        url = f"http://127.0.0.1:{port}/v1"
        try:
            deadline = time.time() + start_timeout
            while not _ready(url):
                if proc.poll() is not None or time.time() > deadline:
                    tail = log_path.read_text(errors="replace")[-500:].strip().splitlines()
                    raise InputError(f"the {kind} server did not start ({tail[-1] if tail else 'no output'})",
                                     file=log_path)
                time.sleep(0.3)
            yield url
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()


def _ready(url: str) -> bool:
    try:
        # llama-server answers 503 while the model loads; /models then lists it
        with urllib.request.urlopen(f"{url}/models", timeout=2) as r:
            return r.status == 200
    except OSError:
        return False
