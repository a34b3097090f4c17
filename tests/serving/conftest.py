"""Helpers for the serving tests: a real ``langgraph dev`` server in a temp folder, replay files, MCP configs."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest
from langgraph_sdk import get_client
from langgraph_sdk.client import LangGraphClient

from planwerk.serving.tokens import mint_token
from tests.operator_env import temp_files_allowed
from tests.ports import start_server

ROOT = Path(__file__).resolve().parents[2]
LANGGRAPH = Path(sys.executable).parent / "langgraph"
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 20.0
OFFLINE_ENV = {
    "LANGGRAPH_CLI_NO_ANALYTICS": "1",
    "LANGGRAPH_NO_VERSION_CHECK": "true",
    "HF_HUB_OFFLINE": "1",
    "TRANSFORMERS_OFFLINE": "1",
    # Nothing loads at server start unless a test asks for it (planwerk.serving.warm): the packaged model and the
    # embedder would cost every test's server a minute of CPU.
    "PLANWERK_WARM_START": "none",
}
# Nothing may reach LangSmith, the checkpointer must be the SQLite file of the test, and auth is the tests' own.
DROPPED_ENV_PREFIXES = ("LANGSMITH_", "LANGCHAIN_")
DROPPED_ENV = {
    "PLANWERK_POSTGRES_URI",
    "DATABASE_URI",
    "PLANWERK_CHECKPOINT_DB",
    "PLANWERK_HOME",
    "PLANWERK_AUTH",
    "PLANWERK_JWT_SECRET",
    "PLANWERK_JWKS",
    "PLANWERK_JWT_AUDIENCE",
}
TEST_JWT_SECRET = "planwerk-tests-only-hs256-secret-0123456789"
"""The servers' ``PLANWERK_JWT_SECRET`` in the tests: auth is on (the default), as in a deployment."""
TEST_USER = "test-user"
"""Whom :func:`token` and :func:`client` act for unless told otherwise."""


def token(user: str = TEST_USER, *, operator: bool = False, **claims: object) -> str:
    """A valid bearer token of ``user`` for the test servers."""
    return mint_token(TEST_JWT_SECRET, user, operator=operator, **claims)


def auth_headers(user: str = TEST_USER, *, operator: bool = False) -> dict[str, str]:
    """The ``Authorization`` header of ``user`` for the test servers."""
    return {"Authorization": f"Bearer {token(user, operator=operator)}"}


def sdk_client(url: str, *, timeout: float = 60, user: str = TEST_USER, operator: bool = False) -> LangGraphClient:
    """A langgraph-sdk client of ``url`` acting as ``user`` (the operator role when ``operator``)."""
    return get_client(url=url, timeout=timeout, headers=auth_headers(user, operator=operator))


def server_env(folder: Path) -> dict[str, str]:
    """The dev server's environment: offline, no tracing, PLANWERK_HOME and the checkpoint DB under ``folder``,
    bearer tokens signed with :data:`TEST_JWT_SECRET`."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(DROPPED_ENV_PREFIXES) and k not in DROPPED_ENV}
    return {
        **env,
        **OFFLINE_ENV,
        "PLANWERK_JWT_SECRET": TEST_JWT_SECRET,
        "PLANWERK_HOME": str(folder / "home"),
        "PLANWERK_CHECKPOINT_DB": str(folder / "checkpoints.sqlite"),
        # Runs may name the tests' replay files and MCP configs (the server refuses files outside these folders).
        **temp_files_allowed(),
    }


def answers_ok(port: int) -> str | None:
    """The readiness probe of ``langgraph dev`` on ``port``: ``GET /ok`` answers 200 ``{"ok": true, ...}``."""
    try:
        reply = httpx.get(f"http://127.0.0.1:{port}/ok", timeout=1.0)
    except httpx.TransportError:
        return "no answer"
    try:
        answer = reply.json()
        ok = reply.status_code == 200 and isinstance(answer, dict) and answer.get("ok") is True
    except ValueError:
        ok = False
    return None if ok else f"GET /ok answered HTTP {reply.status_code} {reply.text[:200]!r}"


@dataclass
class DevServer:
    """``langgraph dev`` on the repo's langgraph.json, run in ``folder`` (its ``.langgraph_api`` lands there)."""

    folder: Path
    port: int = 0
    """0: a free port picked at :meth:`start` (another one if the port is taken before the server binds it); a
    given port is kept (a restart on the address of a server before it)."""
    extra_env: dict[str, str] = field(default_factory=dict)
    """Variables set on top of :func:`server_env` (e.g. ``PLANWERK_POSTGRES_URI``)."""
    config: Path = ROOT / "langgraph.json"
    """The ``langgraph.json`` to serve (a test may serve its own graph entry point)."""
    process: subprocess.Popen[bytes] | None = None
    startup_s: float = 0.0
    """Seconds from spawning the process until ``GET /ok`` answered."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.folder / "server.log"

    def start(self) -> DevServer:
        """Start the server and wait until it answers ``GET /ok`` from a listening socket of its own process group
        (:func:`tests.ports.start_server`); fails with the ports tried, the exit code and the log's tail if not."""
        if not LANGGRAPH.exists():
            pytest.fail(f"{LANGGRAPH} is missing: install planwerk with the serve extra (pip install -e '.[serve]')")
        command = [
            str(LANGGRAPH),
            "dev",
            "--no-browser",
            "--no-reload",
            "--host",
            "127.0.0.1",
        ]

        def spawn(port: int) -> subprocess.Popen[bytes]:
            with self.log.open("ab") as log:
                self.process = subprocess.Popen(
                    [*command, "--port", str(port), "--config", str(self.config)],
                    cwd=self.folder,
                    env={**server_env(self.folder), **self.extra_env},
                    stdout=log,
                    stderr=subprocess.STDOUT,
                    start_new_session=True,  # its own process group: MCP servers it spawned go down with it
                )
            return self.process

        started = start_server(
            spawn,
            answers_ok,
            what="langgraph dev",
            log=self.log,
            timeout_s=START_TIMEOUT_S,
            port=self.port or None,
            stop=lambda _process: self.kill(),  # the try's whole process group
        )
        self.port, self.process, self.startup_s = started.port, started.process, started.seconds
        return self

    def stop(self) -> bool:
        """SIGTERM, then wait (SIGKILL only if it does not stop in time); whether it shut down cleanly.

        uvicorn shuts down gracefully and then re-raises the signal, so a clean stop exits with -SIGTERM (or 0).
        """
        assert self.process is not None
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.kill()
                pytest.fail(f"langgraph dev did not stop within {STOP_TIMEOUT_S:g} s of SIGTERM:\n{self.tail()}")
        log = self.log.read_text(errors="replace")
        return self.process.returncode in (0, -signal.SIGTERM) and "Shutting down background workers" in log

    def kill(self) -> None:
        """SIGKILL the server's whole process group (a crash: nothing is flushed)."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=STOP_TIMEOUT_S)

    def tail(self, lines: int = 40) -> str:
        """The end of the server's log."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


@pytest.fixture
def dev_server_factory(tmp_path: Path) -> Iterator[type[DevServer]]:
    """Start servers with ``factory(folder).start()``; every one is stopped (or killed) at the end."""
    servers: list[DevServer] = []

    class Tracked(DevServer):
        def start(self) -> DevServer:
            servers.append(self)
            return super().start()

    yield Tracked
    for server in servers:
        server.kill()


def write_replay(path: Path, replies: list[str]) -> str:
    """Write a replay file and return its model spec (each test uses its own file: the model is cached per spec)."""
    path.write_text(json.dumps(replies, ensure_ascii=False), encoding="utf-8")
    return f"replay:{path}"


def write_math_config(path: Path) -> str:
    """An MCP config with only the bundled math server (stdio); returns its path."""
    config = {
        "mcpServers": {
            "math": {"command": "${PYTHON}", "args": ["-m", "planwerk.tools.servers.math", "stdio"], "timeout": 30}
        }
    }
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


def plan(*calls: dict, final: str | None = None) -> str:
    """A plan as the model would write it: one step per call."""
    return json.dumps({"steps": [{"description": c["name"], "tools": [c]} for c in calls], "final": final})


def add(call_id: str, a: float, b: float) -> dict:
    """A call of the math server's ``add``."""
    return {"id": call_id, "name": "add", "arguments": {"arg_0": a, "arg_1": b}}
