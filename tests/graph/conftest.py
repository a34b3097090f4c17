"""Graph tests run over every checkpointer backend: memory, SQLite and PostgreSQL (a private server)."""

from __future__ import annotations

import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from tests.serving.postgres import private_postgres


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """One private PostgreSQL server for the session (``.ci/apt-packages.txt`` installs it; no server: an error)."""
    with private_postgres() as uri:
        yield uri


@pytest.fixture(params=["memory", "sqlite", "postgres"])
async def checkpointer(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[BaseCheckpointSaver]:
    """A fresh checkpointer of each backend (PostgreSQL: a new database per test, so thread ids never collide)."""
    if request.param == "memory":
        yield InMemorySaver()
    elif request.param == "sqlite":
        async with AsyncSqliteSaver.from_conn_string(str(tmp_path / "threads.sqlite")) as saver:
            yield saver
    else:
        server = request.getfixturevalue("postgres_server")
        name = f"t_{uuid.uuid4().hex[:12]}"
        with psycopg.connect(server, autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        async with AsyncPostgresSaver.from_conn_string(server.rsplit("/", 1)[0] + f"/{name}") as saver:
            await saver.setup()
            yield saver


MATH_CONFIG = {
    "mcpServers": {
        "math": {"command": sys.executable, "args": ["-m", "planwerk.tools.servers.math", "stdio"], "timeout": 30}
    }
}
"""The bundled math MCP server over stdio."""


@pytest.fixture
async def math_tools() -> AsyncIterator[Any]:
    """A tool source on a fresh bundled math MCP server over stdio (its descriptions are what the catalog shows)."""
    from planwerk.tools.mcp import open_tools

    async with open_tools(MATH_CONFIG) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools
