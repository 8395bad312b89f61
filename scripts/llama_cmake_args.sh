# Sourced by install.sh and build_llama_server.sh: sets LLAMA_CMAKE_ARGS for a native llama.cpp
# build without AMX. -march=native turns AMX on where the CPU has it, and a kernel or sandbox that
# does not grant AMX to the process then kills the first decode with SIGILL.
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=ON"
_noamx="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
if [ "$(uname -m)" = x86_64 ] && echo 'int main(void){return 0;}' | ${CC:-cc} $_noamx -x c -o /dev/null - 2>/dev/null; then
  LLAMA_CMAKE_ARGS="$LLAMA_CMAKE_ARGS -DCMAKE_C_FLAGS='$_noamx' -DCMAKE_CXX_FLAGS='$_noamx'"
fi
