"""Shared fixtures: offline settings, a private PLANWERK_HOME, the fixtures folder."""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("LANGSMITH_TRACING", "false")

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    """The tests' fixture folder."""
    return FIXTURES


NOTES_SCRIPT = Path(__file__).parent / "tools" / "notes_server.py"
"""The note-store MCP server with a slow write (``tests/tools/notes_server.py``)."""


def notes_config(timeout_s: float = 20) -> dict[str, Any]:
    """MCP config for the notes server over stdio (its write delay comes from ``NOTES_WRITE_DELAY_S``)."""
    return {
        "mcpServers": {"notes": {"command": sys.executable, "args": [str(NOTES_SCRIPT), "stdio"], "timeout": timeout_s}}
    }


@pytest.fixture
async def notes_tools() -> AsyncIterator[Any]:
    """An ``MCPToolSource`` on a fresh notes server (empty store, default 0.3 s write delay) over stdio.

    Shared by the MCP tests and the graph tests about side-effect order.
    """
    from planwerk.tools.mcp import open_tools  # the MCP stack is heavy; only tests that use it pay for it

    async with open_tools(notes_config()) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools


SLOW_TEST_TIMEOUT_S = 900
"""Per-test limit for ``slow`` tests (a real model or a large index): generous, because a real-model test that
passes on an idle machine timed out at the default 300 s on a loaded one (the issue of trustworthy answers, item 9).
A test's own ``@pytest.mark.timeout`` wins."""


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give every ``slow`` test the headroom of :data:`SLOW_TEST_TIMEOUT_S` unless it sets its own limit."""
    for item in items:
        if item.get_closest_marker("slow") and not item.get_closest_marker("timeout"):
            item.add_marker(pytest.mark.timeout(SLOW_TEST_TIMEOUT_S))
