"""An MCP server for reliability tests whose results are hostile to storage: deep nesting, lone surrogates, bulk.

Every call appends the tool's name to the file named by ``HOSTILE_LOG`` (when set), so a test can count how often
a tool really ran (a resume must not run it again). Run as ``python tests/reliability/hostile_server.py [stdio|http]
--port N``.
"""

from __future__ import annotations

import json
import os

from mcp.server.fastmcp import FastMCP

from planwerk.tools.servers._run import serve


def build(host: str, port: int) -> FastMCP:
    """The hostile server."""
    server = FastMCP("hostile", host=host, port=port)

    def log(tool: str) -> None:
        path = os.environ.get("HOSTILE_LOG")
        if path:
            with open(path, "a", encoding="utf-8") as handle:
                handle.write(tool + "\n")

    @server.tool(structured_output=False)
    async def deep(depth: int) -> str:
        """A JSON object nested ``depth`` levels deep (as text: the client parses it)."""
        log("deep")
        return '{"a":' * depth + '"bottom"' + "}" * depth

    @server.tool(structured_output=False)
    async def lone() -> str:
        """JSON text holding a lone surrogate (escaped: the wire stays valid UTF-8; the client's parse makes it)."""
        log("lone")
        return json.dumps({"text": "vor \ud800 nach"})

    @server.tool(structured_output=False)
    async def bulk(kb: int) -> str:
        """A JSON object with one string of ``kb`` kilobytes."""
        log("bulk")
        return json.dumps({"data": "x" * (kb * 1000)})

    @server.tool()
    async def echo(text: str) -> str:
        """Returns ``text`` unchanged."""
        log("echo")
        return text

    @server.tool()
    async def count(items: list[str]) -> int:
        """How many items there are."""
        log("count")
        return len(items)

    return server


if __name__ == "__main__":
    serve(build)
