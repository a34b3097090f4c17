"""Servers for the content, resource, progress and timeout tests: server-everything over stdio or streamable HTTP
(the real npm package), and a small FastMCP server for what server-everything does not send (audio, a 5 MB image).
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.ports import mcp_named, start_server
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


EVERYTHING_NAME = "mcp-servers/everything"
"""The ``serverInfo.name`` server-everything answers ``initialize`` with."""


@contextlib.contextmanager
def everything_http(log_dir: Path) -> Iterator[str]:
    """server-everything over streamable HTTP on a free loopback port; yields its MCP URL; stopped at the end.

    It counts as started when its process holds the listening socket and ``initialize`` names it; when another
    process took the port first, it is started again on another one (:mod:`tests.ports`)."""
    command = npm_server("mcp-server-everything")
    log_path = log_dir / "everything-http.log"

    def spawn(port: int) -> subprocess.Popen[bytes]:
        env = {**os.environ, "PORT": str(port), "NODE_OPTIONS": f"--require {LOOPBACK}"}
        with log_path.open("ab") as log:
            return subprocess.Popen([command, "streamableHttp"], env=env, stdout=log, stderr=log)

    server = start_server(
        spawn, mcp_named(EVERYTHING_NAME), what="server-everything", log=log_path, timeout_s=START_TIMEOUT_S
    )
    proc = server.process
    try:
        yield f"http://127.0.0.1:{server.port}/mcp"
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
