#!/usr/bin/env bash
# Set up, then run the whole test suite (what CI runs).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=true
unset LANGSMITH_API_KEY LANGCHAIN_API_KEY LANGSMITH_TRACING LANGCHAIN_TRACING_V2 || true
# Lint and formatting are part of the test command: a red ruff is a red CI.
.venv/bin/ruff check .
.venv/bin/ruff format --check .
exec .venv/bin/python -m pytest "$@"
