"""An MCP server (stdio) whose ``grow`` tool adds a tool and tells the client with ``notifications/tools/list_changed``.

Run as ``python tests/tools/growing_server.py``.
"""

from __future__ import annotations

from mcp.server.fastmcp import Context, FastMCP


def build() -> FastMCP:
    """The server: ``grow`` adds ``extra`` (which doubles a number) and notifies."""
    server = FastMCP("growing")

    @server.tool()
    async def grow(ctx: Context) -> str:  # type: ignore[type-arg]
        """Adds the tool extra."""

        def extra(n: int) -> int:
            """Doubles n."""
            return 2 * n

        server.add_tool(extra)
        await ctx.session.send_tool_list_changed()
        return "grown"

    return server


if __name__ == "__main__":
    build().run("stdio")
