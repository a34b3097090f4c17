"""The cluster tests' fixtures: ``scripts/cluster.sh`` (Aegra + PostgreSQL) started once per module, MCP servers
over streamable HTTP (they outlive a killed Aegra instance), replay files and plans."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from planwerk.serving.tokens import mint_token
from tests.operator_env import temp_files_allowed
from tests.ports import mcp_named, start_server

ROOT = Path(__file__).resolve().parents[2]
CLUSTER_SH = ROOT / "scripts" / "cluster.sh"
COUNTER_SCRIPT = Path(__file__).parent / "counter_server.py"
UP_TIMEOUT_S = 600
"""Bounds a hang only: a machine without .aegra-venv installs it first (minutes)."""
DOWN_TIMEOUT_S = 120
MCP_START_TIMEOUT_S = 60
ANSWER = "2 + 3 = 5."
UNAVAILABLE_EXIT = 3
"""``cluster.sh``'s exit code when PostgreSQL or Aegra is missing and cannot be installed here."""
AUTH_ENV = ("PLANWERK_AUTH", "PLANWERK_JWT_SECRET", "PLANWERK_JWKS", "PLANWERK_JWT_AUDIENCE")
"""Not passed to ``cluster.sh``: the cluster makes its own JWT secret (``jwt_secret_file``), as by default."""
CLUSTER_USER = "cluster-user"


@dataclass(frozen=True)
class Cluster:
    """What ``cluster.sh up`` printed, and the state folder it ran in."""

    instances: tuple[str, ...]
    postgres: str
    """The connection URI without the password."""
    postgres_password_file: Path
    jwt_secret: str
    """The secret Aegra checks bearer tokens with (read from the ``jwt_secret_file`` it printed)."""
    state: Path

    def client(self, url: str, *, user: str = CLUSTER_USER, timeout: float = 120) -> LangGraphClient:
        """A langgraph-sdk client of instance ``url`` acting as ``user`` (a valid bearer token)."""
        token = mint_token(self.jwt_secret, user)
        return get_client(url=url, timeout=timeout, headers={"Authorization": f"Bearer {token}"})

    def pid(self, index: int) -> int:
        """The process id of instance ``index`` (0-based), from its pid file."""
        return int((self.state / f"aegra-{index + 1}.pid").read_text())

    def log_tail(self, index: int, chars: int = 3000) -> str:
        """The end of instance ``index``'s log (0-based), for failure messages."""
        log = self.state / f"aegra-{index + 1}.log"
        return f"--- {log}:\n" + (log.read_text(errors="replace")[-chars:] if log.exists() else "(none)")


def run_cluster(state: Path, *args: str, timeout_s: float) -> subprocess.CompletedProcess[str]:
    """Run ``scripts/cluster.sh`` with its state in ``state``."""
    # Aegra inherits this environment (less the shell's auth settings): runs may name the tests' replay files and MCP
    # configs (temp folder).
    inherited = {k: v for k, v in os.environ.items() if k not in AUTH_ENV}
    env = {**inherited, **temp_files_allowed(), "PLANWERK_CLUSTER_DIR": str(state)}
    return subprocess.run(
        ["bash", str(CLUSTER_SH), *args], env=env, capture_output=True, text=True, timeout=timeout_s, check=False
    )


def cluster_up(state: Path, *args: str) -> Cluster:
    """``cluster.sh up``; fails the test with the script's stderr when it does not come up."""
    done = run_cluster(state, "up", *args, timeout_s=UP_TIMEOUT_S)
    if done.returncode == UNAVAILABLE_EXIT:
        pytest.skip(f"no cluster on this machine: {done.stderr.strip().splitlines()[-1]}")
    if done.returncode != 0:
        pytest.fail(f"cluster.sh up failed ({done.returncode}):\n{done.stderr[-4000:]}")
    lines = done.stdout.strip().splitlines()
    assert len(lines) == 1, f"cluster.sh up must print one JSON line, got {done.stdout!r}"
    printed = json.loads(lines[0])
    return Cluster(
        instances=tuple(printed["instances"]),
        postgres=printed["postgres"],
        postgres_password_file=Path(printed["postgres_password_file"]),
        jwt_secret=Path(printed["jwt_secret_file"]).read_text(encoding="utf-8").strip(),
        state=state,
    )


def cluster_down(state: Path) -> None:
    """``cluster.sh down``; fails the test when it does not stop cleanly."""
    done = run_cluster(state, "down", timeout_s=DOWN_TIMEOUT_S)
    assert done.returncode == 0, done.stderr


@pytest.fixture(scope="module")
def cluster() -> Iterator[Cluster]:
    """PostgreSQL and two Aegra instances for the module, in a private state folder; stopped and removed after."""
    # mkdtemp, not pytest's tmp_path: as root, PostgreSQL runs as the postgres user, who cannot enter pytest's
    # private temp root.
    state = Path(tempfile.mkdtemp(prefix="planwerk-cluster-"))
    state.chmod(0o755)
    try:
        started = cluster_up(state)
        yield started
        cluster_down(state)
        for index in range(len(started.instances)):
            assert not (state / f"aegra-{index + 1}.pid").exists()
        assert not (state / "postgres.pid.ours").exists()
    finally:
        run_cluster(state, "down", timeout_s=DOWN_TIMEOUT_S)  # after a failure: still leave nothing running
        shutil.rmtree(state, ignore_errors=True)


@dataclass(frozen=True)
class HttpMcp:
    """An MCP server over streamable HTTP on loopback."""

    url: str
    process: subprocess.Popen[bytes]


def start_http_mcp(command: list[str], env: dict[str, str], log: Path, name: str) -> HttpMcp:
    """Start the MCP server ``name`` (``command`` gets ``http --port N``) and wait until it listens and answers.

    The port is picked before the server binds it: another process may take it in between, and its answers would
    pass for ours while our server exits (a crash test once waited 90 s in CI for calls to a counter that was never
    up). So the listening socket must be our process's and the endpoint must name ``name``; after a collision the
    server is started again on another port (:func:`tests.ports.start_server`)."""

    def spawn(port: int) -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            return subprocess.Popen(
                [*command, "http", "--port", str(port)], env={**os.environ, **env}, stdout=out, stderr=subprocess.STDOUT
            )

    server = start_server(
        spawn, mcp_named(name), what=f"MCP server {name} ({' '.join(command)})", log=log, timeout_s=MCP_START_TIMEOUT_S
    )
    return HttpMcp(url=f"http://127.0.0.1:{server.port}/mcp", process=server.process)


def stop_http_mcp(server: HttpMcp) -> None:
    """Stop an MCP server started by :func:`start_http_mcp`."""
    if server.process.poll() is None:
        server.process.send_signal(signal.SIGTERM)
        try:
            server.process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.process.kill()
            server.process.wait(timeout=20)


@dataclass(frozen=True)
class Tools:
    """The MCP servers the cluster's runs use: the bundled math server and the call counter, both over HTTP."""

    config: Path
    counter_log: Path

    def counts(self) -> dict[str, int]:
        """How many ``start``/``end`` lines each ``"<start|end> <key>"`` has in the counter's log."""
        found: dict[str, int] = {}
        if self.counter_log.exists():
            for line in self.counter_log.read_text(encoding="utf-8").splitlines():
                found[line] = found.get(line, 0) + 1
        return found


@pytest.fixture(scope="module")
def tools() -> Iterator[Tools]:
    """The math server and the counter over streamable HTTP, and an MCP config naming both."""
    folder = Path(tempfile.mkdtemp(prefix="planwerk-cluster-tools-"))
    counter_log = folder / "counter.log"
    math = start_http_mcp([sys.executable, "-m", "planwerk.tools.servers.math"], {}, folder / "math.log", "math")
    try:
        counter = start_http_mcp(
            [sys.executable, str(COUNTER_SCRIPT)],
            {"COUNTER_LOG": str(counter_log), "PYTHONPATH": str(ROOT)},
            folder / "counter.log.out",
            "counter",
        )
        try:
            config = folder / "mcp.json"
            servers = {"math": {"url": math.url, "timeout": 30}, "counter": {"url": counter.url, "timeout": 30}}
            config.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
            yield Tools(config=config, counter_log=counter_log)
        finally:
            stop_http_mcp(counter)
    finally:
        stop_http_mcp(math)
        shutil.rmtree(folder, ignore_errors=True)


def write_replay(path: Path, replies: list[str]) -> str:
    """Write a replay file and return its model spec: one file per run (an instance loads a spec afresh)."""
    path.write_text(json.dumps(replies, ensure_ascii=False), encoding="utf-8")
    return f"replay:{path}"


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    """One tool call of a plan."""
    return {"id": call_id, "name": name, "arguments": arguments}


def plan(*calls: dict[str, Any]) -> str:
    """A plan as the model would write it: one step per call."""
    return json.dumps({"steps": [{"description": c["name"], "tools": [c]} for c in calls], "final": None})


def context(tools: Tools, model: str, **overrides: Any) -> dict[str, Any]:
    """A run context: the math profile (no retrieval corpus) and the HTTP MCP servers."""
    return {
        "model": model,
        "profile": "math",
        "mcp_config": str(tools.config),
        "today": "2026-11-22",
        **overrides,
    }


def question(text: str) -> dict[str, Any]:
    """A run's input: one user message."""
    return {"messages": [{"role": "user", "content": text}]}
