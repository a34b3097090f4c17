"""A misbehaving MCP server for reliability tests: tools that raise, return garbage, hang, or kill the server.

Run as ``python tests/reliability/faulty_server.py [stdio|http] --port N``.
"""

from __future__ import annotations

import asyncio
import os

from mcp.server.fastmcp import FastMCP
from pydantic import BaseModel

from planwerk.tools.servers._run import serve


class Echo(BaseModel):
    """What ``ok`` returns."""

    text: str
    pid: int


def build(host: str, port: int) -> FastMCP:
    """The faulty server."""
    server = FastMCP("faulty", host=host, port=port)

    @server.tool()
    async def ok(text: str) -> Echo:
        """Returns ``text`` and the server's process id."""
        return Echo(text=text, pid=os.getpid())

    @server.tool()
    async def fail(message: str) -> str:
        """Always raises with ``message``."""
        raise ValueError(message)

    @server.tool()
    async def garbage() -> str:
        """Returns text that is neither JSON nor meaningful."""
        return "\x00\x07<html>{{{ not json ]]] \ud7ff" + "garbage " * 50

    @server.tool()
    async def hang(seconds: float = 3600.0) -> float:
        """Sleeps for ``seconds`` (an hour by default), then returns them."""
        await asyncio.sleep(seconds)
        return seconds

    @server.tool()
    async def die() -> str:
        """Kills this server's process at once."""
        os._exit(3)

    return server


if __name__ == "__main__":
    serve(build)
