#!/usr/bin/env bash
# Set up everything (scripts/setup.sh: on first use it installs the servers, the npm MCP servers, the model server
# and EmbeddingGemma, saying what and how long), then run every test tier (what CI runs). Arguments go to pytest:
# `bash scripts/test.sh tests/core -q` runs a part. A bare `pytest` runs the fast tier only (README, "Tests").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 LANGGRAPH_CLI_NO_ANALYTICS=1 LANGGRAPH_NO_VERSION_CHECK=true
unset LANGSMITH_API_KEY LANGCHAIN_API_KEY LANGSMITH_TRACING LANGCHAIN_TRACING_V2 || true
# Lint and formatting are part of the test command: a red ruff is a red CI.
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# One process (-n 0, not the fast tier's -n auto): each worker would load the real models and start PostgreSQL again.
exec .venv/bin/python -m pytest -n 0 --all-tiers "$@"
