#!/usr/bin/env bash
# Build llama.cpp's own server (llama-server: parallel slots, continuous batching) into
# $VENV/bin, from the llama.cpp sources vendored in the llama-cpp-python sdist of the
# installed version (PyPI is the only download). About 5 minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV=${VENV:-.venv}
OUT="$VENV/bin/llama-server"
[ -x "$OUT" ] && { echo "llama-server: $OUT is there"; exit 0; }
VERSION=$("$VENV/bin/python" -c "import importlib.metadata as m; print(m.version('llama_cpp_python'))")
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
"$VENV/bin/python" -m pip download -q --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d "$WORK"
tar xzf "$WORK"/llama_cpp_python-*.tar.gz -C "$WORK"
SRC=$(echo "$WORK"/llama_cpp_python-*/vendor/llama.cpp)
. scripts/llama_cmake_args.sh
# No web UI, no TLS, no downloads at run time: a local OpenAI-compatible endpoint only.
eval cmake -S "$SRC" -B "$WORK/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF "$LLAMA_CMAKE_ARGS" \
  -DLLAMA_BUILD_UI=OFF -DLLAMA_USE_PREBUILT_UI=OFF -DLLAMA_OPENSSL=OFF -DLLAMA_CURL=OFF \
  -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF > "$WORK/configure.log" 2>&1 \
  || { tail -30 "$WORK/configure.log"; exit 1; }
cmake --build "$WORK/build" --target llama-server -j "${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}" > "$WORK/build.log" 2>&1 \
  || { tail -30 "$WORK/build.log"; exit 1; }
install -m 755 "$WORK/build/bin/llama-server" "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "llama-server $VERSION → $OUT"
