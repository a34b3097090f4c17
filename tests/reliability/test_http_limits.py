"""The size guard of streamable-HTTP MCP servers (planwerk/tools/http_guard.py), against a real FastMCP server.

A result far over the message limit (50 MB: FastMCP sends the text twice, a 100 MB message) fails that call at once
with a clear error of kind ``error``, is never held in memory, and the next call to the same session works; both
in FastMCP's SSE mode (its default) and in its JSON-response mode. A large result under a raised limit still
arrives whole. The SSE event splitter is checked on its own for line endings split across chunks.
"""

from __future__ import annotations

import time
import tracemalloc
from collections.abc import AsyncIterator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import pytest

from planwerk.core.tools import ToolError
from planwerk.tools.http_guard import EventSplitter, Skipped, SkipStarted, event_id
from planwerk.tools.mcp import open_tools
from tests.ports import mcp_http_server
from tests.reliability.test_transport_limits import rss_peak_mb

pytestmark = pytest.mark.faults  # injects faults and waits them out (tests/conftest.py: the tiers)

HEAVY = str(Path(__file__).with_name("heavy_server.py"))
LIMIT = 8 * 1024 * 1024

Mode = Literal["sse", "json"]


@contextmanager
def heavy_http(mode: Mode) -> Iterator[str]:
    """The heavy server over streamable HTTP on a free loopback port; yields its URL."""
    env = {"HEAVY_JSON_RESPONSE": "1" if mode == "json" else "0"}
    with mcp_http_server([HEAVY], env=env, timeout_s=60, name="heavy") as (url, _):
        yield url


def config(url: str, **extra: Any) -> dict[str, Any]:
    """A config with the heavy server at ``url``."""
    return {"mcpServers": {"heavy": {"url": url, "timeout": 60, **extra}}}


@pytest.mark.parametrize("mode", ["sse", "json"])
async def test_a_50_mb_http_result_fails_fast_unread_and_the_session_keeps_working(mode: Mode, figures: Any) -> None:
    with heavy_http(mode) as url:
        async with open_tools(config(url)) as tools:
            assert (await tools.call("in_flight", {})) == {"result": 0}
            before = rss_peak_mb()
            tracemalloc.start()
            started = time.perf_counter()
            try:
                with pytest.raises(ToolError) as info:
                    await tools.call("big", {"megabytes": 50})
                seconds = time.perf_counter() - started
                _, traced_peak = tracemalloc.get_traced_memory()
            finally:
                tracemalloc.stop()
            peak = rss_peak_mb()
            error = info.value
            assert error.kind == "error" and error.server == "heavy"
            assert f"over the limit of {LIMIT:,} bytes; it was not read" in str(error)
            # Bounds a hang only: without the guard the call waited out its 60 s timeout (or read 100 MB).
            assert seconds < 45
            # At most one message up to the limit is held, plus a chunk; the SDK alone would hold the 100 MB.
            assert traced_peak < 2 * LIMIT
            assert peak - before < 100
            started = time.perf_counter()
            for _ in range(3):  # the same session goes on answering
                assert (await tools.call("in_flight", {})) == {"result": 0}
            next_s = time.perf_counter() - started
            assert not tools.unavailable
    figures.record(
        f"transport/http_{mode}_50mb_result",
        result_mb=50,
        failed_after_s=round(seconds, 2),
        next_3_calls_s=round(next_s, 3),
        traced_peak_mb=round(traced_peak / 1e6, 1),
        rss_growth_mb=peak - before,
        rss_peak_mb=peak,
    )


async def test_a_large_http_result_under_a_raised_limit_arrives_whole(figures: Any) -> None:
    with heavy_http("sse") as url:
        async with open_tools(config(url, max_message_bytes=40_000_000)) as tools:
            started = time.perf_counter()
            result = await tools.call("big", {"megabytes": 12})  # a 24 MB event: over the default, under this one
            seconds = time.perf_counter() - started
            assert len(result["result"]) == 12_000_000
    figures.record("transport/http_large_result", result_mb=12, read_s=round(seconds, 2), rss_peak_mb=rss_peak_mb())


def test_a_bad_http_message_limit_is_one_clear_error() -> None:
    from planwerk.tools.config import ConfigError, load_config

    with pytest.raises(ConfigError, match=r"mcpServers.web.max_message_bytes: expected a positive whole number"):
        load_config({"mcpServers": {"web": {"url": "http://127.0.0.1:1/mcp", "max_message_bytes": "8MB"}}})
    loaded = load_config({"mcpServers": {"web": {"url": "http://127.0.0.1:1/mcp", "max_message_bytes": 1000}}})
    assert loaded.servers["web"].max_message_bytes == 1000  # type: ignore[union-attr]


# --- the SSE event splitter on its own -------------------------------------------------------------------------


def _split(chunks: list[bytes], limit: int = 1000) -> list[bytes | SkipStarted | Skipped]:
    splitter = EventSplitter(limit)
    out: list[bytes | SkipStarted | Skipped] = []
    for chunk in chunks:
        out.extend(splitter.feed(chunk))
    return out + splitter.close()


@pytest.mark.parametrize("end", [b"\n", b"\r\n", b"\r"])
def test_events_are_split_at_empty_lines_whatever_the_line_ending_and_chunking(end: bytes) -> None:
    first = b"event: message" + end + b'data: {"a": 1}' + end + end
    second = b'data: {"b": 2}' + end + end
    stream = first + second
    whole = _split([stream])
    assert whole == [first, second]
    for cut in range(1, len(stream)):  # every split point, including inside a CRLF
        parts = _split([stream[:cut], stream[cut:]])
        assert b"".join(p for p in parts if isinstance(p, bytes)) == stream
        # A CRLF cut in two may leave its LF at the head of the next event: the same events for an SSE reader.
        assert [p.strip() for p in parts if isinstance(p, bytes) and p.strip()] == [first.strip(), second.strip()]


def test_a_long_event_is_skipped_keeping_only_its_edges_and_the_next_one_passes() -> None:
    big = b'event: message\r\ndata: {"jsonrpc":"2.0","id":7,"result":"' + b"x" * 5000 + b'"}\r\n\r\n'
    small = b'event: message\r\ndata: {"jsonrpc":"2.0","id":8,"result":1}\r\n\r\n'
    stream = big + small
    out = _split([stream[i : i + 64] for i in range(0, len(stream), 64)])
    started, skipped, passed = out
    assert isinstance(started, SkipStarted) and event_id(started.head, b"") == 7
    assert isinstance(skipped, Skipped) and skipped.size == len(big) and len(skipped.tail) <= 512
    assert passed == small


def test_the_id_of_a_skipped_event_is_read_from_its_tail_when_serialised_last() -> None:
    tail = b'xxxx"},"jsonrpc":"2.0","id":"req-9"}\r\n\r\n'
    assert event_id(b'event: message\r\ndata: {"result":{"content":"xx', tail) == "req-9"
    assert event_id(b"data: {}", b"no id here") is None


async def test_a_json_body_without_a_length_is_cut_off_at_the_limit_and_answered_with_an_error() -> None:
    import httpx

    from planwerk.tools.http_guard import MESSAGE_TOO_LARGE, SizeGuardTransport

    sent: list[int] = []

    async def body() -> AsyncIterator[bytes]:  # a chunked body: no Content-Length to refuse it by
        for i in range(100):
            sent.append(i)
            yield b"x" * 500

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, headers={"content-type": "application/json"}, content=body())

    guard = SizeGuardTransport(1000, inner=httpx.MockTransport(handler))
    async with httpx.AsyncClient(transport=guard) as client:
        response = await client.post("http://mcp.test/mcp", json={"jsonrpc": "2.0", "id": 5, "method": "tools/call"})
        answer = response.json()
    assert answer["id"] == 5 and answer["error"]["code"] == MESSAGE_TOO_LARGE
    assert "over the limit of 1,000 bytes; it was not read" in answer["error"]["message"]
    assert len(sent) <= 3  # reading stopped at the limit, not at the end of the body
