"""MCP tools as a :class:`~planwerk.tools.base.ToolSource`, over persistent sessions.

:func:`open_tools` opens ONE session per configured server for its whole lifetime (a session per call costs a
process spawn over stdio, about 0.5 s). Each session lives in its own owner task: when a server dies, the
transport's ExceptionGroup ends that task only, the server is marked unavailable, and calls to the other
servers go on. Every call is bounded by the server's timeout, or the run's override (``--tool-timeout``,
``Context.tool_timeout_s``, handed over in :mod:`planwerk.tools.call_options` with the progress sink).

**Results.** Calls go to the session directly (:meth:`MCPToolSource._invoke`), not through the adapter's tools:
only the session takes a per-call timeout and progress callback, and :mod:`planwerk.tools.content` keeps every
content type (images, audio, resource links, embedded resources; see ``docs/tools.md``). Servers that list
resources add the built-in ``read_resource`` tool (:mod:`planwerk.tools.resources`).

**Failure kinds.** Every failure is a :class:`~planwerk.core.tools.ToolError` whose ``kind`` comes from structure,
never from the wording of a message:

- ``timeout``: the call ran past the server's timeout (ours, or the MCP session's read timeout: JSON-RPC code 408);
- ``unavailable``: the transport broke or the connection closed (JSON-RPC ``CONNECTION_CLOSED``); the server is
  then marked dead;
- ``unauthorized``: the server refused the credentials (HTTP 401 that a token refresh did not cure, or 403), or
  none could be had (a token file or command failed, the OAuth flow failed; :mod:`planwerk.tools.auth`); the
  server is marked dead like an unavailable one and reconnected on demand, so a token that works again is used;
- ``invalid_arguments``: the arguments do not fit the tool's input schema (checked here before sending, see
  ``planwerk.core.repair``), an unknown tool name while every server is up (with a server down, the name may be
  one of its tools: ``unavailable``), or a JSON-RPC ``INVALID_PARAMS`` (-32602) error from the server;
- otherwise the kind the server names in its error result. The convention, which any MCP server may follow
  (``planwerk.tools.servers.failures`` implements the server side for FastMCP): an ``isError`` result whose
  ``_meta`` holds ``{"planwerk/error": {"kind": "<kind>"}}`` with kind ``not_found``, ``invalid_arguments``,
  ``unavailable``, ``timeout`` or ``error``. The text content stays the human message. An error result without
  that key (any other server) is ``error``. The kind is read from the raw ``CallToolResult`` (the adapter's
  tools, which turn an error result into an exception that keeps only the text, keep the same reading in a
  tool-call interceptor for anyone who calls them).

**A server that stops answering.** Two calls in a row that got no answer (each timed out, at the server's timeout
or the caller's deadline), or a broken connection, mark the server unavailable: its calls fail fast with kind
``unavailable`` (calls in flight too). It is then reconnected (a stdio server restarted) once per
:data:`RECONNECTS`; the new session replaces the old one, whose process is shut down beside it. A streamable-HTTP
server is reconnected again later whenever a call needs it (:data:`HTTP_RECONNECT_INTERVAL_S`): after a 401, its
calls work again once the server accepts the token again. A timed-out or
cancelled call is cancelled on the server (``notifications/cancelled``, see ``planwerk.tools.transport``), so
abandoned calls do not pile up there.

**Secrets.** Everything a server sends back (results, error texts, progress messages) and every reason a server is
down passes through the config's :class:`~planwerk.tools.redaction.Redactor` before it leaves this module: no
form of a configured secret (or of a token a supplier handed out) reaches the graph's state, events, checkpoints
or prompts.

**Paths.** With the profile's ``enforce_roots`` (:class:`~planwerk.tools.call_options.CallOptions`), a call
whose arguments (or a ``read_resource`` ``file://`` URI) name a file outside the server's configured ``roots`` is
refused before it is sent, with kind ``forbidden`` (:mod:`planwerk.tools.paths`).

**Tool names.** A tool is offered under its own name unless a server's config gives it a ``prefix`` or another
server has a tool of the same name: then it is ``<prefix or server name>_<name>``
(:func:`planwerk.tools.config.offered_tool_names`). No tool is hidden by a collision; a call goes to the tool's own
server under the server's name for it.

**Destructive tools.** :attr:`ToolSpec.destructive <planwerk.core.tools.ToolSpec.destructive>` (the call waits for
a person's approval) is true only when the server annotates the tool ``destructiveHint: true`` and not
``readOnlyHint: true``. The MCP spec's default for a tool without annotations is "may be destructive"; following
it would make every call of every unannotated third-party tool ask for approval, so only an explicit hint counts.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import dataclasses
import logging
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any

import anyio
import httpx
from langchain_core.tools import BaseTool, ToolException
from langchain_mcp_adapters.interceptors import MCPToolCallRequest, MCPToolCallResult
from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
from mcp import ClientSession
from mcp.shared.exceptions import McpError
from mcp.types import (
    CONNECTION_CLOSED,
    INVALID_PARAMS,
    CallToolResult,
    ClientRequest,
    PaginatedRequestParams,
    ReadResourceRequest,
    ReadResourceRequestParams,
    ReadResourceResult,
    ServerNotification,
    TextContent,
    Tool,
    ToolAnnotations,
    ToolListChangedNotification,
)
from pydantic import ValidationError

from planwerk.core.repair import check_arguments
from planwerk.core.sanitize import sanitize_value
from planwerk.core.tools import ToolError, ToolFailureKind, ToolSpec
from planwerk.tools.auth import http_auth, is_unauthorized
from planwerk.tools.base import CALL_DEADLINE
from planwerk.tools.call_options import CALL_OPTIONS, ProgressSink, ToolProgress
from planwerk.tools.client_features import CURRENT_CALL, ServerFeatures, offered_tools
from planwerk.tools.config import HttpServer, MCPConfig, ServerConfig, StdioServer, load_config, offered_tool_names
from planwerk.tools.content import resource_value, tool_result_value
from planwerk.tools.paths import outside_roots
from planwerk.tools.redaction import SecretStore, secrets_redacted
from planwerk.tools.resources import NOT_FOUND_CODE, READ_RESOURCE, ResourceCatalog, choose_server, read_resource_spec
from planwerk.tools.schema_refs import schema_problem
from planwerk.tools.servers.failures import failure_kind
from planwerk.tools.transport import MessageLimits, connect

log = logging.getLogger(__name__)

_TRANSPORT_ERRORS = (
    httpx.TransportError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    ConnectionError,
    OSError,
)
# The MCP SDK's client raises McpError with the HTTP status 408 when the session's read timeout passes; the
# TypeScript SDK uses -32001 for the same.
_TIMEOUT_CODES = frozenset({408, -32001})

RECONNECTS = 1
"""How often a server that stopped answering (or whose connection broke) is reconnected at once during one
:func:`open_tools`; a stdio server that fails again stays unavailable (a process that keeps crashing is not started
over and over). A streamable-HTTP server is reconnected again on demand, see :data:`HTTP_RECONNECT_INTERVAL_S`."""
HTTP_RECONNECT_INTERVAL_S = 2.0
"""A streamable-HTTP server that went away and whose immediate reconnect failed too (e.g. with 401 while a token was
rotated) is tried again when a call to one of its tools needs it, at most once per this many seconds; the call
waits for that attempt (within its timeout) and goes ahead on the new session when it succeeds. No background
polling: an unused server costs nothing. (A server down from the start never listed its tools, so no call asks
for it; the next :func:`open_tools` tries again.)"""
UNANSWERED_LIMIT = 2
"""Calls in a row without an answer (timed out) after which a server counts as having stopped answering."""
_DEADLINE_SLACK_S = 0.05
"""A cancelled call counts as timed out when it was cancelled this close to (or after) the caller's deadline."""


class _ReportedFailure(Exception):
    """A tool call ended in an error result (``isError``); ``kind`` is what the server named in ``_meta``."""

    def __init__(self, message: str, kind: ToolFailureKind):
        super().__init__(message)
        self.kind: ToolFailureKind = kind


async def _read_failure_kind(
    request: MCPToolCallRequest, handler: Callable[[MCPToolCallRequest], Awaitable[MCPToolCallResult]]
) -> MCPToolCallResult:
    """Tool-call interceptor: an error result becomes :class:`_ReportedFailure` with the kind from its ``_meta``.

    Here, not after the adapter: it turns an error result into an exception with the text only.
    """
    result = await handler(request)
    if isinstance(result, CallToolResult) and result.isError:
        text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
        raise _ReportedFailure(text or "the tool reported an error without a message", failure_kind(result.meta))
    return result


def is_destructive(annotations: ToolAnnotations | None) -> bool:
    """Whether a tool with these MCP annotations needs approval: ``destructiveHint`` true and not read-only.

    Only an explicit hint counts (see the module docstring): no annotations, or no ``destructiveHint``, is False.
    """
    return annotations is not None and annotations.destructiveHint is True and annotations.readOnlyHint is not True


@dataclass(eq=False)
class _Server:
    """One server: its current session's tools, owned by ``task`` (which reconnects, see :func:`_supervise`).

    ``dead`` belongs to the current session: set once that session is gone (or has stopped answering). A
    reconnected session gets a new event, so a late failure of a call to the old session cannot mark the new one
    dead: calls remember the event they started with.
    """

    config: ServerConfig
    store: SecretStore
    """The secrets of the whole config (a server may echo another's), tokens of suppliers included."""
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    """Set once the first session is up."""
    dead: asyncio.Event = field(default_factory=asyncio.Event)
    reason: str = ""
    down_kind: ToolFailureKind = "unavailable"
    """Why the current session is gone: ``unavailable``, or ``unauthorized`` (credentials refused)."""
    tools: list[BaseTool] = field(default_factory=list)
    """The current session's tools."""
    listed: dict[str, Tool] = field(default_factory=dict)
    """The tools as the server listed them (schemas, annotations)."""
    refused: dict[str, str] = field(default_factory=dict)
    """Tools left out of the last listing, with why (a schema reference that is not local or does not resolve)."""
    listings: int = 0
    """How many times the tools were listed (a new session, a ``notifications/tools/list_changed``): a
    :class:`MCPToolSource` rebuilds its catalog when this changes."""
    tools_changed: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by the server's ``notifications/tools/list_changed``; the session's task then lists the tools again."""
    task: asyncio.Task[None] | None = None
    unanswered: int = 0
    """Calls in a row that timed out (reset by any answer)."""
    reconnects: int = 0
    """Sessions opened after the first."""
    features: ServerFeatures = field(init=False, repr=False)
    """What the server may ask of planwerk (elicitation, sampling, roots), and the calls in flight it asks for."""
    session: ClientSession | None = None
    """The current session (calls are made on it directly: see :meth:`MCPToolSource._invoke`)."""
    resources: ResourceCatalog | None = None
    """What the current session lists as resources; None when the server offers none (no ``resources``
    capability), which leaves it out of ``read_resource``."""
    wanted: asyncio.Event = field(default_factory=asyncio.Event)
    """Set by a call that needs a down HTTP server: the supervisor then tries to reconnect it."""
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    """Set when an on-demand reconnect attempt has ended (up or failed)."""
    failed_at: float | None = None
    """Loop time of the last failed on-demand reconnect attempt (calls fail fast for a while after one)."""

    auth: httpx.Auth | None = field(default=None, init=False, repr=False)
    """The HTTP server's auth, kept across reconnects (it holds the current token)."""

    def __post_init__(self) -> None:
        self.features = ServerFeatures(self.config.name, self.config.roots)
        if isinstance(self.config, HttpServer) and self.config.auth is not None:
            self.auth = http_auth(self.config.auth, self.config.url, self.store.add)

    def redact(self, text: str) -> str:
        """``text`` without any form of a secret."""
        return self.store.redactor.text(text)

    @property
    def name(self) -> str:
        return self.config.name

    def tool(self, name: str) -> BaseTool | None:
        """The current session's tool ``name``."""
        return next((t for t in self.tools if t.name == name), None)

    def mark_dead(
        self, reason: str, session: asyncio.Event | None = None, kind: ToolFailureKind = "unavailable"
    ) -> None:
        """Mark ``session`` (default: the current one) gone, with ``reason`` and the failure kind its calls get."""
        dead = self.dead if session is None else session
        if not dead.is_set():
            if dead is self.dead:
                self.reason = self.redact(reason)
                self.down_kind = kind
            dead.set()

    @property
    def reconnects_on_demand(self) -> bool:
        """Whether a down session is tried again when a call needs it (streamable HTTP: no process to crash again)."""
        return self.config.transport == "streamable_http"

    async def reconnect_for_call(self, limit_s: float) -> None:
        """A call needs this down server: ask the supervisor for an attempt and wait for it, up to ``limit_s``.

        Right after a failed attempt (within :data:`HTTP_RECONNECT_INTERVAL_S`) it returns at once: the call then
        fails fast instead of every call waiting on a server that is known to refuse.
        """
        loop = asyncio.get_running_loop()
        if self.stop.is_set() or (
            self.failed_at is not None and loop.time() - self.failed_at < HTTP_RECONNECT_INTERVAL_S
        ):
            return
        self.settled.clear()
        self.wanted.set()
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(limit_s):
                await self.settled.wait()

    def answered(self) -> None:
        """A call got an answer: the server is answering."""
        self.unanswered = 0

    def timed_out(self, session: asyncio.Event) -> None:
        """A call to ``session`` got no answer in time; the second in a row marks the session dead."""
        if session is not self.dead:
            return
        self.unanswered += 1
        if self.unanswered >= UNANSWERED_LIMIT:
            self.mark_dead(f"stopped answering: {self.unanswered} calls in a row timed out", session)


class MCPToolSource:
    """The tools of the open MCP sessions; implements :class:`~planwerk.tools.base.ToolSource`."""

    def __init__(
        self, servers: Mapping[str, _Server], allowed: set[str] | None = None, secrets: SecretStore | None = None
    ):
        self._servers = dict(servers)
        self._secrets = secrets if secrets is not None else SecretStore()
        self._allowed = allowed
        self._included: set[str] = set()
        """Servers whose tools the catalog holds: a server that dies later stays in (its calls fail with kind
        ``unavailable`` and may reconnect it), one that was down when the catalog was first built is added when it
        lists its tools."""
        self._build()

    def _listing_state(self) -> tuple[int, ...]:
        return tuple(server.listings for server in self._servers.values())

    def _fresh(self) -> None:
        """Rebuild the catalog when a server listed its tools again (``tools/list_changed``, a new session)."""
        if self._listing_state() != self._built_for:
            self._build()

    def _build(self) -> None:
        allowed = self._allowed
        self._built_for = self._listing_state()
        self._included |= {server.name for server in self._servers.values() if not server.dead.is_set()}
        self._tools: dict[str, tuple[_Server, BaseTool]] = {}
        self._specs: dict[str, ToolSpec] = {}
        self._names: dict[str, str] = {}
        """Offered name -> the tool's name on its server (they differ where a prefix applies)."""
        offered = [
            (server, tool)
            for server in self._servers.values()
            if server.name in self._included or not server.dead.is_set()
            for tool in server.tools
            if server.config.allowed_tools is None or tool.name in server.config.allowed_tools
        ]
        for server in self._servers.values():
            if server.tools and (unknown := server.config.read_only_tools - {tool.name for tool in server.tools}):
                log.warning("read_only_tools of MCP server %s names tools it does not offer: %s",
                            server.name, ", ".join(sorted(unknown)))  # fmt: skip
        names = offered_tool_names([(s.name, s.config.tool_prefix, t.name) for s, t in offered])
        for (server, tool), name in zip(offered, names, strict=True):
            if allowed is not None and name not in allowed and tool.name not in allowed:
                continue
            if name != tool.name and server.config.tool_prefix is None:
                log.info("MCP tool %s of server %s is offered as %s (another server has a tool of that name)",
                         tool.name, server.name, name)  # fmt: skip
            self._tools[name] = (server, tool)
            self._names[name] = tool.name
            schema = tool.args_schema if isinstance(tool.args_schema, dict) else {"type": "object"}
            listed = server.listed.get(tool.name)
            self._specs[name] = ToolSpec(
                name=name,
                description=tool.description or "",
                input_schema=schema,
                output_schema=(listed.outputSchema or None) if listed is not None else None,
                server=server.name,
                destructive=is_destructive(listed.annotations if listed is not None else None),
                read_only=tool.name in server.config.read_only_tools
                or (listed is not None and listed.annotations is not None and listed.annotations.readOnlyHint is True),
                timeout_s=server.config.timeout_s,
            )
        self._resource_servers = self._offer_read_resource(allowed)
        # What servers say about their tools reaches the planner's prompt: no secret in it either.
        redactor = self._secrets.redactor
        self._specs = {
            name: dataclasses.replace(
                spec,
                description=redactor.text(spec.description),
                input_schema=redactor.value(spec.input_schema),
                output_schema=redactor.value(spec.output_schema),
            )
            for name, spec in self._specs.items()
        }
        if allowed is not None and (missing := sorted(set(allowed) - set(self._tools) - set(self._specs))):
            log.warning("allowed MCP tools not offered by any available server: %s", ", ".join(missing))

    def _offer_read_resource(self, allowed: set[str] | None) -> dict[str, _Server]:
        """Add the built-in ``read_resource`` (``planwerk.tools.resources``) when a live server offers resources;
        the servers it reads from, by name."""
        if READ_RESOURCE in self._tools or (allowed is not None and READ_RESOURCE not in allowed):
            return {}
        servers = {
            s.name: s
            for s in self._servers.values()
            if not s.dead.is_set()
            and s.resources is not None
            and (s.config.allowed_tools is None or READ_RESOURCE in s.config.allowed_tools)
        }
        if servers:
            catalogs = [s.resources for s in servers.values() if s.resources is not None]
            timeout = max(s.config.timeout_s for s in servers.values())
            self._specs[READ_RESOURCE] = read_resource_spec(catalogs, timeout_s=timeout)
        return servers

    @property
    def specs(self) -> Mapping[str, ToolSpec]:
        """The available tools by name (as last listed: a server's ``tools/list_changed`` is followed)."""
        self._fresh()
        return self._specs

    @property
    def unavailable(self) -> Mapping[str, str]:
        """Servers that are down (failed at start or died since), with the reason (redacted)."""
        return {name: s.redact(s.reason) for name, s in self._servers.items() if s.dead.is_set()}

    @property
    def server_names(self) -> tuple[str, ...]:
        """Every configured server's name, up or down."""
        return tuple(self._servers)

    @property
    def refused(self) -> Mapping[str, str]:
        """Tools of live servers that were left out, by server: what was wrong with each."""
        return {
            name: "; ".join(f"tool {tool} left out: {why}" for tool, why in sorted(s.refused.items()))
            for name, s in self._servers.items()
            if s.refused and not s.dead.is_set()
        }

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Call tool ``name``; the normalised result, or :class:`ToolError` naming server and tool. Both are
        redacted: no form of a configured secret is in them."""
        self._fresh()
        try:
            result = await self._call(name, arguments)
        except ToolError as error:
            message = self._secrets.redactor.text(str(error))
            raise ToolError(message, tool=error.tool, server=error.server, kind=error.kind) from None
        # The redactor as it is after the call: a token a refresh during the call fetched is in it.
        return self._secrets.redactor.value(result)

    async def _call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        if name == READ_RESOURCE and self._resource_servers:
            return await self._read_resource(arguments)
        if name not in self._tools:
            if down := self._down_servers_for(name):
                reasons = "; ".join(f"server {s.name} is {_down_words(s)} ({s.reason})" for s in down)
                unauthorized = all(s.down_kind == "unauthorized" for s in down)
                raise ToolError(
                    f"{name}: no available server offers it, and {reasons}",
                    tool=name,
                    server=down[0].name if len(down) == 1 else None,
                    kind="unauthorized" if unauthorized else "unavailable",
                )
            known = ", ".join(sorted(self._tools)) or "none"
            raise ToolError(f"unknown tool {name!r}; available tools: {known}", tool=name, kind="invalid_arguments")
        server, _ = self._tools[name]
        if server.dead.is_set() and server.reconnects_on_demand:
            await server.reconnect_for_call(CALL_OPTIONS.get().timeout_s or server.config.timeout_s)
        tool = server.tool(self._names[name])
        if server.dead.is_set() or tool is None:
            reason = server.reason if server.dead.is_set() else "the tool is gone since the server was reconnected"
            raise ToolError(
                f"{name}: server {server.name} is {_down_words(server)} ({reason})",
                tool=name,
                server=server.name,
                kind=server.down_kind if server.dead.is_set() else "unavailable",
            )
        # Lone surrogates cannot be encoded for the wire and would break the session: U+FFFD instead.
        arguments = sanitize_value(arguments)
        args = check_arguments(self._specs[name].input_schema, arguments, tool=name, server=server.name)
        if CALL_OPTIONS.get().enforce_roots:
            # Resolving paths touches the filesystem (realpath, the working directory): off the event loop, which
            # an ASGI server (langgraph dev refuses blocking calls) shares with every other run.
            await asyncio.to_thread(_check_roots, server, name, self._specs[name].input_schema, args)
        return await self._invoke(server, tool, args)

    def _down_servers_for(self, name: str) -> list[_Server]:
        """The down servers a tool ``name`` that no live server offers may belong to: those that list it in
        ``allowed_tools`` or whose prefix it carries, else every down server (one that failed at start-up never
        told us its tools)."""
        down = [s for s in self._servers.values() if s.dead.is_set()]
        named = [
            s
            for s in down
            if (s.config.allowed_tools is not None and name in s.config.allowed_tools)
            or name.startswith(f"{s.config.tool_prefix or s.name}_")
        ]
        return named or down

    async def _invoke(self, server: _Server, tool: BaseTool, args: dict[str, Any]) -> Any:
        # The session's call_tool, not the adapter's tool: only it takes a per-call timeout and a progress
        # callback, and the adapter cannot convert audio (NotImplementedError) and drops blob resources and
        # resource links; planwerk.tools.content keeps every content type. Not traced as a LangChain tool run
        # either, whose recorded outputs would hold the server's raw error text (which may contain a configured
        # secret) before we redact it: the call is traced through the redacted events and the call log.
        options = CALL_OPTIONS.get()
        timeout = options.timeout_s or server.config.timeout_s
        progress = _progress_callback(options.on_progress, tool.name, server.store)

        async def call(session: ClientSession) -> CallToolResult:
            result = await session.call_tool(
                tool.name,
                args,
                # The session's own read timeout is the server's; an override may be longer. A little slack, so
                # that our timeout (below) speaks first.
                read_timeout_seconds=timedelta(seconds=timeout + 1),
                progress_callback=progress,
            )
            if result.isError:
                text = "\n".join(block.text for block in result.content if isinstance(block, TextContent))
                raise _ReportedFailure(
                    text or "the tool reported an error without a message", failure_kind(result.meta)
                )
            return result

        return tool_result_value(await self._request(server, tool.name, call, timeout))

    async def _read_resource(self, arguments: Mapping[str, Any]) -> Any:
        """The built-in ``read_resource``: check the arguments, choose the server, read, convert."""
        arguments = sanitize_value(arguments)
        args = check_arguments(self._specs[READ_RESOURCE].input_schema, arguments, tool=READ_RESOURCE, server=None)
        catalogs = [s.resources for s in self._resource_servers.values() if s.resources is not None]
        name, uri = choose_server(args, catalogs)
        server = self._resource_servers[name]
        if CALL_OPTIONS.get().enforce_roots:
            await asyncio.to_thread(_check_roots, server, READ_RESOURCE, None, {"uri": uri})
        if server.dead.is_set() or server.session is None:
            raise ToolError(
                f"{READ_RESOURCE}: server {server.name} is {_down_words(server)} ({server.reason})",
                tool=READ_RESOURCE,
                server=server.name,
                kind=server.down_kind if server.dead.is_set() else "unavailable",
            )
        timeout = CALL_OPTIONS.get().timeout_s or server.config.timeout_s

        try:
            params = ReadResourceRequestParams(uri=uri)
        except ValidationError:
            raise ToolError(
                f"{READ_RESOURCE}: {uri!r} is not a URI; expected one such as a resource_link's uri",
                tool=READ_RESOURCE,
                server=server.name,
                kind="invalid_arguments",
            ) from None

        async def read(session: ClientSession) -> ReadResourceResult:
            # ClientSession.read_resource takes no timeout: the request itself, with ours.
            try:
                return await session.send_request(
                    ClientRequest(ReadResourceRequest(params=params)),
                    ReadResourceResult,
                    request_read_timeout_seconds=timedelta(seconds=timeout + 1),
                )
            except McpError as exc:
                if exc.error.code == NOT_FOUND_CODE:  # the spec's "resource not found": the input found nothing
                    raise _ReportedFailure(exc.error.message, "not_found") from None
                raise

        return resource_value(await self._request(server, READ_RESOURCE, read, timeout))

    async def _request(
        self, server: _Server, tool: str, make: Callable[[ClientSession], Awaitable[Any]], timeout: float
    ) -> Any:
        """Run ``make(session)`` on the server's current session, bounded by ``timeout`` and by the session's
        end; every failure becomes a :class:`ToolError` with its kind."""
        if server.session is None:
            raise ToolError(
                f"{tool}: server {server.name} has no session", tool=tool, server=server.name, kind="unavailable"
            )
        session = server.dead  # this call's session (see _Server)
        # What the server asks during this call (elicitation, sampling) is answered for this call's channel; the
        # call's task runs with it current, so the session notes the ids of the requests it sends there.
        channel = server.features.current_channel()
        token = CURRENT_CALL.set(channel)
        try:
            invoke = asyncio.ensure_future(make(server.session))
        finally:
            CURRENT_CALL.reset(token)
        died = asyncio.ensure_future(session.wait())
        server.features.track(invoke, channel)
        try:
            async with asyncio.timeout(timeout):
                await asyncio.wait({invoke, died}, return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            server.timed_out(session)
            raise ToolError(
                f"{tool} on server {server.name} timed out after {timeout:g} s",
                tool=tool,
                server=server.name,
                kind="timeout",
            ) from None
        except asyncio.CancelledError:
            # The caller's own timeout (execution.call_one) arrives as a cancellation: it counts as an unanswered
            # call like ours. Any other cancellation (a cancelled run) says nothing about the server.
            deadline = CALL_DEADLINE.get()
            if deadline is not None and asyncio.get_running_loop().time() >= deadline - _DEADLINE_SLACK_S:
                server.timed_out(session)
            raise
        finally:
            died.cancel()
            if not invoke.done():
                invoke.cancel()
                with contextlib.suppress(BaseException):
                    await invoke
        if invoke.cancelled():
            refused = server.down_kind == "unauthorized"
            raise ToolError(
                f"{tool}: server {server.name} "
                + ("refused the credentials" if refused else "went away")
                + f" during the call ({server.reason})",
                tool=tool,
                server=server.name,
                kind=server.down_kind,
            )
        try:
            result = invoke.result()
        except (Exception, BaseExceptionGroup) as exc:
            raise self._tool_error(server, tool, exc, session) from None
        server.answered()
        return result

    def _tool_error(
        self, server: _Server, tool: str, exc: BaseException, session: asyncio.Event | None = None
    ) -> ToolError:
        session = server.dead if session is None else session
        leaf = _leaf(exc)
        code = leaf.error.code if isinstance(leaf, McpError) else None
        if code in _TIMEOUT_CODES:
            server.timed_out(session)
        elif not isinstance(leaf, _TRANSPORT_ERRORS) and code != CONNECTION_CLOSED:
            server.answered()  # an error is an answer
        if isinstance(leaf, _ReportedFailure):  # the tool ran and reported an error result, with its kind
            text = server.redact(str(leaf))
            return ToolError(
                f"{tool} on server {server.name} failed: {text}", tool=tool, server=server.name, kind=leaf.kind
            )
        if isinstance(leaf, ToolException):  # an error result that bypassed the interceptor: no kind to read
            text = server.redact(str(leaf))
            return ToolError(f"{tool} on server {server.name} failed: {text}", tool=tool, server=server.name)
        what = server.redact(_describe(leaf))
        if is_unauthorized(leaf):
            server.mark_dead(what, session, kind="unauthorized")
            return ToolError(
                f"{tool}: server {server.name} refused the credentials ({what})",
                tool=tool,
                server=server.name,
                kind="unauthorized",
            )
        if code in _TIMEOUT_CODES:
            return ToolError(
                f"{tool} on server {server.name} timed out: {what}",
                tool=tool,
                server=server.name,
                kind="timeout",
            )
        if code == INVALID_PARAMS:  # the server rejected the call at the protocol level (JSON-RPC -32602)
            return ToolError(
                f"invalid arguments for {tool} on server {server.name}: {what}",
                tool=tool,
                server=server.name,
                kind="invalid_arguments",
            )
        if isinstance(leaf, _TRANSPORT_ERRORS) or code == CONNECTION_CLOSED:
            server.mark_dead(what, session)
            return ToolError(
                f"{tool}: server {server.name} is unavailable ({what})",
                tool=tool,
                server=server.name,
                kind="unavailable",
            )
        return ToolError(f"{tool} on server {server.name} failed: {what}", tool=tool, server=server.name)


def _check_roots(server: _Server, tool: str, schema: Mapping[str, Any] | None, args: Mapping[str, Any]) -> None:
    """Refuse (kind ``forbidden``) a call whose arguments name a file outside the server's roots, before it is
    sent (:mod:`planwerk.tools.paths`)."""
    config = server.config
    base = (config.cwd or os.getcwd()) if isinstance(config, StdioServer) else None
    outside = outside_roots(schema, args, [root.uri for root in config.roots], base)
    if not outside:
        return
    first = outside[0]
    roots = ", ".join(root.uri for root in config.roots) or "none configured"
    raise ToolError(
        f"{tool}: argument {first.where} = {first.value!r} names a file outside the roots of server {server.name} "
        f"(roots: {roots}); the call was not sent (the profile enforces roots)",
        tool=tool,
        server=server.name,
        kind="forbidden",
    )


def _down_words(server: _Server) -> str:
    """How a down server's state reads in a message."""
    return "refusing the credentials" if server.down_kind == "unauthorized" else "unavailable"


def _progress_callback(
    sink: ProgressSink | None, tool: str, store: SecretStore | None = None
) -> Callable[..., Awaitable[None]] | None:
    """The MCP progress callback that hands notifications to ``sink`` (messages redacted with ``store``); None (no
    progress token is sent) without one."""
    if sink is None:
        return None
    # The session's reader task calls back, outside the caller's context; the sink runs in the caller's (LangGraph's
    # stream writer finds the run's config there).
    context = contextvars.copy_context()

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        if message and store is not None:
            message = store.redactor.text(message)
        try:
            context.run(sink, ToolProgress(progress=progress, total=total, message=message))
        except Exception:  # a failing sink must not break the session's reader task
            log.warning("progress of %s could not be delivered", tool, exc_info=True)

    return on_progress


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    if isinstance(exc, httpx.HTTPStatusError):  # one line: httpx adds a line pointing to a web page
        response = exc.response
        return f"HTTP {response.status_code} {response.reason_phrase} from {exc.request.url}"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _supervise(server: _Server) -> None:
    """Own the server's sessions: the first, and up to :data:`RECONNECTS` more at once after it went away; a
    streamable-HTTP server also later, whenever a call needs it (:data:`HTTP_RECONNECT_INTERVAL_S`).

    A new session starts while the old one still shuts down (closing a stdio server may take seconds: stdin is
    closed, then the process tree is terminated), so calls fail fast only until the new one is up.
    """
    sessions: set[asyncio.Task[tuple[str, ToolFailureKind]]] = set()
    loop = asyncio.get_running_loop()
    try:
        attempt = 0
        while True:
            gone = server.dead if attempt == 0 else asyncio.Event()
            up = asyncio.Event()
            task = asyncio.create_task(_hold_session(server, up, gone), name=f"mcp-session-{server.name}")
            sessions.add(task)
            task.add_done_callback(sessions.discard)
            await _first(up.wait(), gone.wait(), server.stop.wait())
            if server.stop.is_set():
                break
            if not up.is_set():
                if attempt > 0:
                    done, _ = await asyncio.wait({task}, timeout=1)
                    why, kind = task.result() if done and not task.cancelled() else ("no answer", "unavailable")
                    server.reason = server.redact(f"{server.reason}; reconnecting failed: {why}")
                    server.down_kind = kind
                server.failed_at = loop.time()
                server.settled.set()
                if not server.reconnects_on_demand or not await _reconnect_wanted(server):
                    break
                attempt += 1
                continue
            if attempt > 0:
                server.reconnects += 1
                server.unanswered = 0
                server.reason = ""
                server.dead = gone
                server.failed_at = None
                log.warning("MCP server %s is back (reconnected)", server.name)
            server.ready.set()
            server.settled.set()
            await _first(gone.wait(), server.stop.wait())
            if server.stop.is_set():
                break
            attempt += 1
            if attempt <= RECONNECTS:
                log.warning("MCP server %s is unavailable (%s); reconnecting", server.name, server.reason)
            elif not server.reconnects_on_demand or not await _reconnect_wanted(server):
                break
    except asyncio.CancelledError:  # cut off (start-up took too long, or shutdown ran out of time)
        for task in sessions:
            task.cancel()
        raise
    finally:
        server.stop.set()
        server.settled.set()
        if sessions:
            _, pending = await asyncio.wait(set(sessions), timeout=10)
            for task in pending:  # a session that does not close in time is cut off
                task.cancel()


async def _reconnect_wanted(server: _Server) -> bool:
    """Wait until a call needs the down server (and the last attempt is :data:`HTTP_RECONNECT_INTERVAL_S` old);
    False when the sources close first."""
    server.wanted.clear()
    await _first(server.wanted.wait(), server.stop.wait())
    if server.failed_at is not None:
        delay = server.failed_at + HTTP_RECONNECT_INTERVAL_S - asyncio.get_running_loop().time()
        if delay > 0 and not server.stop.is_set():
            await _first(asyncio.sleep(delay), server.stop.wait())
    if not server.stop.is_set():
        log.warning("MCP server %s is unavailable (%s); reconnecting for a call", server.name, server.reason)
    return not server.stop.is_set()


async def _first(*waits: Awaitable[Any]) -> None:
    """Wait until the first of ``waits`` is done; cancel the rest."""
    tasks = [asyncio.ensure_future(w) for w in waits]
    try:
        await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in tasks:
            task.cancel()


async def _hold_session(server: _Server, up: asyncio.Event, gone: asyncio.Event) -> tuple[str, ToolFailureKind]:
    """Open one session, load its tools, then hold it until ``stop`` or until ``gone`` (or until it breaks).

    Returns why it ended (redacted) and the failure kind that says it (``unauthorized`` or ``unavailable``).
    """
    config = server.config
    limits = MessageLimits(max_message_bytes=getattr(config, "max_message_bytes", MessageLimits.max_message_bytes))
    reason = "closed"
    kind: ToolFailureKind = "unavailable"
    try:
        # The session's callbacks answer what the server asks of planwerk (elicitation, sampling, roots).
        connection = config.connection()
        if server.auth is not None:
            connection["auth"] = server.auth
        connection["secrets"] = server.store
        callbacks = _redacting(server.features.session_kwargs(), server.store)
        connection["session_kwargs"] = {
            **connection.get("session_kwargs", {}),
            **callbacks,
            "message_handler": _notice_tool_changes(server),
        }
        async with connect(connection, limits=limits) as session:
            # One listing gives both the LangChain tools and what the adapter does not keep in a usable form
            # (output schemas for $ref checks, annotations for approval).
            await _load_tools(session, server)
            server.resources = await _list_resources(session, server.name)
            server.session = session
            up.set()
            await _first(server.stop.wait(), gone.wait(), _follow_tool_changes(session, server))
    except (Exception, BaseExceptionGroup) as exc:  # the session broke: this server only is gone
        leaf = _leaf(exc)
        reason = _describe(leaf)
        if is_unauthorized(leaf):
            kind = "unauthorized"
    finally:
        server.mark_dead(reason, gone, kind)
    return server.redact(reason), kind


def _redacting(callbacks: dict[str, Any], store: SecretStore) -> dict[str, Any]:
    """The session's callbacks for what a server asks (sampling, elicitation), with the request's texts redacted
    first: they reach the run's model, its events and the thread's interrupt."""

    def wrap(callback: Callable[[Any, Any], Awaitable[Any]]) -> Callable[[Any, Any], Awaitable[Any]]:
        async def redacted(context: Any, params: Any) -> Any:
            data = params.model_dump(mode="json", by_alias=True, exclude_none=True)
            cleaned = store.redactor.value(data)
            return await callback(context, params if cleaned is data else type(params).model_validate(cleaned))

        return redacted

    return {
        name: wrap(callback) if name in ("sampling_callback", "elicitation_callback") else callback
        for name, callback in callbacks.items()
    }


async def _load_tools(session: ClientSession, server: _Server) -> None:
    """List the server's tools into ``server`` (one listing gives both the LangChain tools and what the adapter
    does not keep in a usable form: output schemas for $ref checks, annotations for approval)."""
    listed = offered_tools(await _list_tools(session), server.name)  # not those that need tasks
    listed, server.refused = usable_schemas(listed, server.name)  # no remote or dangling $ref
    server.listed = {t.name: t for t in listed}
    server.tools = [
        convert_mcp_tool_to_langchain_tool(session, t, server_name=server.name, tool_interceptors=[_read_failure_kind])
        for t in listed
    ]
    server.listings += 1


def _notice_tool_changes(server: _Server) -> Callable[[Any], Awaitable[None]]:
    """The session's ``message_handler``: a ``tools/list_changed`` notification marks the tools stale."""

    async def handle(message: Any) -> None:
        if isinstance(message, ServerNotification) and isinstance(message.root, ToolListChangedNotification):
            server.tools_changed.set()
        await anyio.lowlevel.checkpoint()

    return handle


async def _follow_tool_changes(session: ClientSession, server: _Server) -> None:
    """List the tools again whenever the server says they changed (never returns; a failed listing is logged and
    the previous catalog kept)."""
    while True:
        await server.tools_changed.wait()
        server.tools_changed.clear()
        try:
            async with asyncio.timeout(server.config.timeout_s):
                await _load_tools(session, server)
            log.info("MCP server %s changed its tools; now %d", server.name, len(server.tools))
        except (Exception, BaseExceptionGroup) as exc:  # the session itself reports a broken connection
            log.warning("MCP server %s: listing its changed tools failed: %s", server.name, _describe(_leaf(exc)))


def usable_schemas(tools: list[Tool], server: str) -> tuple[list[Tool], dict[str, str]]:
    """The tools whose input and output schemas reference only their own parts, and the others with why
    (:mod:`planwerk.tools.schema_refs`: nothing is fetched); each refused tool is logged."""
    usable: list[Tool] = []
    refused: dict[str, str] = {}
    for tool in tools:
        problem = schema_problem(tool.inputSchema, what="input schema") or schema_problem(
            tool.outputSchema, what="output schema"
        )
        if problem is None:
            usable.append(tool)
            continue
        refused[tool.name] = problem
        log.warning("MCP tool %s of server %s is not offered: %s", tool.name, server, problem)
    return usable, refused


async def _list_resources(session: ClientSession, name: str) -> ResourceCatalog | None:
    """The server's resources and templates (bounded pages), or None when it offers none.

    A server that advertises the ``resources`` capability but lists neither a resource nor a template counts as
    offering none: FastMCP advertises it for every server, and a ``read_resource`` line in the catalog for nothing
    costs a small model's window."""
    capabilities = session.get_server_capabilities()
    if capabilities is None or capabilities.resources is None:
        return None
    uris: list[str] = []
    templates: list[str] = []
    try:
        cursor: str | None = None
        for _ in range(100):  # a server that keeps returning a cursor must not hang the start-up
            page = await session.list_resources(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
            uris.extend(str(r.uri) for r in page.resources)
            if not (cursor := page.nextCursor):
                break
        cursor = None
        for _ in range(100):
            listed = await session.list_resource_templates(
                params=PaginatedRequestParams(cursor=cursor) if cursor else None
            )
            templates.extend(t.uriTemplate for t in listed.resourceTemplates)
            if not (cursor := listed.nextCursor):
                break
    except McpError as exc:  # resources are an extra: a server that cannot list them still serves its tools
        log.warning("MCP server %s: listing its resources failed (%s); read_resource reads by URI only", name, exc)
        return ResourceCatalog(server=name)
    if not uris and not templates:
        return None
    return ResourceCatalog(server=name, uris=tuple(uris), templates=tuple(templates))


async def _list_tools(session: ClientSession) -> list[Tool]:
    """Every tool the server offers, across pages."""
    tools: list[Tool] = []
    cursor: str | None = None
    for _ in range(1000):  # a server that keeps returning a cursor must not hang the start-up
        page = await session.list_tools(params=PaginatedRequestParams(cursor=cursor) if cursor else None)
        tools.extend(page.tools)
        cursor = page.nextCursor
        if not cursor:
            break
    return tools


@contextlib.asynccontextmanager
async def open_tools(
    config: MCPConfig | str | Path | Mapping[str, Any] | None = None, *, allowed: set[str] | None = None
) -> AsyncIterator[MCPToolSource]:
    """Open one persistent session per configured server and yield their tools as a :class:`MCPToolSource`.

    ``config`` is an :class:`MCPConfig`, anything :func:`load_config` reads, or None for the bundled servers.
    ``allowed`` limits the tools by name (on top of each server's ``allowed_tools``). A server that cannot be
    started is logged as a warning naming it, and the others are used.
    """
    cfg = config if isinstance(config, MCPConfig) else load_config(config)
    with secrets_redacted(cfg.secrets()) as store:
        async with _open_sessions(cfg, allowed, store) as source:
            yield source


@contextlib.asynccontextmanager
async def _open_sessions(cfg: MCPConfig, allowed: set[str] | None, store: SecretStore) -> AsyncIterator[MCPToolSource]:
    servers = {name: _Server(config=s, store=store) for name, s in cfg.servers.items()}
    for server in servers.values():
        server.task = asyncio.create_task(_supervise(server), name=f"mcp-server-{server.name}")
    try:
        await asyncio.gather(*(_wait_started(s) for s in servers.values()))
        for server in servers.values():
            if not server.ready.is_set():
                log.warning("MCP server %s is %s: %s", server.name, _down_words(server), server.reason)
        yield MCPToolSource(servers, allowed, store)
    finally:
        for server in servers.values():
            server.stop.set()
        tasks = [s.task for s in servers.values() if s.task is not None]
        _, pending = await asyncio.wait(tasks, timeout=10) if tasks else (set(), set())
        for task in pending:  # a session that does not close in time is cut off
            task.cancel()
        if pending:
            await asyncio.wait(pending, timeout=5)


async def _wait_started(server: _Server) -> None:
    ready = asyncio.ensure_future(server.ready.wait())
    dead = asyncio.ensure_future(server.dead.wait())
    try:
        done, _ = await asyncio.wait(
            {ready, dead}, timeout=server.config.timeout_s, return_when=asyncio.FIRST_COMPLETED
        )
    finally:
        ready.cancel()
        dead.cancel()
    if not done:
        server.mark_dead(f"no answer within {server.config.timeout_s:g} s at start-up")
        if server.task is not None:
            server.task.cancel()
