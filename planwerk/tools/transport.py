"""MCP connections as planwerk opens them: a linear, size-guarded stdio reader and a session that cancels.

Three things the MCP SDK (1.30) does not do, measured on this project's machine:

- **Large stdio messages.** The SDK's stdio client joins every 64 KB chunk onto the pending line and splits the
  whole string again (``(buffer + chunk).split("\\n")``): reading one line of n bytes costs O(n²/64 KB). A 16 MB
  result took 8.2 s, 32 MB 21 s, and cProfile put 96 % of it in that loop (pydantic's JSON validation: 0.09 s).
  :func:`stdio_transport` keeps the pieces of a line in a list and looks for the newline only in the new chunk,
  so reading is linear; and a line longer than :attr:`MessageLimits.max_message_bytes` is skipped without being
  kept or parsed (memory stays bounded). The request it answers fails at once with a JSON-RPC error naming the
  size (:data:`MESSAGE_TOO_LARGE`), when the response's ``id`` can be read from the line's head or tail.
- **Large HTTP messages.** The SDK reads a streamable-HTTP message whole before parsing it; :func:`connect` gives
  it an httpx client whose transport counts each message's bytes as they stream in
  (:mod:`planwerk.tools.http_guard`), with the same limit and the same error.
- **Secrets in a server's stderr.** The SDK hands the server's stderr to planwerk's; a server that prints its
  environment or a token would put it in planwerk's logs. :func:`stdio_transport` reads it line by line and
  writes each line redacted (:class:`planwerk.tools.redaction.SecretStore`) to planwerk's stderr.
- **Cancelling abandoned requests.** ``BaseSession.send_request`` sends no ``notifications/cancelled`` when the
  awaiting task is cancelled or the read timeout passes, so the server kept running every timed-out call (5 → 25
  running tasks after 20 timeouts). :class:`CancellingSession` sends it in both cases.

:func:`connect` opens a server of either transport with these, as ``langchain_mcp_adapters`` would otherwise.
"""

from __future__ import annotations

import codecs
import contextlib
import logging
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any, TextIO

import anyio
import anyio.lowlevel
import httpx
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp import ClientSession
from mcp.shared.exceptions import McpError
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp.types import (
    CancelledNotification,
    CancelledNotificationParams,
    ClientNotification,
    ErrorData,
    InitializeRequest,
    JSONRPCError,
    JSONRPCMessage,
)

from planwerk.tools.client_features import CURRENT_CALL, SERVER_REQUEST_ORIGIN, RequestOrigin

# The SDK's client, except that a request whose response stream ends unanswered fails at once (see the module).
from planwerk.tools.http_answers import streamable_http_client
from planwerk.tools.http_guard import MESSAGE_TOO_LARGE as MESSAGE_TOO_LARGE
from planwerk.tools.http_guard import guarded_client
from planwerk.tools.redaction import SecretStore

log = logging.getLogger(__name__)


MAX_STDERR_LINE = 64 * 1024
"""A longer stderr line of a server is written (redacted) in pieces of this many characters."""
CANCEL_SEND_TIMEOUT_S = 2.0
"""How long sending ``notifications/cancelled`` may take; a server that does not read its input cannot hold the
caller longer."""

_ID_AT_HEAD = re.compile(rb'^\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")')
"""The ``id`` of a response serialised with ``id`` first (Python SDK servers: jsonrpc, id, result)."""
_ID_AT_TAIL = re.compile(rb'"id"\s*:\s*(-?\d{1,18}|"[^"\\]{0,200}")\s*\}\s*$')
"""The ``id`` of a response serialised with ``id`` last (the TypeScript SDK: result, jsonrpc, id)."""
_EDGE_BYTES = 512
"""Bytes kept of the head and of the tail of a line that is skipped, to find its ``id``."""


@dataclass(frozen=True)
class MessageLimits:
    """Bounds on what one server may send."""

    max_message_bytes: int = 8 * 1024 * 1024
    """One JSON-RPC message (a result with its JSON envelope); a longer one is skipped unread."""


class CancellingSession(ClientSession):
    """A :class:`ClientSession` that tells the server when a request is abandoned (``notifications/cancelled``).

    A request is abandoned when its task is cancelled (the caller's timeout, a cancelled run) or the session's
    read timeout passes. ``initialize`` is never cancelled (the MCP spec forbids it).
    """

    related_streams: bool = False
    """Whether the transport tells on which request's stream a server's request came (streamable HTTP)."""

    async def send_request(self, request: Any, result_type: Any, *args: Any, **kwargs: Any) -> Any:
        """Send ``request`` and wait for its response; on cancellation or timeout, cancel it on the server."""
        # BaseSession.send_request takes this id before its first await, so nothing else can take it first.
        request_id = self._request_id
        if (channel := CURRENT_CALL.get()) is not None:  # a server's request naming this id belongs to that call
            channel.request_ids.add(request_id)
        try:
            return await super().send_request(request, result_type, *args, **kwargs)
        except anyio.get_cancelled_exc_class():
            with anyio.CancelScope(shield=True):
                await self._cancel(request, request_id, "the client stopped waiting")
            raise
        except McpError as exc:
            if exc.error.code == httpx.codes.REQUEST_TIMEOUT:
                await self._cancel(request, request_id, "timed out")
            raise

    async def _received_request(self, responder: Any) -> None:
        """Handle a server's request with its origin current (:data:`SERVER_REQUEST_ORIGIN`): over HTTP, the id of
        the request on whose stream it came (:class:`~planwerk.tools.http_answers.AnsweringTransport` notes it)."""
        if not self.related_streams:
            await super()._received_request(responder)
            return
        metadata = responder.message_metadata
        related = metadata.related_request_id if isinstance(metadata, ServerMessageMetadata) else None
        token = SERVER_REQUEST_ORIGIN.set(RequestOrigin(told=True, related_request_id=related))
        try:
            await super()._received_request(responder)
        finally:
            SERVER_REQUEST_ORIGIN.reset(token)

    async def _cancel(self, request: Any, request_id: int, reason: str) -> None:
        if isinstance(getattr(request, "root", request), InitializeRequest):
            return
        notification = ClientNotification(
            CancelledNotification(params=CancelledNotificationParams(requestId=request_id, reason=reason))
        )
        # The session may be closing or its writer stuck: a cancellation is best effort, never a new failure.
        with anyio.move_on_after(CANCEL_SEND_TIMEOUT_S), contextlib.suppress(Exception):
            await self.send_notification(notification)


class _LineReader:
    """Splits a byte stream into lines in linear time; lines over ``limit`` bytes are skipped, not stored."""

    def __init__(self, limit: int):
        self.limit = limit
        self._pieces: list[bytes] = []
        self._size = 0
        self._head = b""
        self._tail = b""
        self._skipping = False

    def feed(self, chunk: bytes) -> list[bytes | tuple[int, bytes, bytes]]:
        """The lines ``chunk`` completes: bytes, or ``(size, head, tail)`` for a line that was too long."""
        out: list[bytes | tuple[int, bytes, bytes]] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            part = chunk[start:] if end < 0 else chunk[start:end]
            self._add(part)
            if end < 0:
                return out
            if self._skipping:
                out.append((self._size, self._head, self._tail))
            else:
                out.append(b"".join(self._pieces))
            self._pieces, self._size, self._head, self._tail, self._skipping = [], 0, b"", b"", False
            start = end + 1

    def _add(self, part: bytes) -> None:
        self._size += len(part)
        if self._skipping:
            self._tail = (self._tail + part)[-_EDGE_BYTES:]
            return
        self._pieces.append(part)
        if self._size > self.limit:  # from here on only the size and the edges are kept
            line = b"".join(self._pieces)
            self._head, self._tail = line[:_EDGE_BYTES], line[-_EDGE_BYTES:]
            self._pieces, self._skipping = [], True


def _too_large(size: int, head: bytes, tail: bytes, limit: int) -> SessionMessage | Exception:
    """The error response for a skipped line whose ``id`` can be read, else an exception for the session's log."""
    what = f"the server sent a message of {size:,} bytes, over the limit of {limit:,} bytes; it was not read"
    match = _ID_AT_HEAD.match(head) or _ID_AT_TAIL.search(tail)
    if match is None:
        return ValueError(what + " (no request id found in it)")
    raw = match.group(1).decode()
    request_id: int | str = raw[1:-1] if raw.startswith('"') else int(raw)
    error = JSONRPCError(jsonrpc="2.0", id=request_id, error=ErrorData(code=MESSAGE_TOO_LARGE, message=what))
    return SessionMessage(JSONRPCMessage(error))


@contextlib.asynccontextmanager
async def stdio_transport(
    command: str,
    args: list[str],
    *,
    env: dict[str, str],
    cwd: str | Path | None = None,
    limits: MessageLimits = MessageLimits(),
    errlog: TextIO | None = None,
    secrets: SecretStore | None = None,
) -> AsyncIterator[tuple[MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[Any]]]:
    """The MCP SDK's ``stdio_client`` with a linear, size-guarded reader; ``env`` is the server's whole environment.

    The server's stderr goes to ``errlog`` (default: planwerk's stderr) line by line, redacted with ``secrets``.
    Process start and shutdown (close stdin, wait 2 s, then terminate the process tree) are the SDK's own.
    """
    # Private helpers of the SDK: the platform-specific start (new session / job object) and tree termination.
    from mcp.client.stdio import (
        PROCESS_TERMINATION_TIMEOUT,
        _create_platform_compatible_process,
        _get_executable_command,
        _terminate_process_tree,
    )

    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    try:
        process = await _create_platform_compatible_process(
            command=_get_executable_command(command),
            args=args,
            env=env,
            errlog=subprocess.PIPE,  # type: ignore[arg-type]  # read and redacted by stderr_reader
            cwd=cwd,
        )
    except OSError:
        for stream in (read_stream, write_stream, read_writer, write_reader):
            await stream.aclose()
        raise

    async def stdout_reader() -> None:
        assert process.stdout is not None
        lines = _LineReader(limits.max_message_bytes)
        try:
            async with read_writer:
                async for chunk in process.stdout:
                    for line in lines.feed(chunk):
                        if isinstance(line, tuple):
                            await read_writer.send(_too_large(*line, limits.max_message_bytes))
                            continue
                        try:
                            message = JSONRPCMessage.model_validate_json(line)
                        except Exception as exc:  # the SDK's behaviour: the session logs it and goes on
                            log.warning("an MCP server sent a line that is not JSON-RPC: %s", type(exc).__name__)
                            await read_writer.send(exc)
                            continue
                        await read_writer.send(SessionMessage(message))
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async def stderr_reader() -> None:
        stream = getattr(process, "stderr", None)
        if stream is None:
            return
        out = errlog if errlog is not None else sys.stderr
        pending = ""
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

        def write(line: str) -> None:
            text = secrets.redactor.text(line) if secrets is not None else line
            with contextlib.suppress(Exception):  # a closed or odd stderr must not break the session
                out.write(text)
                out.flush()

        with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
            async for chunk in stream:
                pending += decoder.decode(chunk)
                *lines, pending = pending.split("\n")
                for line in lines:
                    write(line + "\n")
                while len(pending) > MAX_STDERR_LINE:
                    write(pending[:MAX_STDERR_LINE] + "\n")
                    pending = pending[MAX_STDERR_LINE:]
        if pending := pending + decoder.decode(b"", final=True):
            write(pending + "\n")

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for session_message in write_reader:
                    text = session_message.message.model_dump_json(by_alias=True, exclude_none=True)
                    await process.stdin.send((text + "\n").encode("utf-8"))
        except anyio.ClosedResourceError:
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as group, process:
        group.start_soon(stdout_reader)
        group.start_soon(stdin_writer)
        group.start_soon(stderr_reader)
        try:
            yield read_stream, write_stream
        finally:
            if process.stdin is not None:
                with contextlib.suppress(Exception):
                    await process.stdin.aclose()
            try:
                with anyio.fail_after(PROCESS_TERMINATION_TIMEOUT):
                    await process.wait()
            except TimeoutError:
                await _terminate_process_tree(process)
            except ProcessLookupError:
                pass
            for stream in (read_stream, write_stream, read_writer, write_reader):
                await stream.aclose()


@contextlib.asynccontextmanager
async def connect(
    connection: Mapping[str, Any], *, limits: MessageLimits = MessageLimits()
) -> AsyncIterator[ClientSession]:
    """An initialised :class:`CancellingSession` to the server of ``connection`` (a langchain-mcp-adapters
    connection dict as :meth:`StdioServer.connection <planwerk.tools.config.StdioServer.connection>` builds it)."""
    session_kwargs = dict(connection.get("session_kwargs") or {})
    if connection["transport"] == "stdio":
        transport: Any = stdio_transport(
            connection["command"],
            list(connection.get("args") or []),
            env=dict(connection["env"]),
            cwd=connection.get("cwd"),
            limits=limits,
            secrets=connection.get("secrets"),
        )
        async with transport as (read, write), CancellingSession(read, write, **session_kwargs) as session:
            await session.initialize()
            yield session
        return
    timeout = connection.get("timeout", timedelta(seconds=30))
    seconds = timeout.total_seconds() if isinstance(timeout, timedelta) else float(timeout)
    # As langchain-mcp-adapters does: the HTTP timeout for requests, five minutes between SSE events.
    # Every message the server sends is bounded by limits.max_message_bytes as it streams in (http_guard).
    client = guarded_client(
        headers=dict(connection.get("headers") or {}),
        timeout=httpx.Timeout(seconds, read=300),
        limit=limits.max_message_bytes,
        auth=connection.get("auth"),  # an httpx.Auth (planwerk.tools.auth), as langchain-mcp-adapters takes it
    )
    async with (
        client,
        streamable_http_client(connection["url"], http_client=client) as (read, write, _),
        CancellingSession(read, write, **session_kwargs) as session,
    ):
        session.related_streams = True  # AnsweringTransport notes each server request's stream
        await session.initialize()
        yield session
