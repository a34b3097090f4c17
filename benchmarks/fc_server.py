"""An MCP server (stdio) whose tools are the functions of one function-calling benchmark entry.

``python -m benchmarks.fc_server FUNCTIONS.json`` serves every function document of the file (the leaderboard's
format, its type names converted to JSON Schema by :func:`benchmarks.fc.tool_schema`) as a tool with that input
schema. The MCP SDK's low-level server, because the tools are data (FastMCP derives schemas from Python functions).
A call answers ``{"status": "done", "function": name}``: the benchmark scores which calls were made, not results.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import mcp.types as types
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server


def build_server(tools: list[dict[str, Any]]) -> Server:
    """A low-level MCP server listing ``tools`` (``name``, ``description``, ``inputSchema``) and answering calls."""
    server: Server = Server("fc-bench")
    listed = [types.Tool(name=t["name"], description=t["description"], inputSchema=t["inputSchema"]) for t in tools]

    @server.list_tools()
    async def list_tools() -> list[types.Tool]:
        return listed

    @server.call_tool(validate_input=False)  # the leaderboard scores arguments as sent, schema-valid or not
    async def call_tool(name: str, arguments: dict[str, Any]) -> list[types.TextContent]:
        return [types.TextContent(type="text", text=json.dumps({"status": "done", "function": name}))]

    return server


async def _serve(tools: list[dict[str, Any]]) -> None:
    server = build_server(tools)
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())


def main(argv: list[str] | None = None) -> None:
    """Serve the tools of the JSON file named on the command line over stdio."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) != 1:
        raise SystemExit("usage: python -m benchmarks.fc_server TOOLS.json")
    anyio.run(_serve, json.loads(Path(args[0]).read_text(encoding="utf-8")))


if __name__ == "__main__":
    main()
