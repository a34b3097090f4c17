#!/usr/bin/env bash
# llama.cpp's OpenAI-compatible server (llama-cpp-python[server] from PyPI, built from source) in its own virtualenv,
# .llama-venv/: it serves the packaged GGUF behind planwerk's `endpoint:` spec (tests/models/test_llama_server.py,
# python -m benchmarks.model_server). Its own venv because its server pins (starlette-context<0.4, its fastapi and
# uvicorn) are not ours to choose. Idempotent: skips when the pinned version is already importable.
# The build is for this CPU's vector units without -march=native: AVX2/FMA/F16C and AVX-512 (F, VBMI, VNNI, BF16) and
# AVX-VNNI each only when this CPU has them (AVX-512 evaluated prompts 1.76x faster here: BENCHMARKS.md §14); no GPU.
# Everything it builds or downloads stays in the project: no pip cache, build files under .llama-venv/.
# Used by the model-server tests; scripts/model-server.sh installs it on first use.
# setup-for: all
set -euo pipefail
cd "$(dirname "$0")/../.."

LLAMA_CPP_PYTHON_VERSION=0.3.36
VENV=.llama-venv
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3

if [ "${PLANWERK_SKIP_LLAMA_SERVER:-0}" = 1 ]; then
  echo "  skipped llama-cpp-python[server]: PLANWERK_SKIP_LLAMA_SERVER=1 (tests/models/test_llama_server.py will skip)"
  exit 0
fi
if [ -x "$VENV/bin/python" ] && "$VENV/bin/python" - "$LLAMA_CPP_PYTHON_VERSION" <<'EOF' >/dev/null 2>&1
import sys
import llama_cpp
import llama_cpp.server.app  # noqa: F401  (the [server] extra is there)
sys.exit(0 if llama_cpp.__version__ == sys.argv[1] else 1)
EOF
then
  echo "  llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION already in $VENV"
  exit 0
fi
if ! command -v cmake >/dev/null 2>&1 || ! command -v c++ >/dev/null 2>&1; then
  echo "  skipped llama-cpp-python[server]: cmake and a C++ compiler are needed to build it (apt-get install cmake g++)"
  exit 0
fi

cpu_flags() { grep -m1 '^flags' /proc/cpuinfo 2>/dev/null | grep -qw "$1" && echo ON || echo OFF; }
CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_CUDA=OFF -DGGML_METAL=OFF -DGGML_VULKAN=OFF -DGGML_HIP=OFF -DGGML_SYCL=OFF"
CMAKE_ARGS+=" -DGGML_OPENCL=OFF -DGGML_BLAS=OFF -DGGML_RPC=OFF -DLLAMA_CURL=OFF -DLLAVA_BUILD=OFF"
CMAKE_ARGS+=" -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF"
CMAKE_ARGS+=" -DGGML_AVX=$(cpu_flags avx) -DGGML_AVX2=$(cpu_flags avx2) -DGGML_FMA=$(cpu_flags fma)"
CMAKE_ARGS+=" -DGGML_F16C=$(cpu_flags f16c)"
CMAKE_ARGS+=" -DGGML_AVX512=$(cpu_flags avx512f) -DGGML_AVX512_VBMI=$(cpu_flags avx512vbmi)"
CMAKE_ARGS+=" -DGGML_AVX512_VNNI=$(cpu_flags avx512_vnni) -DGGML_AVX512_BF16=$(cpu_flags avx512_bf16)"
CMAKE_ARGS+=" -DGGML_AVX_VNNI=$(cpu_flags avx_vnni)"
export CMAKE_ARGS
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc)}
export PIP_NO_CACHE_DIR=1
mkdir -p "$VENV"
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
TMPDIR="$PWD/$VENV/.build-tmp"
export TMPDIR
mkdir -p "$TMPDIR"
start=$(date +%s)
echo "  building llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION into $VENV (compiles llama.cpp: minutes)"
"$VENV/bin/python" -m pip install --disable-pip-version-check -q --upgrade pip
"$VENV/bin/python" -m pip install --disable-pip-version-check -q --no-binary llama-cpp-python \
  "llama-cpp-python[server]==$LLAMA_CPP_PYTHON_VERSION"
rm -rf "$TMPDIR"
echo "  llama-cpp-python[server] in $VENV after $(($(date +%s) - start)) s"
