"""A streamable-HTTP MCP server that is an OAuth 2.1 resource server and its own authorization server, for the
client-credentials tests.

The MCP SDK's FastMCP serves the protected-resource metadata and checks bearer tokens (``token_verifier``); this
module adds the authorization server's metadata and a token endpoint that grants ``client_credentials`` to one
client (``$OAUTH_CLIENT_ID``, ``$OAUTH_CLIENT_SECRET``, HTTP Basic). The tool ``revoke_tokens`` forgets every token
issued (as an expiry would): the next request gets 401. Run as ``python oauth_server.py --port N``; loopback only.
"""

from __future__ import annotations

import argparse
import base64
import itertools
import os
import secrets
from typing import Any

import uvicorn
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.fastmcp import FastMCP
from starlette.requests import Request
from starlette.responses import JSONResponse, Response

ISSUED: set[str] = set()
COUNT = itertools.count(1)


class Verifier:
    """Accepts the tokens the token endpoint issued and has not revoked."""

    async def verify_token(self, token: str) -> AccessToken | None:
        if token not in ISSUED:
            return None
        return AccessToken(token=token, client_id=os.environ["OAUTH_CLIENT_ID"], scopes=["tools"])


def build(port: int) -> FastMCP:
    """The server on ``port`` (its URLs name it)."""
    base = f"http://127.0.0.1:{port}"
    settings = AuthSettings(
        issuer_url=base, resource_server_url=f"{base}/mcp", required_scopes=["tools"], validate_token_resource=False
    )
    server = FastMCP("oauth-echo", auth=settings, token_verifier=Verifier(), port=port)

    @server.tool()
    async def echo_text(text: str) -> str:
        """Returns ``text`` unchanged."""
        return text

    @server.tool()
    async def revoke_tokens() -> int:
        """Forgets every issued token (they expire); how many there were."""
        count = len(ISSUED)
        ISSUED.clear()
        return count

    @server.custom_route("/.well-known/oauth-authorization-server", methods=["GET"])
    async def metadata(request: Request) -> Response:
        return JSONResponse({
            "issuer": base,
            "authorization_endpoint": f"{base}/authorize",
            "token_endpoint": f"{base}/token",
            "grant_types_supported": ["client_credentials"],
            "token_endpoint_auth_methods_supported": ["client_secret_basic"],
            "scopes_supported": ["tools"],
        })  # fmt: skip

    @server.custom_route("/token", methods=["POST"])
    async def token(request: Request) -> Response:
        form = await request.form()
        expected = f"{os.environ['OAUTH_CLIENT_ID']}:{os.environ['OAUTH_CLIENT_SECRET']}".encode()
        given = request.headers.get("authorization", "")
        if form.get("grant_type") != "client_credentials":
            return JSONResponse({"error": "unsupported_grant_type"}, status_code=400)
        if given != "Basic " + base64.b64encode(expected).decode():
            return JSONResponse({"error": "invalid_client"}, status_code=401)
        issued = f"at-{next(COUNT)}-{secrets.token_hex(8)}"
        ISSUED.add(issued)
        return JSONResponse({"access_token": issued, "token_type": "Bearer", "expires_in": 3600, "scope": "tools"})

    return server


def main(argv: list[str] | None = None) -> None:
    """Serve on 127.0.0.1 at ``--port``."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--port", type=int, required=True)
    args = parser.parse_args(argv)
    app: Any = build(args.port).streamable_http_app()
    uvicorn.run(app, host="127.0.0.1", port=args.port, log_level="warning", lifespan="on")


if __name__ == "__main__":
    main()
