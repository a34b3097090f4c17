"""The benchmarks' MCP server: the NESTFUL math tools plus ``pause``, a tool that waits before it answers.

``pause`` stands in for a slow upstream API, so the loop benchmark can show what running independent calls
concurrently saves. Run it with ``python -m benchmarks.server [stdio|http --port N]``.
"""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

from pydantic import Field

from planwerk.tools.servers._run import serve
from planwerk.tools.servers.math import build_server as build_math_server

MAX_PAUSE_S = 10.0
"""Longer pauses are refused, so a typo cannot stall a benchmark."""


async def pause(
    seconds: Annotated[float, Field(description="How long to wait, in seconds (0 to 10)")],
    value: Annotated[float, Field(description="The number to return")],
) -> float:
    """Wait ``seconds``, then return ``value`` (a stand-in for a slow API)."""
    if not 0 <= seconds <= MAX_PAUSE_S:
        raise ValueError(f"seconds must be between 0 and {MAX_PAUSE_S:g}, got {seconds}")
    await asyncio.sleep(seconds)
    return value


def build_server(host: str = "127.0.0.1", port: int = 8000) -> Any:
    """The math server with ``pause`` added."""
    server = build_math_server(host, port)
    server.add_tool(pause, name="pause", description=pause.__doc__, structured_output=True)
    return server


if __name__ == "__main__":
    serve(build_server)
