"""Where the third-party MCP servers that scripts/setup.d/20-mcp-servers.sh installs are, for tests that use them."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NPM_BIN = ROOT / ".mcp-servers" / "node_modules" / ".bin"
NPM_SERVERS = ("mcp-server-everything", "mcp-server-filesystem", "mcp-server-memory")


def npm_server(name: str) -> str:
    """The path of the npm server ``name``'s command; the test is skipped, saying why, when npm or it is missing."""
    if name not in NPM_SERVERS:
        raise ValueError(f"unknown npm server {name!r}; installed by setup: {', '.join(NPM_SERVERS)}")
    if shutil.which("node") is None:
        pytest.skip("node is not installed (apt-get install nodejs npm, then bash scripts/setup.sh)")
    command = NPM_BIN / name
    if not command.exists():
        pytest.skip(f"{name} is not installed: run bash scripts/setup.d/20-mcp-servers.sh")
    return str(command)


def time_server() -> list[str]:
    """The command that starts ``mcp-server-time`` (PyPI, a dev dependency) over stdio with a fixed time zone."""
    return [sys.executable, "-m", "mcp_server_time", "--local-timezone", "Europe/Berlin"]
