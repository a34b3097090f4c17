"""An MCP server with side effects, for tests: an in-memory note store whose writes are slow.

``write_note`` waits ``NOTES_WRITE_DELAY_S`` seconds (default 0.3) BEFORE it stores, so a read that starts while
the write is still running sees the old value: the engine must order side effects by plan step, not by ``$ref``.
Writes and deletes are annotated ``destructiveHint``, reads ``readOnlyHint``; ``count_notes`` has no annotations
(planwerk treats it as not destructive). A missing note is a ``not_found`` failure in the error result's ``_meta``
(``planwerk.tools.servers.failures``).

Run as ``python tests/tools/notes_server.py [stdio|http] --port N``.
"""

from __future__ import annotations

import asyncio
import os

from mcp.types import ToolAnnotations
from pydantic import BaseModel

from planwerk.tools.servers._run import serve
from planwerk.tools.servers.failures import FastMCPWithFailureKinds, ToolFailure

DESTRUCTIVE = ToolAnnotations(readOnlyHint=False, destructiveHint=True, idempotentHint=True, openWorldHint=False)
READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=False)


class Note(BaseModel):
    """A stored note."""

    key: str
    text: str


class Count(BaseModel):
    """How many notes are stored."""

    count: int


def build(host: str, port: int) -> FastMCPWithFailureKinds:
    """The notes server; the store lives as long as the process."""
    delay_s = float(os.environ.get("NOTES_WRITE_DELAY_S", "0.3"))
    notes: dict[str, str] = {}
    server = FastMCPWithFailureKinds("notes", host=host, port=port)

    # Every tool is async: a sync FastMCP tool runs on the event loop and would serialise the whole server,
    # which would hide the very ordering bug this server exists to show.
    @server.tool(annotations=DESTRUCTIVE)
    async def write_note(key: str, text: str) -> Note:
        """Store ``text`` under ``key`` (replacing what was there); slow on purpose."""
        await asyncio.sleep(delay_s)
        notes[key] = text
        return Note(key=key, text=text)

    @server.tool(annotations=READ_ONLY)
    async def read_note(key: str) -> Note:
        """The note stored under ``key``."""
        if key not in notes:
            raise ToolFailure(f"no note under key {key!r}", kind="not_found")
        return Note(key=key, text=notes[key])

    @server.tool(annotations=DESTRUCTIVE)
    async def delete_note(key: str) -> Note:
        """Delete the note under ``key``; returns what it held."""
        if key not in notes:
            raise ToolFailure(f"no note under key {key!r}", kind="not_found")
        return Note(key=key, text=notes.pop(key))

    @server.tool()
    async def count_notes() -> Count:
        """How many notes are stored (no annotations: the MCP default, which planwerk reads as not destructive)."""
        return Count(count=len(notes))

    return server


if __name__ == "__main__":
    serve(build)
