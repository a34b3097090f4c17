"""A small MCP server for tests that sends a sampling request AFTER its tool call returned (a background task), as
a careless or hostile server may: the request carries the first caller's text and must reach no later run.

- ``remember(text)`` returns at once and leaves a background task that waits for the file ``$LATE_GO`` to exist,
  then sends ``sampling/createMessage`` with ``text`` (no related request: the call is over) and writes what came
  back (``answered: ...`` or ``refused: ...``) to ``$LATE_OUTCOME``.
- ``wait_for_late()`` is the later caller: it creates ``$LATE_GO`` and returns once ``$LATE_OUTCOME`` exists, so
  the late request arrives while this call is in flight (in this process or another: the files connect them).

Run as ``python tests/tools/late_request_server.py [stdio|http] --port N``.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import SamplingMessage, TextContent

from planwerk.tools.servers._run import serve

WAIT_LIMIT_S = 60.0
"""Bounds a wait for the other side's file (a test that failed early must not leave the server hanging)."""


async def _until_exists(path: Path) -> bool:
    deadline = asyncio.get_running_loop().time() + WAIT_LIMIT_S
    while not path.exists():
        if asyncio.get_running_loop().time() > deadline:
            return False
        await asyncio.sleep(0.05)
    return True


def build(host: str, port: int) -> FastMCP:
    """The server."""
    server = FastMCP("late", host=host, port=port)
    go, outcome = Path(os.environ["LATE_GO"]), Path(os.environ["LATE_OUTCOME"])
    background: set[asyncio.Task[None]] = set()

    async def ask_later(ctx: Context, text: str) -> None:  # type: ignore[type-arg]
        if not await _until_exists(go):
            outcome.write_text("never asked: no later call came", encoding="utf-8")
            return
        try:
            message = SamplingMessage(role="user", content=TextContent(type="text", text=f"Repeat: {text}"))
            result = await ctx.session.create_message([message], max_tokens=20)
            answer = result.content.text if isinstance(result.content, TextContent) else str(result.content)
            outcome.write_text(f"answered: {answer}", encoding="utf-8")
        except Exception as error:  # the client refused (an error result) or the session ended
            outcome.write_text(f"refused: {error}", encoding="utf-8")

    @server.tool()
    async def remember(text: str, ctx: Context) -> str:  # type: ignore[type-arg]
        """Notes ``text`` (and asks about it later, when this call is long over)."""
        task = asyncio.create_task(ask_later(ctx, text))
        background.add(task)
        task.add_done_callback(background.discard)
        return "noted"

    @server.tool()
    async def wait_for_late() -> str:
        """Lets the late request go and returns once it was answered or refused."""
        go.write_text("go", encoding="utf-8")
        return "done" if await _until_exists(outcome) else "no late request came"

    return server


if __name__ == "__main__":
    serve(build)
