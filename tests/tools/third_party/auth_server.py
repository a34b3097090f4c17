"""A streamable-HTTP MCP server behind bearer auth whose accepted token can be switched while it runs.

The token it accepts is the content of the file ``$AUTH_TOKEN_FILE``, read on every request: a test rotates the
token (every request then gets 401) and rotates it back. Run as
``python tests/tools/third_party/auth_server.py --port N``; it listens on 127.0.0.1 only.
"""

from __future__ import annotations

import argparse
import asyncio
import os
from pathlib import Path
from typing import Any

import uvicorn
from mcp.server.fastmcp import FastMCP
from starlette.types import ASGIApp, Receive, Scope, Send


def build() -> FastMCP:
    """The MCP server: one tool that answers at once, one that takes its time."""
    server = FastMCP("auth-echo", stateless_http=False)

    @server.tool()
    async def echo_text(text: str) -> str:
        """Returns ``text`` unchanged."""
        return text

    @server.tool()
    async def wait_for(seconds: float) -> float:
        """Sleeps, then returns the seconds (a call in flight when the server goes away)."""
        await asyncio.sleep(seconds)
        return seconds

    return server


class BearerAuth:
    """ASGI middleware: 401 unless ``Authorization: Bearer <the token file's content>``."""

    def __init__(self, app: ASGIApp, token_file: Path):
        self.app = app
        self.token_file = token_file

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
            expected = f"Bearer {self.token_file.read_text(encoding='utf-8').strip()}"
            if headers.get("authorization") != expected:
                body = b'{"error": "invalid_token"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"content-length", str(len(body)).encode()),
                            (b"www-authenticate", b'Bearer error="invalid_token"'),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def main(argv: list[str] | None = None) -> None:
    """Serve on 127.0.0.1 at ``--port``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    app: Any = BearerAuth(build().streamable_http_app(), Path(os.environ["AUTH_TOKEN_FILE"]))
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
