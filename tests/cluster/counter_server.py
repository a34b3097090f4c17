"""An MCP server that counts its calls in a file, for the cluster tests: which calls ran, and how often.

``record(key, hold_s)`` appends ``start <key>`` to the log file (``COUNTER_LOG``), waits ``hold_s`` seconds the
FIRST time a key is recorded only (a crash test kills the server running the run while it waits; the re-run after
recovery then returns at once), appends ``end <key>`` and returns how often ``key`` has finished. The log outlives
the planwerk servers that call it: a finished call that is repeated shows up as a second ``end`` line.

Run as ``python tests/cluster/counter_server.py http --port N`` (streamable HTTP, loopback).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from mcp.server.fastmcp import FastMCP
from pydantic import BaseModel

from planwerk.tools.servers._run import serve


class Recorded(BaseModel):
    """What ``record`` returns: the key and how often a call for it has finished."""

    key: str
    finished: int


def _append(log: Path, line: str) -> None:
    with log.open("a", encoding="utf-8") as handle:
        handle.write(line + "\n")
        handle.flush()
        os.fsync(handle.fileno())


def build(host: str, port: int) -> FastMCP:
    """The counting server; its log file is ``COUNTER_LOG`` (required)."""
    log = Path(os.environ["COUNTER_LOG"])
    started: set[str] = set()
    finished: dict[str, int] = {}
    server = FastMCP("counter", host=host, port=port)

    @server.tool()
    async def record(key: str, hold_s: float = 0.0) -> Recorded:
        """Record one call for ``key``; the first call of a key waits ``hold_s`` seconds before it finishes."""
        first = key not in started
        started.add(key)
        await asyncio.to_thread(_append, log, f"start {key}")
        if first and hold_s > 0:
            await asyncio.sleep(hold_s)
        finished[key] = finished.get(key, 0) + 1
        await asyncio.to_thread(_append, log, f"end {key}")
        return Recorded(key=key, finished=finished[key])

    return server


if __name__ == "__main__":
    serve(build)
