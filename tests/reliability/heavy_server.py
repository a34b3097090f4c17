"""An MCP server for the transport-limit tests: huge results, slow calls that count themselves, its environment.

Run as ``python tests/reliability/heavy_server.py [stdio|http] --port N``. Over HTTP it answers with SSE events,
or with JSON responses when ``HEAVY_JSON_RESPONSE=1`` is set.
"""

from __future__ import annotations

import asyncio
import os

from mcp.server.fastmcp import FastMCP

from planwerk.tools.servers._run import serve

_IN_FLIGHT = 0
"""Calls of ``sleepy`` running now (a cancelled call leaves through its ``finally``)."""


def build(host: str, port: int) -> FastMCP:
    """The heavy server."""
    json_response = os.environ.get("HEAVY_JSON_RESPONSE") == "1"
    server = FastMCP("heavy", host=host, port=port, json_response=json_response)

    @server.tool()
    async def big(megabytes: float) -> str:
        """Returns a text of ``megabytes`` MB (10**6 characters each)."""
        return "x" * int(megabytes * 1_000_000)

    @server.tool()
    async def sleepy(seconds: float) -> float:
        """Sleeps for ``seconds`` while counted in ``in_flight``, then returns them."""
        global _IN_FLIGHT
        _IN_FLIGHT += 1
        try:
            await asyncio.sleep(seconds)
        finally:
            _IN_FLIGHT -= 1
        return seconds

    @server.tool()
    async def in_flight() -> int:
        """How many ``sleepy`` calls are running now."""
        return _IN_FLIGHT

    @server.tool()
    async def pid() -> int:
        """This server's process id."""
        return os.getpid()

    @server.tool()
    async def environment() -> list[str]:
        """The names of this process's environment variables, sorted."""
        return sorted(os.environ)

    @server.tool()
    async def getenv(name: str) -> str:
        """The value of environment variable ``name``, or an empty string."""
        return os.environ.get(name, "")

    return server


if __name__ == "__main__":
    serve(build)
