#!/usr/bin/env bash
# planwerk on Aegra (the open-source Agent Protocol server) with PostgreSQL, all on loopback:
#
#   bash scripts/cluster.sh up [--instances N]   install what is missing, start PostgreSQL and N (default 2) Aegra
#                                                instances, wait until they answer, print ONE JSON line:
#                                                {"instances": ["http://127.0.0.1:P1", ...], "postgres": "...", ...}
#   bash scripts/cluster.sh down                 stop what `up` started (pid files in the state folder), nothing else
#   bash scripts/cluster.sh status               the JSON line if the cluster is up (exit 0), else exit 1
#
# Exit codes: 0 done, 1 failed (the message says why), 3 a prerequisite (PostgreSQL, Aegra) is missing and could not
# be installed.
#
# State (PostgreSQL data, pid files, logs) lives in $PLANWERK_CLUSTER_DIR (default .cluster in the repo); `down`
# keeps the data, so threads survive a restart; delete the folder to start afresh.
#
# Security: PostgreSQL requires a password (scram-sha-256, also on its socket), generated once into
# $STATE/postgres-password (mode 600) and handed to Aegra in its environment, never on a command line. Aegra checks
# bearer JWTs (planwerk.serving.auth, see docs/serving.md "Security"): PLANWERK_JWT_SECRET / PLANWERK_JWKS /
# PLANWERK_JWT_AUDIENCE / PLANWERK_AUTH from the environment of `up` if set, else a secret generated once into
# $STATE/jwt-secret (mode 600); the JSON line names both files. An instance that serves a request without a token
# (Aegra falls back to anonymous access when it cannot load the auth module) is stopped and `up` fails. Aegra 0.6.0 has no Redis queue:
# each instance runs the runs it was asked to start, so there is no Redis to start. Both commands are idempotent.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"

STATE=$(mkdir -p "${PLANWERK_CLUSTER_DIR:-$ROOT/.cluster}" && cd "${PLANWERK_CLUSTER_DIR:-$ROOT/.cluster}" && pwd)
VENV=${PLANWERK_AEGRA_VENV:-$ROOT/.aegra-venv}
PG_DIR="$STATE/postgres"
READY_TIMEOUT_S=${PLANWERK_CLUSTER_READY_TIMEOUT_S:-180}
STOP_TIMEOUT_S=20

say() { echo "cluster: $*" >&2; }
die() { echo "cluster: error: $*" >&2; exit 1; }
# Exit code 3: a prerequisite is missing and could not be installed here (tests skip on it, saying why).
unavailable() { echo "cluster: unavailable: $*" >&2; exit 3; }

usage() {
  die "usage: bash scripts/cluster.sh up [--instances N] | down | status (got: $*)"
}

free_port() {
  "$VENV/bin/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pid_alive() {  # pid -> whether it runs; a zombie (dead, not yet reaped by init) does not
  local state
  kill -0 "$1" 2>/dev/null || return 1
  state=$(ps -o stat= -p "$1" 2>/dev/null) || return 0  # no ps: kill -0 has to do
  [ -n "$state" ] && [ "${state#Z}" = "$state" ]
}

alive() {  # pid file -> whether its process runs
  [ -f "$1" ] && pid_alive "$(cat "$1")"
}

pg_bindir() {
  local found
  if found=$(command -v initdb 2>/dev/null); then dirname "$(readlink -f "$found")"; return; fi
  found=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n | tail -1 || true)
  [ -n "$found" ] && echo "$found"
}

# initdb and postgres refuse to run as root: root runs them as the Debian package's "postgres" user.
as_pg() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

install_missing() {
  if [ -z "$(pg_bindir)" ]; then
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
      say "apt-get install postgresql"
      apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
    fi
    [ -n "$(pg_bindir)" ] \
      || unavailable "the PostgreSQL server (initdb) is not installed and could not be: apt-get install postgresql"
    [ "$(id -u)" != 0 ] || id postgres >/dev/null 2>&1 \
      || unavailable "running as root and there is no 'postgres' user to run the server: apt-get install postgresql"
  fi
  if [ ! -x "$VENV/bin/python" ] || ! "$VENV/bin/python" -c 'import aegra_api, greenlet, planwerk' 2>/dev/null; then
    say "installing Aegra and planwerk into $VENV once (scripts/setup.d/40-aegra.sh: torch CPU, planwerk's model stack, aegra-api; a few minutes)"
    local started
    started=$(date +%s)
    PLANWERK_AEGRA_VENV="$VENV" bash "$ROOT/scripts/setup.d/40-aegra.sh" >&2 \
      || unavailable "could not install Aegra into $VENV (scripts/setup.d/40-aegra.sh failed; see above)"
    say "installed Aegra after $(($(date +%s) - started)) s"
  fi
}

start_postgres() {
  local bindir port
  bindir=$(pg_bindir)
  if alive "$STATE/postgres.pid.ours" && [ -f "$STATE/postgres.port" ]; then return; fi
  mkdir -p "$PG_DIR"
  [ "$(id -u)" = 0 ] && chown postgres: "$PG_DIR"
  if [ ! -f "$PG_DIR/data/PG_VERSION" ]; then
    secret_file "$STATE/postgres-password"
    # initdb runs as the server's user: it must read the password file (root reads it anyway).
    [ "$(id -u)" = 0 ] && chown postgres: "$STATE/postgres-password"
    say "initdb $PG_DIR/data (password authentication, scram-sha-256)"
    as_pg "$bindir/initdb" -D "$PG_DIR/data" -U planwerk -A scram-sha-256 --pwfile="$STATE/postgres-password" \
      -E UTF8 >"$STATE/initdb.log" 2>&1 || die "initdb failed: $(tail -5 "$STATE/initdb.log")"
  fi
  [ -s "$STATE/postgres-password" ] && ! grep -q '^[^#]*trust' "$PG_DIR/data/pg_hba.conf" \
    || die "the PostgreSQL data in $PG_DIR was made without a password (trust authentication, before this version): \
delete $STATE to start afresh"
  export PGPASSWORD
  PGPASSWORD=$(cat "$STATE/postgres-password")
  port=$(free_port)
  say "PostgreSQL on 127.0.0.1:$port"
  as_pg "$bindir/pg_ctl" -D "$PG_DIR/data" -l "$PG_DIR/server.log" -w -t 60 \
    -o "-p $port -k $PG_DIR -c listen_addresses=127.0.0.1 -c max_connections=200" start >/dev/null \
    || die "PostgreSQL did not start: $(tail -5 "$PG_DIR/server.log")"
  echo "$port" > "$STATE/postgres.port"
  head -1 "$PG_DIR/data/postmaster.pid" > "$STATE/postgres.pid.ours"
  if ! "$bindir/psql" -h 127.0.0.1 -p "$port" -U planwerk -d postgres -tAc \
      "SELECT 1 FROM pg_database WHERE datname = 'aegra'" | grep -q 1; then
    "$bindir/createdb" -h 127.0.0.1 -p "$port" -U planwerk aegra
  fi
}

secret_file() {  # path: a random secret (URL-safe), made once, readable by its owner only
  [ -s "$1" ] && return
  (umask 077 && "$VENV/bin/python" -c 'import secrets; print(secrets.token_urlsafe(32))' > "$1")
  chmod 600 "$1"
}

jwt_settings() {  # Aegra's auth: the operator's settings from the environment, else the state folder's secret
  if [ -z "${PLANWERK_JWT_SECRET:-}${PLANWERK_JWKS:-}" ] && [ "${PLANWERK_AUTH:-jwt}" != off ]; then
    secret_file "$STATE/jwt-secret"
    PLANWERK_JWT_SECRET=$(cat "$STATE/jwt-secret")
    export PLANWERK_JWT_SECRET
  fi
}

wait_ready() {  # url pid log
  "$VENV/bin/python" - "$1" "$2" "$3" "$READY_TIMEOUT_S" <<'PY' || exit 1
import os, sys, time, urllib.request
url, pid, log, limit = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
deadline = time.monotonic() + limit
while time.monotonic() < deadline:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        tail = open(log, errors="replace").read()[-3000:]
        sys.exit(f"cluster: error: the Aegra instance at {url} exited during start:\n{tail}")
    try:
        with urllib.request.urlopen(f"{url}/ready", timeout=2) as answer:
            if answer.status == 200:
                sys.exit(0)
    except OSError:
        pass
    time.sleep(0.2)
sys.exit(f"cluster: error: {url}/ready did not answer within {limit:g} s (log: {log})")
PY
}

check_auth() {  # url pid-file: Aegra 0.6.0 serves everyone anonymously when it cannot load aegra.json's auth module
  [ "${PLANWERK_AUTH:-jwt}" = off ] && return
  "$VENV/bin/python" - "$1" <<'PY' || { stop_pidfile "$2"; exit 1; }
import sys, urllib.error, urllib.request
url = sys.argv[1]
request = urllib.request.Request(f"{url}/threads/search", data=b"{}", headers={"content-type": "application/json"})
try:
    urllib.request.urlopen(request, timeout=10)
except urllib.error.HTTPError as error:
    if error.code == 401:
        sys.exit(0)
    sys.exit(f"cluster: error: {url} answered a request without a token with HTTP {error.code}, expected 401")
sys.exit(f"cluster: error: {url} served a request without a token: Aegra did not load planwerk.serving.auth (see its "
         "log); the instance was stopped")
PY
}

start_instance() {  # index
  local index=$1 port pid url
  if alive "$STATE/aegra-$index.pid" && [ -f "$STATE/aegra-$index.url" ]; then return; fi
  port=$(free_port)
  url="http://127.0.0.1:$port"
  say "Aegra instance $index on $url"
  # Its own session (setsid): `down` and a crash test stop the instance with the stdio MCP servers it spawned.
  # The password travels in the environment only (a command line is visible to every local user).
  DATABASE_URL="postgresql://planwerk:$(cat "$STATE/postgres-password")@127.0.0.1:$(cat "$STATE/postgres.port")/aegra" \
  AEGRA_CONFIG="$ROOT/aegra.json" HOST=127.0.0.1 PORT="$port" SERVER_URL="$url" \
  SQLALCHEMY_POOL_SIZE=10 SQLALCHEMY_MAX_OVERFLOW=20 LANGGRAPH_MAX_POOL_SIZE=20 \
  HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 \
    setsid "$VENV/bin/python" -m uvicorn aegra_api.main:app --host 127.0.0.1 --port "$port" \
    >>"$STATE/aegra-$index.log" 2>&1 < /dev/null &
  pid=$!
  echo "$pid" > "$STATE/aegra-$index.pid"
  wait_ready "$url" "$pid" "$STATE/aegra-$index.log" || { stop_pidfile "$STATE/aegra-$index.pid"; exit 1; }
  check_auth "$url" "$STATE/aegra-$index.pid"
  echo "$url" > "$STATE/aegra-$index.url"
}

stop_pidfile() {  # pid file: SIGTERM the process group, SIGKILL what is left after STOP_TIMEOUT_S
  local file=$1 pid waited=0
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if pid_alive "$pid"; then
    kill -TERM -- "-$pid" 2>/dev/null || kill -TERM "$pid" 2>/dev/null || true
    while pid_alive "$pid" && [ "$waited" -lt $((STOP_TIMEOUT_S * 5)) ]; do sleep 0.2; waited=$((waited + 1)); done
    kill -KILL -- "-$pid" 2>/dev/null || true
  fi
  rm -f "$file"
}

print_json() {
  local urls=() count
  count=$(cat "$STATE/instances")
  for index in $(seq 1 "$count"); do urls+=("$(cat "$STATE/aegra-$index.url")"); done
  "$VENV/bin/python" -c 'import json, sys
count, port, state = int(sys.argv[1]), sys.argv[2], sys.argv[3]
from pathlib import Path
jwt = Path(state, "jwt-secret")
print(json.dumps({"instances": sys.argv[4:], "postgres": f"postgresql://planwerk@127.0.0.1:{port}/aegra",
                  "postgres_password_file": str(Path(state, "postgres-password")),
                  "jwt_secret_file": str(jwt) if jwt.exists() else None,
                  "state": state, "engine": "aegra-api 0.6.0"}))' \
    "$count" "$(cat "$STATE/postgres.port")" "$STATE" "${urls[@]}"
}

is_up() {
  [ -f "$STATE/instances" ] || return 1
  alive "$STATE/postgres.pid.ours" || return 1
  for index in $(seq 1 "$(cat "$STATE/instances")"); do
    alive "$STATE/aegra-$index.pid" && [ -f "$STATE/aegra-$index.url" ] || return 1
  done
}

up() {
  local instances=2
  while [ $# -gt 0 ]; do
    case $1 in
      --instances) [ $# -ge 2 ] || usage "$@"; instances=$2; shift 2 ;;
      *) usage "$@" ;;
    esac
  done
  [[ $instances =~ ^[1-9][0-9]?$ ]] || die "--instances $instances: expected a whole number from 1 to 99"
  if [ -f "$STATE/instances" ] && [ "$(cat "$STATE/instances")" != "$instances" ] && is_up; then
    die "the cluster in $STATE runs $(cat "$STATE/instances") instances; run 'down' before 'up --instances $instances'"
  fi
  install_missing
  start_postgres
  jwt_settings
  echo "$instances" > "$STATE/instances"
  # One after the other: each runs Aegra's database migrations at start, which must not race.
  for index in $(seq 1 "$instances"); do start_instance "$index"; done
  print_json
}

down() {
  local bindir
  if [ -f "$STATE/instances" ]; then
    for file in "$STATE"/aegra-*.pid; do [ -e "$file" ] && stop_pidfile "$file"; done
    rm -f "$STATE"/aegra-*.url "$STATE/instances"
  fi
  if alive "$STATE/postgres.pid.ours"; then
    bindir=$(pg_bindir)
    as_pg "$bindir/pg_ctl" -D "$PG_DIR/data" -m fast -w -t 60 stop >/dev/null || die "pg_ctl stop failed"
  fi
  rm -f "$STATE/postgres.pid.ours" "$STATE/postgres.port"
  say "stopped (data kept in $STATE)"
}

case ${1:-} in
  up) shift; up "$@" ;;
  down) [ $# -eq 1 ] || usage "$@"; down ;;
  status) if is_up; then print_json; else say "not running"; exit 1; fi ;;
  *) usage "$@" ;;
esac
