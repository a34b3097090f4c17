"""A small MCP server for tests: echoes request headers, fails on purpose, sleeps.

It follows no planwerk convention: its error results carry no failure kind, as a third-party server's would.
``strict`` is rejected with a JSON-RPC INVALID_PARAMS error (as servers that validate at the protocol level do).

Run as ``python tests/tools/echo_server.py [stdio|http] --port N``.
"""

from __future__ import annotations

import asyncio
from typing import Any

from mcp.server.fastmcp import Context, FastMCP
from mcp.shared.exceptions import McpError
from mcp.types import INVALID_PARAMS, CallToolRequest, ErrorData, ServerResult
from pydantic import BaseModel

from planwerk.tools.servers._run import serve


class Headers(BaseModel):
    """Request headers as the server saw them."""

    authorization: str | None
    x_team: str | None


def build(host: str, port: int) -> FastMCP:
    """The echo server."""
    server = FastMCP("echo", host=host, port=port)

    @server.tool()
    async def whoami(ctx: Context) -> Headers:  # type: ignore[type-arg]
        """The Authorization and X-Team headers of this request."""
        request: Any = ctx.request_context.request
        headers = request.headers if request is not None else {}
        return Headers(authorization=headers.get("authorization"), x_team=headers.get("x-team"))

    @server.tool()
    async def leak(ctx: Context) -> str:  # type: ignore[type-arg]
        """Fails with a message that contains the Authorization header (a careless server)."""
        request: Any = ctx.request_context.request
        raise ValueError(f"rejected credentials {request.headers.get('authorization')}")

    @server.tool()
    async def boom(message: str) -> str:
        """Always fails with ``message``."""
        raise ValueError(message)

    @server.tool()
    async def slow(seconds: float) -> float:
        """Sleeps, then returns the seconds."""
        await asyncio.sleep(seconds)
        return seconds

    @server.tool()
    async def echo_text(text: str) -> str:
        """Returns ``text`` unchanged."""
        return text

    @server.tool()
    async def strict(value: int) -> int:
        """Returns ``value``; a negative one is refused at the protocol level (JSON-RPC -32602)."""
        return value

    # FastMCP turns every exception of a tool into an error result, so the JSON-RPC error has to come from the
    # request handler around it (the low-level server answers an McpError raised there with a JSON-RPC error).
    handlers = server._mcp_server.request_handlers
    call_tool = handlers[CallToolRequest]

    async def refuse_negative(request: CallToolRequest) -> ServerResult:
        arguments = request.params.arguments or {}
        if request.params.name == "strict" and isinstance(arguments.get("value"), int) and arguments["value"] < 0:
            raise McpError(
                ErrorData(code=INVALID_PARAMS, message=f"strict: value must be >= 0, got {arguments['value']}")
            )
        return await call_tool(request)

    handlers[CallToolRequest] = refuse_negative
    return server


if __name__ == "__main__":
    serve(build)
