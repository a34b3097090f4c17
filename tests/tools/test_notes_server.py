"""The notes server (a real MCP server with side effects) through MCPToolSource over stdio."""

from __future__ import annotations

import asyncio
import time

import pytest

from planwerk.core.tools import ToolError
from planwerk.tools.mcp import MCPToolSource


async def test_write_read_delete_and_not_found(notes_tools: MCPToolSource) -> None:
    tools = notes_tools
    assert await tools.call("count_notes", {}) == {"count": 0}
    assert await tools.call("write_note", {"key": "k", "text": "v1"}) == {"key": "k", "text": "v1"}
    assert await tools.call("read_note", {"key": "k"}) == {"key": "k", "text": "v1"}
    assert await tools.call("write_note", {"key": "k", "text": "v2"}) == {"key": "k", "text": "v2"}
    assert await tools.call("count_notes", {}) == {"count": 1}
    assert await tools.call("delete_note", {"key": "k"}) == {"key": "k", "text": "v2"}
    for name in ("read_note", "delete_note"):
        with pytest.raises(ToolError) as info:
            await tools.call(name, {"key": "k"})
        assert (info.value.kind, info.value.tool, info.value.server) == ("not_found", name, "notes")
        assert "no note under key 'k'" in str(info.value)
    assert tools.unavailable == {}


async def test_annotations_arrive_as_destructive(notes_tools: MCPToolSource) -> None:
    destructive = {name: spec.destructive for name, spec in notes_tools.specs.items()}
    # count_notes has no annotations: the spec would call it destructive, planwerk asks for an explicit hint
    assert destructive == {"write_note": True, "delete_note": True, "read_note": False, "count_notes": False}
    assert notes_tools.specs["read_note"].output_schema["properties"]["text"]["type"] == "string"


async def test_the_write_is_slow_and_stores_only_at_its_end(notes_tools: MCPToolSource) -> None:
    # What the side-effect ordering test relies on: a read that starts during a write sees the old value.
    await notes_tools.call("write_note", {"key": "k", "text": "old"})
    started = time.perf_counter()
    write = asyncio.ensure_future(notes_tools.call("write_note", {"key": "k", "text": "new"}))
    await asyncio.sleep(0.05)
    during = await notes_tools.call("read_note", {"key": "k"})
    await write
    elapsed = time.perf_counter() - started
    after = await notes_tools.call("read_note", {"key": "k"})
    assert (during["text"], after["text"]) == ("old", "new")
    assert 0.25 <= elapsed < 3
