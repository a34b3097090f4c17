"""MCP tools as a :class:`~planwerk.tools.base.ToolSource`, over persistent sessions.

:func:`open_tools` opens ONE session per configured server for its whole lifetime (a session per call costs a
process spawn over stdio, about 0.5 s). Each session lives in its own owner task: when a server dies, the
transport's ExceptionGroup ends that task only, the server is marked unavailable, and calls to the other
servers go on. Every call is bounded by the server's timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import httpx
from langchain_core.tools import BaseTool, ToolException
from langchain_mcp_adapters.client import MultiServerMCPClient
from langchain_mcp_adapters.tools import load_mcp_tools
from mcp.shared.exceptions import McpError

from planwerk.tools.base import ToolError, ToolSpec
from planwerk.tools.config import MCPConfig, ServerConfig, load_config, redact
from planwerk.tools.redaction import secrets_redacted
from planwerk.tools.repair import check_arguments
from planwerk.tools.results import normalise

log = logging.getLogger(__name__)

_TRANSPORT_ERRORS = (
    httpx.TransportError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    ConnectionError,
    OSError,
)


@dataclass(eq=False)
class _Server:
    """One server's session, owned by ``task``; ``dead`` is set once the session is gone."""

    config: ServerConfig
    secrets: tuple[str, ...]
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    ready: asyncio.Event = field(default_factory=asyncio.Event)
    dead: asyncio.Event = field(default_factory=asyncio.Event)
    reason: str = ""
    tools: list[BaseTool] = field(default_factory=list)
    output_schemas: dict[str, Any] = field(default_factory=dict)
    task: asyncio.Task[None] | None = None

    @property
    def name(self) -> str:
        return self.config.name

    def mark_dead(self, reason: str) -> None:
        if not self.dead.is_set():
            self.reason = redact(reason, self.secrets)
            self.dead.set()


class MCPToolSource:
    """The tools of the open MCP sessions; implements :class:`~planwerk.tools.base.ToolSource`."""

    def __init__(self, servers: Mapping[str, _Server], allowed: set[str] | None = None):
        self._servers = dict(servers)
        self._tools: dict[str, tuple[_Server, BaseTool]] = {}
        self._specs: dict[str, ToolSpec] = {}
        for server in self._servers.values():
            if server.dead.is_set():
                continue
            for tool in server.tools:
                if allowed is not None and tool.name not in allowed:
                    continue
                if server.config.allowed_tools is not None and tool.name not in server.config.allowed_tools:
                    continue
                if tool.name in self._tools:
                    other = self._tools[tool.name][0].name
                    log.warning(
                        "MCP tool %s of server %s hidden: server %s has a tool of that name",
                        tool.name,
                        server.name,
                        other,
                    )
                    continue
                self._tools[tool.name] = (server, tool)
                schema = tool.args_schema if isinstance(tool.args_schema, dict) else {"type": "object"}
                self._specs[tool.name] = ToolSpec(
                    name=tool.name,
                    description=tool.description or "",
                    input_schema=schema,
                    output_schema=server.output_schemas.get(tool.name),
                    server=server.name,
                )
        if allowed is not None and (missing := sorted(set(allowed) - set(self._tools))):
            log.warning("allowed MCP tools not offered by any available server: %s", ", ".join(missing))

    @property
    def specs(self) -> Mapping[str, ToolSpec]:
        """The available tools by name."""
        return self._specs

    @property
    def unavailable(self) -> Mapping[str, str]:
        """Servers that are down (failed at start or died since), with the reason."""
        return {name: s.reason for name, s in self._servers.items() if s.dead.is_set()}

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """Call tool ``name``; the normalised result, or :class:`ToolError` naming server and tool."""
        if name not in self._tools:
            known = ", ".join(sorted(self._tools)) or "none"
            raise ToolError(f"unknown tool {name!r}; available tools: {known}", tool=name, kind="invalid_arguments")
        server, tool = self._tools[name]
        if server.dead.is_set():
            raise ToolError(
                f"{name}: server {server.name} is unavailable ({server.reason})",
                tool=name,
                server=server.name,
                kind="unavailable",
            )
        args = check_arguments(self._specs[name].input_schema, arguments, tool=name, server=server.name)
        content, artifact = await self._invoke(server, tool, args)
        return normalise(content, artifact)

    async def _invoke(self, server: _Server, tool: BaseTool, args: dict[str, Any]) -> tuple[Any, Any]:
        # The adapter's coroutine, not tool.ainvoke: it gives (content, structured-content artifact) and raises a
        # ToolException on a tool error, and it is not traced as a LangChain tool run, whose recorded outputs
        # would hold the server's raw error text (which may contain a configured secret) before we redact it.
        # The call is traced at the graph level through the redacted events and the call log.
        coroutine = getattr(tool, "coroutine", None)
        if coroutine is None:
            raise ToolError(f"{tool.name}: the MCP adapter gave no coroutine", tool=tool.name, server=server.name)
        invoke = asyncio.ensure_future(coroutine(**args))
        died = asyncio.ensure_future(server.dead.wait())
        timeout = server.config.timeout_s
        try:
            async with asyncio.timeout(timeout):
                await asyncio.wait({invoke, died}, return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            raise ToolError(
                f"{tool.name} on server {server.name} timed out after {timeout:g} s",
                tool=tool.name,
                server=server.name,
                kind="timeout",
            ) from None
        finally:
            died.cancel()
            if not invoke.done():
                invoke.cancel()
                with contextlib.suppress(BaseException):
                    await invoke
        if invoke.cancelled():
            raise ToolError(
                f"{tool.name}: server {server.name} went away during the call ({server.reason})",
                tool=tool.name,
                server=server.name,
                kind="unavailable",
            )
        try:
            return invoke.result()
        except (Exception, BaseExceptionGroup) as exc:
            raise self._tool_error(server, tool.name, exc) from None

    def _tool_error(self, server: _Server, tool: str, exc: BaseException) -> ToolError:
        leaf = _leaf(exc)
        if isinstance(leaf, ToolException):  # the tool itself reported an error (isError result)
            text = redact(str(leaf), server.secrets)
            return ToolError(f"{tool} on server {server.name} failed: {text}", tool=tool, server=server.name)
        what = redact(_describe(leaf), server.secrets)
        if isinstance(leaf, McpError) and "timed out" in str(leaf).lower():
            return ToolError(
                f"{tool} on server {server.name} timed out: {what}",
                tool=tool,
                server=server.name,
                kind="timeout",
            )
        if isinstance(leaf, _TRANSPORT_ERRORS) or (isinstance(leaf, McpError) and "closed" in str(leaf).lower()):
            server.mark_dead(what)
            return ToolError(
                f"{tool}: server {server.name} is unavailable ({what})",
                tool=tool,
                server=server.name,
                kind="unavailable",
            )
        return ToolError(f"{tool} on server {server.name} failed: {what}", tool=tool, server=server.name)


def _leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def _describe(exc: BaseException) -> str:
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


async def _own_session(client: MultiServerMCPClient, server: _Server) -> None:
    """Open the session, load the tools, then hold the session until ``stop`` (or until it breaks)."""
    try:
        async with client.session(server.name) as session:
            listed = await session.list_tools()
            server.output_schemas = {t.name: t.outputSchema for t in listed.tools if t.outputSchema}
            server.tools = await load_mcp_tools(session, server_name=server.name)
            server.ready.set()
            await server.stop.wait()
        server.mark_dead("closed")
    except (Exception, BaseExceptionGroup) as exc:  # the session broke: this server only is gone
        server.mark_dead(_describe(_leaf(exc)))
    finally:
        server.mark_dead("closed")


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
    with secrets_redacted(cfg.secrets()):
        async with _open_sessions(cfg, allowed) as source:
            yield source


@contextlib.asynccontextmanager
async def _open_sessions(cfg: MCPConfig, allowed: set[str] | None) -> AsyncIterator[MCPToolSource]:
    client = MultiServerMCPClient({name: s.connection() for name, s in cfg.servers.items()})
    servers = {name: _Server(config=s, secrets=s.secrets()) for name, s in cfg.servers.items()}
    for server in servers.values():
        server.task = asyncio.create_task(_own_session(client, server), name=f"mcp-session-{server.name}")
    try:
        await asyncio.gather(*(_wait_started(s) for s in servers.values()))
        for server in servers.values():
            if not server.ready.is_set():
                log.warning("MCP server %s is unavailable: %s", server.name, server.reason)
        yield MCPToolSource(servers, allowed)
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
