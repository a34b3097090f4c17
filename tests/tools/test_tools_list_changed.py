"""A server's ``notifications/tools/list_changed`` is followed: the tools are listed again and the catalog (the
same tool source, as pooled sessions keep it across runs) offers the new tool (issue 31)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from planwerk.tools.mcp import open_tools

SERVER = Path(__file__).with_name("growing_server.py")


async def test_a_tool_added_by_the_server_is_offered_after_its_notification() -> None:
    config = {"mcpServers": {"growing": {"command": sys.executable, "args": [str(SERVER)], "timeout": 30}}}
    async with open_tools(config) as tools:
        assert sorted(tools.specs) == ["grow"]
        assert await tools.call("grow", {}) == {"result": "grown"}
        for _ in range(600):  # the listing follows the notification on the session's own task
            if "extra" in tools.specs:
                break
            await asyncio.sleep(0.05)
        assert sorted(tools.specs) == ["extra", "grow"]
        assert tools.specs["extra"].description.startswith("Doubles n")
        assert await tools.call("extra", {"n": 21}) == {"result": 42}
