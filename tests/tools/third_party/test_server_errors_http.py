"""Streamable-HTTP sessions come back: after a 401 once the token works again, and after the server died mid-call.

A real streamable-HTTP MCP server on loopback behind bearer auth (``auth_server.py``) whose accepted token a test
rotates away and back.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from planwerk.core.tools import ToolError
from planwerk.tools.mcp import HTTP_RECONNECT_INTERVAL_S, MCPToolSource, open_tools
from tests.ports import Started, kill, mcp_named, start_server

SERVER = Path(__file__).with_name("auth_server.py")
TOKEN = "tok-4711-good-one"
TIMEOUT_S = 20.0
"""The server's call timeout: the failures below must come long before it."""


@contextmanager
def auth_server(token_file: Path, port: int | None = None) -> Iterator[Started]:
    """The auth server on 127.0.0.1 until the block ends (killed, waited for): on a free port, or on ``port`` (a
    restart on the address of the server before it). It counts as started when its process holds the listening
    socket and ``initialize`` (with the token, which must be the accepted one then) names it (:mod:`tests.ports`)."""
    log = token_file.with_name(f"{token_file.name}.server.log")

    def spawn(chosen: int) -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            return subprocess.Popen(
                [sys.executable, str(SERVER), "--port", str(chosen)],
                env={**os.environ, "AUTH_TOKEN_FILE": str(token_file)},
                stdout=out,
                stderr=subprocess.STDOUT,
            )

    probe = mcp_named("auth-echo", headers={"Authorization": f"Bearer {TOKEN}"})
    server = start_server(spawn, probe, what="the auth server", log=log, timeout_s=30, port=port)
    try:
        yield server
    finally:
        kill(server.process)


def config(port: int) -> dict[str, Any]:
    server = {"url": f"http://127.0.0.1:{port}/mcp", "headers": {"Authorization": f"Bearer {TOKEN}"}}
    return {"mcpServers": {"auth": {**server, "timeout": TIMEOUT_S}}}


async def timed_error(tools: MCPToolSource, arguments: dict[str, Any] | None = None) -> tuple[ToolError, float]:
    started = time.perf_counter()
    with pytest.raises(ToolError) as caught:
        await tools.call("echo_text" if arguments is None else "wait_for", arguments or {"text": "x"})
    return caught.value, time.perf_counter() - started


async def until_answered(tools: MCPToolSource, limit_s: float = 30) -> tuple[Any, int]:
    """Call until the server answers; the result and how many calls failed (``unavailable``, or ``unauthorized``
    while the token is refused) before. The limit only bounds a hang; no timing is asserted."""
    loop = asyncio.get_running_loop()
    deadline, failed = loop.time() + limit_s, 0
    while True:
        try:
            return await tools.call("echo_text", {"text": "again"}), failed
        except ToolError as error:
            assert error.kind in ("unavailable", "unauthorized"), error
            failed += 1
            assert loop.time() < deadline, f"no answer within {limit_s} s: {error}"
            await asyncio.sleep(0.1)


@pytest.mark.faults
async def test_after_a_401_the_session_comes_back_once_the_token_works_again(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    with auth_server(token_file) as server:
        async with open_tools(config(server.port)) as tools:
            assert await tools.call("echo_text", {"text": "hi"}) == {"result": "hi"}
            token_file.write_text("rotated-elsewhere")  # every request now gets 401
            error, seconds = await timed_error(tools)
            assert error.kind == "unauthorized" and error.server == "auth"  # its own kind, not "unreachable"
            assert "HTTP 401 Unauthorized" in str(error) and TOKEN not in str(error)
            assert seconds < TIMEOUT_S / 2  # it failed on the 401, not at the timeout
            # Long past the one immediate reconnect: still down while the token is refused, failing fast.
            await asyncio.sleep(HTTP_RECONNECT_INTERVAL_S + 0.1)
            again, seconds = await timed_error(tools)
            assert again.kind == "unauthorized" and "401" in str(again) and seconds < TIMEOUT_S / 2
            assert "auth" in tools.unavailable

            token_file.write_text(TOKEN)  # the token works again
            result, _ = await until_answered(tools)
            assert result == {"result": "again"} and "auth" not in tools.unavailable
            assert await tools.call("echo_text", {"text": "later"}) == {"result": "later"}


@pytest.mark.faults
async def test_an_http_server_that_dies_mid_call_fails_the_call_at_once_and_is_reconnected(tmp_path: Path) -> None:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    with auth_server(token_file) as server:
        async with open_tools(config(server.port)) as tools:
            call = asyncio.ensure_future(tools.call("wait_for", {"seconds": 60}))
            await asyncio.sleep(0.5)  # the call is in flight (it would take 60 s)
            started = time.perf_counter()
            server.process.kill()
            with pytest.raises(ToolError) as caught:
                await call
            assert caught.value.kind == "unavailable"
            assert time.perf_counter() - started < TIMEOUT_S / 2  # not at the timeout
            # The server starts again on the same port: the session is reconnected for the next calls.
            with auth_server(token_file, server.port):
                result, _ = await until_answered(tools)
                assert result == {"result": "again"}
