"""A stdio MCP server with one slow tool, for tests that need a run to be busy: ``tick`` waits, then writes its
argument and the time to the file named by ``PLANWERK_TEST_TICK_LOG`` (the test sees from outside which calls
ran)."""

from __future__ import annotations

import asyncio
import os
import time

from mcp.server.fastmcp import FastMCP

TICK_SECONDS = 1.5
"""How long each call takes: long enough that a test can disconnect between two calls."""

server = FastMCP("slow")


@server.tool()
async def tick(n: int) -> dict:
    """Wait a moment, then record call number ``n``."""
    await asyncio.sleep(TICK_SECONDS)
    with open(os.environ["PLANWERK_TEST_TICK_LOG"], "a", encoding="ascii") as log:
        log.write(f"{n} {time.time():.3f}\n")
    return {"n": n}


if __name__ == "__main__":
    server.run("stdio")
