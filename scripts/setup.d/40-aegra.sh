#!/usr/bin/env bash
# Aegra (the open-source Agent Protocol server, PyPI aegra-api) with planwerk, in its own virtualenv .aegra-venv:
# Aegra's pins (fastapi, sqlalchemy, asyncpg, opentelemetry, ...) stay out of planwerk's .venv. scripts/cluster.sh
# serves planwerk's graph with it on PostgreSQL; tests/cluster drives that. Idempotent: re-installs only when
# pyproject.toml or this script changed.
# Used by the cluster tests; scripts/cluster.sh installs it on first use.
# setup-for: all
set -euo pipefail
cd "$(dirname "$0")/../.."

AEGRA_VERSION=0.6.0
VENV=${PLANWERK_AEGRA_VENV:-.aegra-venv}
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3

stamp="$VENV/.planwerk-aegra-installed"
want=$(cat pyproject.toml scripts/setup.d/40-aegra.sh | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  echo "  aegra-api $AEGRA_VERSION already in $VENV"
  exit 0
fi
[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install --disable-pip-version-check -q)
# The CPU build of torch first (a bare "torch" would pull a multi-GB CUDA build), then planwerk with its local
# model stack, then Aegra; xgrammar without its GPU-only triton dependency, as scripts/setup.sh does.
"${pip[@]}" "torch==2.13.0"
# greenlet: SQLAlchemy's asyncio layer needs it and aegra-api 0.6.0 does not require it (its start fails without).
"${pip[@]}" -e ".[local]" "aegra-api==$AEGRA_VERSION" greenlet
"${pip[@]}" --no-deps "xgrammar==0.2.8" "apache-tvm-ffi>=0.1"
echo "$want" > "$stamp"
echo "  aegra-api $AEGRA_VERSION and planwerk in $VENV"
