"""Servers for the content, resource, progress and timeout tests: server-everything over stdio or streamable HTTP
(the real npm package), and a small FastMCP server for what server-everything does not send (audio, a 5 MB image).
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from planwerk.tools.servers.launch import free_port
from tests.third_party import npm_server

HERE = Path(__file__).parent
LOOPBACK = HERE / "loopback_listen.cjs"
"""Preloaded into node: the HTTP server listens on 127.0.0.1 only."""
MEDIA_SERVER = HERE / "content_media_server.py"
START_TIMEOUT_S = 60.0
"""Bounds a server start only (CI machines may be slow); a healthy start takes about a second."""


def everything_stdio(timeout_s: float = 30) -> dict[str, Any]:
    """The MCP config entry of server-everything over stdio."""
    return {"command": npm_server("mcp-server-everything"), "args": ["stdio"], "timeout": timeout_s}


def media_stdio(timeout_s: float = 30) -> dict[str, Any]:
    """The MCP config entry of the FastMCP media server over stdio."""
    return {"command": sys.executable, "args": [str(MEDIA_SERVER)], "timeout": timeout_s}


@contextlib.contextmanager
def everything_http(log_dir: Path) -> Iterator[str]:
    """server-everything over streamable HTTP on a free loopback port; yields its MCP URL; stopped at the end."""
    command = npm_server("mcp-server-everything")
    port = free_port()
    env = {**os.environ, "PORT": str(port), "NODE_OPTIONS": f"--require {LOOPBACK}"}
    log_path = log_dir / f"everything-http-{port}.log"
    with log_path.open("wb") as log:
        proc = subprocess.Popen([command, "streamableHttp"], env=env, stdout=log, stderr=log)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while True:  # until it listens; a server that exits fails at once
                if proc.poll() is not None:
                    pytest.fail(f"server-everything exited: {log_path.read_text(errors='replace')}")
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if time.monotonic() > deadline:
                        pytest.fail(f"server-everything did not listen within {START_TIMEOUT_S:g} s")
                    time.sleep(0.05)
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


@contextlib.contextmanager
def everything_config(transport: str, log_dir: Path, timeout_s: float = 30) -> Iterator[dict[str, Any]]:
    """An MCP config with server-everything as ``everything`` over ``transport`` (``stdio`` or ``http``)."""
    if transport == "stdio":
        yield {"mcpServers": {"everything": everything_stdio(timeout_s)}}
        return
    with everything_http(log_dir) as url:
        yield {"mcpServers": {"everything": {"url": url, "timeout": timeout_s}}}


def run_cli(args: list[str], home: Path) -> list[dict[str, Any]]:
    """``planwerk <args> --json`` in a subprocess; its events."""
    env = {**os.environ, "PLANWERK_HOME": str(home), "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-m", "planwerk.cli", *args, "--json"],
        capture_output=True,
        text=True,
        timeout=180,
        env=env,
    )
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def cli_files(tmp_path: Path, server: dict[str, Any], replies: list[str]) -> list[str]:
    """An MCP config with server-everything and a replay model; the CLI arguments naming them."""
    config, replay = tmp_path / "mcp.json", tmp_path / "replay.json"
    config.write_text(json.dumps({"mcpServers": {"everything": server}}))
    replay.write_text(json.dumps(replies))
    return [
        "--mcp-config",
        str(config),
        "--model",
        f"replay:{replay}",
        "--no-retrieval",
        "--db",
        str(tmp_path / "t.db"),
    ]
