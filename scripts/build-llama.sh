#!/usr/bin/env bash
# Build llama-cpp-python from source for this machine, without AMX, into the Python given
# as $1 (default: python3). It is run by `make` and works the same by hand.
#
# Why: GCC up to 13.2 mis-compiles ggml's AMX tile set-up, and a native build then
# segfaults on the first decode on Intel CPUs with AMX (Sapphire Rapids and later;
# llama.cpp issue #20824). So:
#   native   -march=native with -mno-amx-tile -mno-amx-int8 -mno-amx-bf16 (fastest; the
#            build runs on this CPU and on any with the same features)
#   portable no -march=native: AVX, AVX2, FMA, F16C when this CPU has them (runs on any
#            x86-64 CPU with those); chosen when the compiler lacks the -mno-amx flags
# Set RAGCTL_LLAMA_BUILD=native|portable to choose. Never a cached wheel built elsewhere:
# pip builds from the source distribution with --no-binary and --no-cache-dir.
# The flags used are written to <venv>/llama-build.txt, which `ragctl models` shows.
set -euo pipefail
PY=${1:-python3}
SPEC=${LLAMA_SPEC:-llama-cpp-python>=0.3}
NOAMX="-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
CC=${CC:-cc}

if [ "$(uname -m)" != x86_64 ]; then
    kind=default; cmake_args=""; cflags=""
else
    kind=${RAGCTL_LLAMA_BUILD:-}
    if [ -z "$kind" ]; then
        if echo 'int main(void){return 0;}' | $CC $NOAMX -x c - -o /dev/null 2>/dev/null; then
            kind=native
        else
            kind=portable
        fi
    fi
    case "$kind" in
        native)
            cmake_args="-DGGML_NATIVE=ON"; cflags="$NOAMX" ;;
        portable)
            cmake_args="-DGGML_NATIVE=OFF"; cflags=""
            cpu=$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)
            for f in avx avx2 fma f16c; do
                if [[ " $cpu " == *" $f "* ]]; then
                    cmake_args+=" -DGGML_${f^^}=ON"
                else
                    cmake_args+=" -DGGML_${f^^}=OFF"
                fi
            done ;;
        *) echo "RAGCTL_LLAMA_BUILD must be native or portable, not '$kind'" >&2; exit 2 ;;
    esac
fi

prefix=$("$PY" -c 'import sys; print(sys.prefix)')
record="$prefix/llama-build.txt"
want="build=$kind cmake_args=$cmake_args cflags=$cflags spec=$SPEC"
if [ -f "$record" ] && [ "$(cat "$record")" = "$want" ] && \
   "$PY" -c 'import llama_cpp' 2>/dev/null; then
    exit 0
fi
echo "building llama-cpp-python ($kind: $cmake_args ${cflags:+CFLAGS=$cflags}); about 6 minutes"
"$PY" -m pip --disable-pip-version-check -q uninstall -y llama-cpp-python 2>/dev/null || true
CMAKE_ARGS="$cmake_args" CFLAGS="${CFLAGS:-} $cflags" CXXFLAGS="${CXXFLAGS:-} $cflags" \
    "$PY" -m pip --disable-pip-version-check -q install \
    --no-binary llama-cpp-python --no-cache-dir "$SPEC"
echo "$want" > "$record"
