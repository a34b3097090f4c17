"""An MCP server (stdio) whose tools' input schemas hold a dangling ``$ref`` and a remote one, beside a good tool.

Run as ``python tests/tools/bad_schema_server.py <url for the remote $ref>``.
"""

from __future__ import annotations

import sys

from mcp.server.fastmcp import FastMCP


def build(remote_url: str) -> FastMCP:
    """The server: ``good`` (a plain schema), ``dangling`` and ``remote`` (broken references)."""
    server = FastMCP("bad-schemas")

    @server.tool()
    def good(n: int) -> int:
        """Returns n."""
        return n

    @server.tool()
    def dangling(n: int) -> int:
        """Its schema references a definition that does not exist."""
        return n

    @server.tool()
    def remote(n: int) -> int:
        """Its schema references a schema on another host."""
        return n

    # What a third-party server might send: FastMCP derives schemas from the signature, so they are replaced.
    tools = server._tool_manager
    tools.get_tool("dangling").parameters = {  # type: ignore[union-attr]
        "type": "object",
        "properties": {"n": {"$ref": "#/$defs/Missing"}},
        "required": ["n"],
    }
    tools.get_tool("remote").parameters = {  # type: ignore[union-attr]
        "type": "object",
        "properties": {"n": {"$ref": remote_url}},
        "required": ["n"],
    }
    return server


if __name__ == "__main__":
    build(sys.argv[1]).run("stdio")
