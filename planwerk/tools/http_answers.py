"""Streamable HTTP where every request gets an answer: a response stream that ends without one answers with an error.

The MCP SDK (1.30) answers a ``tools/call`` over streamable HTTP from the server's SSE response stream. When that
stream ends without the response (the server died or restarted mid-call, a proxy cut the connection) and the server
sent no event ids to resume from, the SDK's ``_handle_sse_response`` just returns: the request waits for its read
timeout (30 s by default) although nothing will ever answer it. :class:`AnsweringTransport` sends the request a
JSON-RPC ``CONNECTION_CLOSED`` error at once instead, which planwerk reads as kind ``unavailable``
(``planwerk.tools.mcp``), marks the session gone and reconnects. Measured with the loopback server of
tests/tools/third_party/test_server_errors_http.py killed during a 60 s call (three kills, 2 shared CPU cores): the
call failed at its 20 s timeout before, 0.006-0.013 s after the kill with this transport.

It also marks each request the server sends on a response stream with the id of the request that stream answers
(``ServerMessageMetadata.related_request_id``); requests on the server's own (GET) stream stay unmarked.

:func:`streamable_http_client` is the SDK's function of that name with this transport; nothing else differs.
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.client.streamable_http import GetSessionIdCallback, RequestContext, StreamableHTTPTransport
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp.types import CONNECTION_CLOSED, ErrorData, JSONRPCError, JSONRPCMessage, JSONRPCRequest, JSONRPCResponse

Streams = tuple[
    MemoryObjectReceiveStream[SessionMessage | Exception], MemoryObjectSendStream[SessionMessage], GetSessionIdCallback
]
"""What the client yields: the read stream, the write stream and the session-id callback."""
ENDED_UNANSWERED = "the server's response stream ended without an answer (the server went away during the call)"


class _Watched:
    """A read-stream writer for one request's response stream: it notes whether the response (or error) to the
    request passed through it, and marks the server's requests on it as related to that request (the session
    routes them to the call that sent it, :mod:`planwerk.tools.client_features`)."""

    def __init__(self, inner: Any, request_id: Any):
        self.inner = inner
        self.request_id = request_id
        self.answered = False

    async def send(self, item: SessionMessage | Exception) -> None:
        if isinstance(item, SessionMessage):
            root = item.message.root
            if isinstance(root, JSONRPCResponse | JSONRPCError) and root.id == self.request_id:
                self.answered = True
            elif isinstance(root, JSONRPCRequest):
                item = SessionMessage(item.message, metadata=ServerMessageMetadata(related_request_id=self.request_id))
        await self.inner.send(item)

    def __getattr__(self, name: str) -> Any:  # anything else the SDK may use of the stream
        return getattr(self.inner, name)


class AnsweringTransport(StreamableHTTPTransport):
    """The SDK's streamable-HTTP transport; a request whose SSE response ends unanswered gets an error at once."""

    async def _handle_sse_response(
        self, response: httpx.Response, ctx: RequestContext, is_initialization: bool = False
    ) -> None:
        root = ctx.session_message.message.root
        if not isinstance(root, JSONRPCRequest):
            await super()._handle_sse_response(response, ctx, is_initialization)
            return
        watched = _Watched(ctx.read_stream_writer, root.id)
        await super()._handle_sse_response(
            response, dataclasses.replace(ctx, read_stream_writer=watched), is_initialization
        )
        if not watched.answered:
            error = JSONRPCError(
                jsonrpc="2.0", id=root.id, error=ErrorData(code=CONNECTION_CLOSED, message=ENDED_UNANSWERED)
            )
            with contextlib.suppress(anyio.ClosedResourceError, anyio.BrokenResourceError):
                await ctx.read_stream_writer.send(SessionMessage(JSONRPCMessage(error)))


@contextlib.asynccontextmanager
async def streamable_http_client(
    url: str, *, http_client: httpx.AsyncClient, terminate_on_close: bool = True
) -> AsyncIterator[Streams]:
    """``mcp.client.streamable_http.streamable_http_client`` (1.30) with :class:`AnsweringTransport`; the caller
    owns ``http_client``."""
    read_stream_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_stream_reader = anyio.create_memory_object_stream[SessionMessage](0)
    transport = AnsweringTransport(url)
    async with anyio.create_task_group() as tg:
        try:

            def start_get_stream() -> None:
                tg.start_soon(transport.handle_get_stream, http_client, read_stream_writer)

            tg.start_soon(
                transport.post_writer,
                http_client,
                write_stream_reader,
                read_stream_writer,
                write_stream,
                start_get_stream,
                tg,
            )
            try:
                yield read_stream, write_stream, transport.get_session_id
            finally:
                if transport.session_id and terminate_on_close:
                    await transport.terminate_session(http_client)
                tg.cancel_scope.cancel()
        finally:
            await read_stream_writer.aclose()
            await write_stream.aclose()
