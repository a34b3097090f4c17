"""A streaming size guard for streamable-HTTP MCP servers: no message over the limit is read into memory.

The MCP SDK (1.30) reads a JSON response whole (``response.aread()``) and an SSE event whole (``httpx_sse``) before
it parses either, so a server answering with 100 MB grows the client by at least that much (the stdio transport
has the same guard in :mod:`planwerk.tools.transport`). Worse, a body that fails to read or parse never reaches
the waiting request: the SDK logs the error and the call hangs until its timeout.

:class:`SizeGuardTransport` wraps httpx's transport, below the SDK, and counts the bytes of each message as they
stream in:

- a JSON response (``application/json``: one message) longer than the limit, by its ``Content-Length`` or as
  counted, is not read further: the body the SDK sees is a JSON-RPC error for the request's ``id``
  (:data:`MESSAGE_TOO_LARGE`, the message naming the limit);
- an SSE stream (``text/event-stream``, one message per event) passes through event by event; an event longer than
  the limit is skipped (only its first and last 512 bytes are kept, to find its ``id``) and replaced by an SSE
  event carrying that JSON-RPC error. When the ``id`` is in the event's head, the error goes out at once and the
  SDK, which stops reading a POST's stream after its response, closes the connection: the rest is never read.

So the call fails at once with a clear error, memory stays bounded by the limit, and the session goes on. Requests
ask for ``Accept-Encoding: identity``: the counted bytes are the bytes the SDK would hold.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import httpx

log = logging.getLogger(__name__)

MESSAGE_TOO_LARGE = -32050
"""JSON-RPC error code (implementation-defined server-error range) of a response this client did not read because
it was larger than the limit; the error message names the limit (and the size, where it is known)."""

EDGE_BYTES = 512
"""Bytes kept of the head and of the tail of a message that is skipped, to find its ``id``."""

_ID = rb'(-?\d{1,18}|"[^"\\]{0,200}")'
_DATA_ID_AT_HEAD = re.compile(rb'(?m)^data: ?\s*\{\s*"jsonrpc"\s*:\s*"2\.0"\s*,\s*"id"\s*:\s*' + _ID)
"""The ``id`` of a response in an SSE event, serialised with ``id`` first (Python SDK servers)."""
_ID_AT_TAIL = re.compile(rb'"id"\s*:\s*' + _ID + rb"\s*\}\s*$")
"""The ``id`` of a response serialised with ``id`` last (the TypeScript SDK: result, jsonrpc, id)."""
_LINE_END = re.compile(rb"\r\n|\r|\n")


def too_large_text(limit: int, size: int | None = None) -> str:
    """The error message for a message that was not read; ``size`` when it is known."""
    what = f"of {size:,} bytes" if size is not None else f"of more than {limit:,} bytes"
    return f"the server sent a message {what}, over the limit of {limit:,} bytes; it was not read"


def error_message(request_id: int | str, text: str) -> bytes:
    """A JSON-RPC error response for ``request_id`` with code :data:`MESSAGE_TOO_LARGE`."""
    body = {"jsonrpc": "2.0", "id": request_id, "error": {"code": MESSAGE_TOO_LARGE, "message": text}}
    return json.dumps(body).encode()


def _parse_id(raw: bytes) -> int | str:
    text = raw.decode()
    return text[1:-1] if text.startswith('"') else int(text)


def event_id(head: bytes, tail: bytes) -> int | str | None:
    """The JSON-RPC ``id`` of a skipped SSE event from its first and last bytes, if either shows it."""
    match = _DATA_ID_AT_HEAD.search(head) or _ID_AT_TAIL.search(tail.rstrip(b"\r\n"))
    return _parse_id(match.group(1)) if match else None


def request_id(request: httpx.Request) -> int | str | None:
    """The ``id`` of the JSON-RPC request ``request`` posts (None for notifications, GETs, other bodies)."""
    if request.method != "POST":
        return None
    try:
        message = json.loads(request.content)
    except (httpx.RequestNotRead, ValueError):
        return None
    if isinstance(message, dict) and "method" in message and isinstance(message.get("id"), int | str):
        return message["id"]  # type: ignore[no-any-return]
    return None


@dataclass(frozen=True)
class SkipStarted:
    """An SSE event went over the limit: from here on it is skipped. ``head``: its first bytes."""

    head: bytes


@dataclass(frozen=True)
class Skipped:
    """An SSE event that was skipped, now ended: its size and its first and last bytes."""

    size: int
    head: bytes
    tail: bytes


class EventSplitter:
    """Splits an SSE byte stream into whole events (bytes as received) in linear time; an event over ``limit``
    bytes is skipped, not stored: :class:`SkipStarted` when it goes over, :class:`Skipped` when it ends.

    An event ends at an empty line; lines end with CRLF, LF or CR (the SSE spec), also across chunks.
    """

    def __init__(self, limit: int):
        self.limit = limit
        self._pieces: list[bytes] = []
        self._size = 0
        self._head = b""
        self._tail = b""
        self._skipping = False
        self._line_has_text = False
        self._after_cr = False
        """The last chunk ended in CR: an LF at the start of the next one belongs to it."""

    def feed(self, chunk: bytes) -> list[bytes | SkipStarted | Skipped]:
        """The events ``chunk`` completes, and the skips it starts."""
        out: list[bytes | SkipStarted | Skipped] = []
        start = 0
        if self._after_cr and chunk.startswith(b"\n"):
            self._add(b"\n", out)
            start = 1
        self._after_cr = False
        for end in _LINE_END.finditer(chunk, start):
            text = chunk[start : end.start()]
            self._add(chunk[start : end.end()], out)
            if text:
                self._line_has_text = True
            if self._line_has_text:  # a line ended; the next one starts empty
                self._line_has_text = False
            else:  # an empty line: the event is complete
                out.append(self._finish())
            start = end.end()
        rest = chunk[start:]
        if rest:
            self._add(rest, out)
            self._line_has_text = True
        elif chunk.endswith(b"\r"):
            self._after_cr = True
        return out

    def close(self) -> list[bytes | SkipStarted | Skipped]:
        """What is left when the stream ends (an event without its empty line)."""
        return [self._finish()] if self._size else []

    def _add(self, part: bytes, out: list[bytes | SkipStarted | Skipped]) -> None:
        self._size += len(part)
        if self._skipping:
            self._tail = (self._tail + part)[-EDGE_BYTES:]
            return
        self._pieces.append(part)
        if self._size > self.limit:  # from here on only the size and the edges are kept (no copy of the rest)
            self._head, self._tail = _edge(self._pieces, head=True), _edge(self._pieces, head=False)
            self._pieces, self._skipping = [], True
            out.append(SkipStarted(self._head))

    def _finish(self) -> bytes | Skipped:
        done: bytes | Skipped = (
            Skipped(self._size, self._head, self._tail) if self._skipping else b"".join(self._pieces)
        )
        self._pieces, self._size, self._head, self._tail, self._skipping = [], 0, b"", b"", False
        self._line_has_text = False
        return done


def _edge(pieces: list[bytes], *, head: bool) -> bytes:
    """The first (or last) :data:`EDGE_BYTES` of the concatenated ``pieces``, joining only the pieces needed."""
    picked: list[bytes] = []
    size = 0
    for piece in pieces if head else reversed(pieces):
        picked.append(piece[:EDGE_BYTES] if head else piece[-EDGE_BYTES:])
        size += len(picked[-1])
        if size >= EDGE_BYTES:
            break
    joined = b"".join(picked if head else reversed(picked))
    return joined[:EDGE_BYTES] if head else joined[-EDGE_BYTES:]


class _GuardedStream(httpx.AsyncByteStream):
    """The body of one response, passed on within the limit (see the module docstring)."""

    def __init__(self, inner: httpx.AsyncByteStream, kind: str, limit: int, request_id: int | str | None, url: str):
        self._inner = inner
        self._kind = kind
        self._limit = limit
        self._request_id = request_id
        self._url = url

    async def __aiter__(self) -> AsyncIterator[bytes]:
        if self._kind == "json":
            async for part in self._json():
                yield part
        else:
            async for part in self._events():
                yield part

    async def aclose(self) -> None:
        """Close the server's response (a skipped rest is never read)."""
        await self._inner.aclose()

    async def _json(self) -> AsyncIterator[bytes]:
        pieces: list[bytes] = []
        size = 0
        async for chunk in self._inner:
            size += len(chunk)
            if size > self._limit:
                await self._inner.aclose()
                yield self._refusal(too_large_text(self._limit))
                return
            pieces.append(chunk)
        yield b"".join(pieces)

    async def _events(self) -> AsyncIterator[bytes]:
        splitter = EventSplitter(self._limit)
        answered: int | str | None = None
        async for chunk in self._inner:
            for item in splitter.feed(chunk):
                if isinstance(item, bytes):
                    yield item
                elif isinstance(item, SkipStarted):
                    answered = event_id(item.head, b"")
                    if answered is not None:  # the SDK stops reading after this response: the rest stays unread
                        yield self._event(answered, too_large_text(self._limit))
                elif answered is None:
                    yield self._skipped(item)
                else:
                    answered = None
        for item in splitter.close():
            if isinstance(item, bytes):
                yield item
            elif isinstance(item, Skipped) and answered is None:
                yield self._skipped(item)

    def _skipped(self, item: Skipped) -> bytes:
        """The error event for a skipped event whose ``id`` was not in its head."""
        target = event_id(item.head, item.tail)
        if target is None:
            target = self._request_id  # a POST's stream carries the answer to that request
        text = too_large_text(self._limit, item.size)
        if target is None:  # a message nobody waits for (the GET stream): dropped, and said so
            log.warning("MCP server %s: %s (no request id found in it)", self._url, text)
            return b""
        return self._event(target, text)

    def _event(self, target: int | str, text: str) -> bytes:
        log.warning("MCP server %s: %s", self._url, text)
        return b"event: message\r\ndata: " + error_message(target, text) + b"\r\n\r\n"

    def _refusal(self, text: str) -> bytes:
        log.warning("MCP server %s: %s", self._url, text)
        if self._request_id is None:
            return b"{}"  # not an answer to a request: the SDK does not read it
        return error_message(self._request_id, text)


class SizeGuardTransport(httpx.AsyncBaseTransport):
    """An httpx transport that bounds every MCP message a server sends to ``limit`` bytes (module docstring)."""

    def __init__(self, limit: int, inner: httpx.AsyncBaseTransport | None = None):
        if limit <= 0:
            raise ValueError(f"limit: expected a positive number of bytes, got {limit}")
        self.limit = limit
        self._inner = inner if inner is not None else httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Send ``request``; the response's body is guarded as its content type says."""
        request.headers["Accept-Encoding"] = "identity"
        response = await self._inner.handle_async_request(request)
        content_type = response.headers.get("content-type", "").lower()
        kind = "json" if content_type.startswith("application/json") else "sse"
        if not content_type.startswith(("application/json", "text/event-stream")):
            return response  # the SDK reads no other body
        target = request_id(request)
        headers = [(k, v) for k, v in response.headers.multi_items() if k.lower() != "content-length"]
        declared = response.headers.get("content-length", "")
        if kind == "json" and declared.isdigit() and int(declared) > self.limit:
            await response.aclose()
            text = too_large_text(self.limit, int(declared))
            log.warning("MCP server %s: %s", request.url, text)
            body = error_message(target, text) if target is not None else b"{}"
            return httpx.Response(response.status_code, headers=headers, content=body, extensions=response.extensions)
        stream = _GuardedStream(response.stream, kind, self.limit, target, str(request.url))  # type: ignore[arg-type]
        return httpx.Response(response.status_code, headers=headers, stream=stream, extensions=response.extensions)

    async def aclose(self) -> None:
        """Close the wrapped transport (its connection pool)."""
        await self._inner.aclose()


def guarded_client(*, headers: dict[str, str], timeout: httpx.Timeout, limit: int, **kwargs: Any) -> httpx.AsyncClient:
    """An httpx client as ``mcp.shared._httpx_utils.create_mcp_http_client`` builds it, with the size guard."""
    return httpx.AsyncClient(headers=headers, timeout=timeout, transport=SizeGuardTransport(limit), **kwargs)
