"""How planwerk authenticates to a streamable-HTTP MCP server: one ``httpx.Auth`` per server, built from its
config's ``auth`` (:mod:`planwerk.tools.config`).

- ``bearer``: a static token, sent as ``Authorization: Bearer <token>``;
- ``token_file``: the token is a file's content, read at the first request and read again after a 401 (a sidecar
  or a secret mount that rotates the file);
- ``token_command``: the token is what a command prints (the whole output, or ``access_token`` of a JSON object),
  run at the first request and again after a 401 (a short-lived JWT supplier). The command is the operator's: it
  comes from a config file only (a run's context never names one; see ``docs/serving.md``) and runs with
  planwerk's environment, bounded by its ``timeout``;
- ``client_credentials``: OAuth 2.1 client credentials through the MCP SDK's
  :class:`~mcp.client.auth.extensions.client_credentials.ClientCredentialsOAuthProvider` (the MCP authorization
  spec: the server's 401 leads to its protected-resource metadata, that to the authorization server's metadata and
  token endpoint; the token request goes through the same HTTP client with the server's timeout).

After a 401 a request is sent again once with the fresh token (for a static token there is nothing to refresh:
the 401 stands). A 401 that stands (or a 403), a supplier that fails or an OAuth flow that fails ends the
session; ``planwerk.tools.mcp`` reports the call with failure kind ``unauthorized`` (:func:`is_unauthorized`).
Every token a supplier hands out is added to the config's :class:`~planwerk.tools.redaction.SecretStore` before
it is first sent, so it is redacted like a configured secret.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import AsyncGenerator, Callable, Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx
from mcp.client.auth import OAuthFlowError, OAuthTokenError, TokenStorage
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken

MAX_TOKEN_BYTES = 64 * 1024
"""A token file or a command's output longer than this is refused (a token is a few kilobytes at most)."""


@dataclass(frozen=True)
class BearerAuth:
    """``auth: {"type": "bearer", "token": "..."}``: a static bearer token."""

    token: str
    type: Literal["bearer"] = "bearer"

    def __repr__(self) -> str:
        return "BearerAuth(token=***)"


@dataclass(frozen=True)
class TokenFileAuth:
    """``auth: {"type": "token_file", "path": "..."}``: the token is the file's content (read again on 401)."""

    path: str
    type: Literal["token_file"] = "token_file"


@dataclass(frozen=True)
class TokenCommandAuth:
    """``auth: {"type": "token_command", "command": ["prog", "arg"], "timeout": 10}``: the token is what the
    command prints (run again on 401)."""

    command: tuple[str, ...]
    timeout_s: float = 10.0
    type: Literal["token_command"] = "token_command"


@dataclass(frozen=True)
class ClientCredentialsAuth:
    """``auth: {"type": "client_credentials", "client_id": ..., "client_secret": ..., "issuer": ...,
    "scope": ...}``: OAuth 2.1 client credentials (the MCP SDK's provider)."""

    client_id: str
    client_secret: str
    issuer: str
    """The authorization server the credentials belong to (its issuer URL); token requests go only there."""
    scope: str | None = None
    token_endpoint_auth_method: Literal["client_secret_basic", "client_secret_post"] = "client_secret_basic"
    type: Literal["client_credentials"] = "client_credentials"

    def __repr__(self) -> str:
        return f"ClientCredentialsAuth(client_id={self.client_id!r}, client_secret=***, issuer={self.issuer!r})"


AuthConfig = BearerAuth | TokenFileAuth | TokenCommandAuth | ClientCredentialsAuth
"""What a server's ``auth`` configures."""


class TokenSupplyError(Exception):
    """A token file or command gave no token; the message says which and why (never a token)."""


class _Supplier:
    """Where a bearer token comes from."""

    refreshes = True
    """Whether asking again may give another token (a static one never does)."""

    async def fetch(self) -> str:
        """A token (raises :class:`TokenSupplyError`)."""
        raise NotImplementedError


class _Static(_Supplier):
    refreshes = False

    def __init__(self, token: str):
        self.token = token

    async def fetch(self) -> str:
        return self.token


class _File(_Supplier):
    def __init__(self, path: str):
        self.path = Path(path).expanduser()

    async def fetch(self) -> str:
        try:
            data = await asyncio.to_thread(_read_bounded, self.path)
        except OSError as exc:
            raise TokenSupplyError(f"token file {self.path}: cannot read it ({exc.strerror or exc})") from None
        return _token_from(data, f"token file {self.path}")


def _read_bounded(path: Path) -> bytes:
    with path.open("rb") as file:
        return file.read(MAX_TOKEN_BYTES + 1)


class _Command(_Supplier):
    def __init__(self, command: tuple[str, ...], timeout_s: float):
        self.command = command
        self.timeout_s = timeout_s

    async def fetch(self) -> str:
        what = f"token command {self.command[0]}"
        try:
            process = await asyncio.create_subprocess_exec(
                *self.command,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.DEVNULL,  # it may print the token or its own credentials there
                env=dict(os.environ),
            )
        except OSError as exc:
            raise TokenSupplyError(f"{what}: cannot start it ({exc.strerror or exc})") from None
        try:
            async with asyncio.timeout(self.timeout_s):
                stdout, _ = await process.communicate()
        except TimeoutError:
            process.kill()
            await process.wait()
            raise TokenSupplyError(f"{what}: no token within {self.timeout_s:g} s") from None
        if process.returncode != 0:
            raise TokenSupplyError(f"{what}: exited with status {process.returncode}")
        return _token_from(stdout, what)


def _token_from(data: bytes, what: str) -> str:
    """The token in a file's or a command's output: the text, or ``access_token`` (``token``) of a JSON object."""
    if len(data) > MAX_TOKEN_BYTES:
        raise TokenSupplyError(f"{what}: more than {MAX_TOKEN_BYTES} bytes; expected one token")
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise TokenSupplyError(f"{what}: not UTF-8 text; expected one token") from None
    if text.startswith("{"):
        try:
            parsed = json.loads(text)
        except json.JSONDecodeError:
            raise TokenSupplyError(f'{what}: not valid JSON; expected a token or {{"access_token": "..."}}') from None
        token = parsed.get("access_token", parsed.get("token")) if isinstance(parsed, dict) else None
        if not isinstance(token, str):
            raise TokenSupplyError(f'{what}: expected a JSON object with "access_token" (a string)')
        text = token.strip()
    if not text or any(c.isspace() for c in text):
        raise TokenSupplyError(f"{what}: expected one token (no spaces), got {'nothing' if not text else 'text'}")
    return text


class SuppliedBearer(httpx.Auth):
    """``Authorization: Bearer <token>`` from a supplier; after a 401 the supplier is asked again and the request is
    sent once more with the new token. Concurrent 401s share one refresh."""

    requires_request_body = True  # the request is sent again after a 401

    def __init__(self, supplier: _Supplier, on_token: Callable[[str], None]):
        self._supplier = supplier
        self._on_token = on_token
        self._token: str | None = None
        self._lock = asyncio.Lock()

    async def _get(self, stale: str | None = None) -> str:
        async with self._lock:
            if self._token is None or (stale is not None and self._token == stale):
                token = await self._supplier.fetch()
                self._on_token(token)  # redacted before it is first sent
                self._token = token
            return self._token

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        """Not supported: planwerk's MCP clients are asynchronous."""
        raise RuntimeError("SuppliedBearer works with httpx.AsyncClient only")

    async def async_auth_flow(self, request: httpx.Request) -> AsyncGenerator[httpx.Request, httpx.Response]:
        """Send with the current token; after a 401, once more with a fresh one."""
        token = await self._get()
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code != httpx.codes.UNAUTHORIZED or not self._supplier.refreshes:
            return
        fresh = await self._get(stale=token)
        if fresh == token:  # the supplier has nothing newer: the 401 stands
            return
        request.headers["Authorization"] = f"Bearer {fresh}"
        yield request


class _Tokens(TokenStorage):
    """The SDK provider's token storage, in memory; every access token joins the secrets before it is used."""

    def __init__(self, on_token: Callable[[str], None]):
        self._on_token = on_token
        self._tokens: OAuthToken | None = None
        self._client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self._tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self._on_token(tokens.access_token)
        if tokens.refresh_token:
            self._on_token(tokens.refresh_token)
        self._tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self._client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self._client = client_info


def is_unauthorized(exc: BaseException) -> bool:
    """Whether ``exc`` says the server refused our credentials or none could be had: HTTP 401 or 403, a token
    supplier that failed, an OAuth flow that failed."""
    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in (httpx.codes.UNAUTHORIZED, httpx.codes.FORBIDDEN)
    return isinstance(exc, TokenSupplyError | OAuthFlowError | OAuthTokenError)


def http_auth(config: AuthConfig, server_url: str, on_token: Callable[[str], None]) -> httpx.Auth:
    """The ``httpx.Auth`` of a server's ``auth`` config; ``on_token`` receives every token before it is sent."""
    if isinstance(config, BearerAuth):
        return SuppliedBearer(_Static(config.token), on_token)
    if isinstance(config, TokenFileAuth):
        return SuppliedBearer(_File(config.path), on_token)
    if isinstance(config, TokenCommandAuth):
        return SuppliedBearer(_Command(config.command, config.timeout_s), on_token)
    return ClientCredentialsOAuthProvider(
        server_url=server_url,
        storage=_Tokens(on_token),
        client_id=config.client_id,
        client_secret=config.client_secret,
        token_endpoint_auth_method=config.token_endpoint_auth_method,
        scopes=config.scope,
        issuer=config.issuer,
    )
