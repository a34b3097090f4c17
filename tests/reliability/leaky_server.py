"""A careless MCP server for the secrets tests: it echoes the secret it was configured with in every form a
redactor must catch.

The secret is ``$LEAKY_SECRET`` (stdio: from its ``env``) or, when that is unset, the bearer token of the request
(streamable HTTP). Run as ``python tests/reliability/leaky_server.py [stdio|http] --port N``.
"""

from __future__ import annotations

import base64
import os
import sys
from typing import Any
from urllib.parse import quote

from mcp.server.fastmcp import Context, FastMCP
from mcp.types import SamplingMessage, TextContent

from planwerk.tools.servers._run import serve


def _secret(ctx: Context) -> str:  # type: ignore[type-arg]
    if value := os.environ.get("LEAKY_SECRET"):
        return value
    request: Any = ctx.request_context.request
    return str(request.headers.get("authorization", "")).removeprefix("Bearer ")


def forms(secret: str) -> dict[str, str]:
    """The secret as a careless server shows it."""
    return {
        "plain": f"your key is {secret}.",
        "upper": f"KEY: {secret.upper()}",
        "base64": base64.b64encode(f"user:{secret}".encode()).decode(),
        "urlsafe_base64": base64.urlsafe_b64encode(f"x{secret}".encode()).decode(),
        "url": f"https://example.org/cb?key={quote(secret, safe='')}&x=1",
        "spaced": " ".join(secret),
        "as_key": secret,
    }


def build(host: str, port: int) -> FastMCP:
    """The leaky server."""
    server = FastMCP("leaky", host=host, port=port)

    @server.tool()
    async def leak_result(ctx: Context) -> dict[str, str]:  # type: ignore[type-arg]
        """Returns the secret in many forms (and as a key)."""
        secret = _secret(ctx)
        out = forms(secret)
        out[secret] = "the secret as a key"
        return out

    @server.tool()
    async def leak_progress(ctx: Context) -> str:  # type: ignore[type-arg]
        """Reports progress whose message holds the secret, then returns a harmless text."""
        secret = _secret(ctx)
        await ctx.report_progress(1, 2, f"using token {secret}")
        await ctx.report_progress(2, 2, f"token b64 {base64.b64encode(secret.encode()).decode()}")
        return "done"

    @server.tool()
    async def leak_error(ctx: Context) -> str:  # type: ignore[type-arg]
        """Fails with the secret upper-cased and URL-encoded in the message."""
        secret = _secret(ctx)
        raise ValueError(f"bad credentials {secret.upper()} ({quote(secret, safe='')})")

    @server.tool()
    async def leak_stderr(ctx: Context) -> str:  # type: ignore[type-arg]
        """Prints the secret to stderr (a debugging server), then returns a harmless text."""
        secret = _secret(ctx)
        print(f"debug: connecting with {secret} / {secret.lower()}", file=sys.stderr, flush=True)
        return "printed"

    @server.tool()
    async def leak_sampling(ctx: Context) -> str:  # type: ignore[type-arg]
        """Asks the client's model to sample on a prompt that holds the secret; returns what the model said."""
        secret = _secret(ctx)
        message = SamplingMessage(role="user", content=TextContent(type="text", text=f"summarise {secret}"))
        result = await ctx.session.create_message(messages=[message], max_tokens=5)
        return result.content.text if isinstance(result.content, TextContent) else ""

    if configured := os.environ.get("LEAKY_SECRET"):

        async def leak_description() -> str:
            return "nothing"

        server.add_tool(leak_description, description=f"Uses the key {configured} (a careless description).")
    return server


if __name__ == "__main__":
    serve(build)
