"""MCP over HTTP authenticates like the MCP spec says: a token from a file or a command is fetched again after a
401 and the call goes through; a server that keeps refusing is reported as ``unauthorized``, never as a service
that cannot be reached.

A real streamable-HTTP MCP server on loopback behind bearer auth (``auth_server.py``): it accepts only the token in
its own token file and answers anything else with 401 and ``WWW-Authenticate``. A test rotates that token.
"""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from planwerk.core.calls import call_record
from planwerk.core.tools import ToolError
from planwerk.core.verification import verify_calls
from planwerk.prompts.grounding import ENGLISH, GERMAN
from planwerk.tools.mcp import open_tools
from tests.ports import Started, kill, start_server
from tests.tools.third_party.test_server_errors_http import TOKEN, auth_server

ROTATED = "tok-0815-rotated-one"
TIMEOUT_S = 20.0


def config(port: int, auth: dict[str, Any]) -> dict[str, Any]:
    return {"mcpServers": {"auth": {"url": f"http://127.0.0.1:{port}/mcp", "timeout": TIMEOUT_S, "auth": auth}}}


async def test_a_token_file_is_read_again_after_a_401_and_the_call_goes_through(tmp_path: Path) -> None:
    accepted, ours = tmp_path / "accepted", tmp_path / "ours"
    accepted.write_text(TOKEN)
    ours.write_text(TOKEN + "\n")
    with auth_server(accepted) as server:
        async with open_tools(config(server.port, {"type": "token_file", "path": str(ours)})) as tools:
            assert await tools.call("echo_text", {"text": "hi"}) == {"result": "hi"}
            accepted.write_text(ROTATED)  # the server now refuses the old token with 401
            ours.write_text(ROTATED)  # and the supplier has the new one
            assert await tools.call("echo_text", {"text": "after"}) == {"result": "after"}
            assert tools.unavailable == {}
            # The supplier's tokens are secrets from the moment they are fetched: echoed back, they are redacted.
            assert await tools.call("echo_text", {"text": f"t={ROTATED}"}) == {"result": "t=***"}
            assert await tools.call("echo_text", {"text": f"t={TOKEN.upper()}"}) == {"result": "t=***"}


async def test_a_token_command_is_run_again_after_a_401(tmp_path: Path) -> None:
    accepted, source = tmp_path / "accepted", tmp_path / "source"
    accepted.write_text(TOKEN)
    source.write_text(TOKEN)
    # A short-lived JWT supplier in miniature: prints the current token as JSON, as token endpoints answer.
    script = "import json, sys; print(json.dumps({'access_token': open(sys.argv[1]).read().strip()}))"
    auth = {"type": "token_command", "command": [sys.executable, "-c", script, str(source)], "timeout": 15}
    with auth_server(accepted) as server:
        async with open_tools(config(server.port, auth)) as tools:
            assert await tools.call("echo_text", {"text": "hi"}) == {"result": "hi"}
            accepted.write_text(ROTATED)
            source.write_text(ROTATED)
            assert await tools.call("echo_text", {"text": "after"}) == {"result": "after"}


@pytest.mark.faults
async def test_a_server_that_keeps_refusing_is_unauthorized_not_unreachable(tmp_path: Path) -> None:
    accepted, ours = tmp_path / "accepted", tmp_path / "ours"
    accepted.write_text(TOKEN)
    ours.write_text(TOKEN)
    with auth_server(accepted) as server:
        async with open_tools(config(server.port, {"type": "token_file", "path": str(ours)})) as tools:
            assert await tools.call("echo_text", {"text": "hi"}) == {"result": "hi"}
            accepted.write_text(ROTATED)  # refused, and the file has nothing newer
            with pytest.raises(ToolError) as caught:
                await tools.call("echo_text", {"text": "x"})
            error = caught.value
            assert error.kind == "unauthorized" and error.server == "auth", error
            assert "401" in str(error) and TOKEN not in str(error) and "unavailable" not in str(error)
            # The next call (the server is reconnected on demand) is refused the same way.
            with pytest.raises(ToolError) as again:
                await tools.call("echo_text", {"text": "y"})
            assert again.value.kind == "unauthorized"
            ours.write_text(ROTATED)  # the operator's supplier has the new token: calls work again
            result = await until_answered(tools)
            assert result == {"result": "again"}
    record = call_record("c1", "echo_text", error=str(error), kind=error.kind)
    assert verify_calls([record], attempts=1, max_attempts=3).decision == "give_up"
    for texts in (ENGLISH, GERMAN):
        words = texts.failure_kinds["unauthorized"].lower()
        assert "erreichbar" not in words and "unreachable" not in words


async def test_a_static_bearer_token_that_is_refused_is_unauthorized(tmp_path: Path) -> None:
    accepted = tmp_path / "accepted"
    accepted.write_text(TOKEN)
    with auth_server(accepted) as server:
        async with open_tools(config(server.port, {"type": "bearer", "token": TOKEN})) as tools:
            assert await tools.call("echo_text", {"text": "hi"}) == {"result": "hi"}
            accepted.write_text(ROTATED)
            with pytest.raises(ToolError) as caught:
                await tools.call("echo_text", {"text": "x"})
            assert caught.value.kind == "unauthorized" and TOKEN not in str(caught.value)


async def test_a_failing_token_command_is_unauthorized_and_says_why(tmp_path: Path) -> None:
    accepted = tmp_path / "accepted"
    accepted.write_text(TOKEN)
    auth = {"type": "token_command", "command": [sys.executable, "-c", "raise SystemExit(3)"]}
    with auth_server(accepted) as server:
        async with open_tools(config(server.port, auth)) as tools:
            assert "auth" in tools.unavailable
            assert "exited with status 3" in tools.unavailable["auth"]
            with pytest.raises(ToolError) as caught:
                await tools.call("echo_text", {"text": "x"})
            assert caught.value.kind == "unauthorized", caught.value


async def until_answered(tools: Any, limit_s: float = 30) -> Any:
    """Call until the server answers (the reconnect is on demand, at most every couple of seconds); only a hang
    is bounded, no timing is asserted."""
    import asyncio

    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while True:
        try:
            return await tools.call("echo_text", {"text": "again"})
        except ToolError as error:
            assert error.kind == "unauthorized", error
            assert loop.time() < deadline, f"no answer within {limit_s} s: {error}"
            await asyncio.sleep(0.2)


OAUTH_SERVER = Path(__file__).with_name("oauth_server.py")
CLIENT_ID, CLIENT_SECRET = "planwerk-test", "cs-91b2c3d4e5f6a7b8"


@contextmanager
def oauth_server(tmp_path: Path) -> Iterator[Started]:
    """The OAuth resource + authorization server on a free loopback port, until the block ends."""
    log = tmp_path / "oauth.log"

    def spawn(port: int) -> subprocess.Popen[bytes]:
        env = {**os.environ, "OAUTH_CLIENT_ID": CLIENT_ID, "OAUTH_CLIENT_SECRET": CLIENT_SECRET}
        with log.open("ab") as out:
            return subprocess.Popen(
                [sys.executable, str(OAUTH_SERVER), "--port", str(port)], env=env, stdout=out, stderr=subprocess.STDOUT
            )

    def probe(port: int) -> str | None:
        try:
            answer = httpx.get(f"http://127.0.0.1:{port}/.well-known/oauth-authorization-server", timeout=2)
            issuer = answer.json().get("issuer")
        except (httpx.HTTPError, ValueError) as exc:
            return f"no metadata ({type(exc).__name__})"
        return None if issuer == f"http://127.0.0.1:{port}" else f"issuer {issuer!r}"

    server = start_server(spawn, probe, what="the OAuth server", log=log, timeout_s=30)
    try:
        yield server
    finally:
        kill(server.process)


def oauth_config(port: int, secret: str = CLIENT_SECRET) -> dict[str, Any]:
    auth = {"type": "client_credentials", "client_id": CLIENT_ID, "client_secret": secret,
            "issuer": f"http://127.0.0.1:{port}", "scope": "tools"}  # fmt: skip
    return config(port, auth)


async def test_oauth_client_credentials_get_a_token_and_a_new_one_after_it_is_revoked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with oauth_server(tmp_path) as server:
        async with open_tools(oauth_config(server.port)) as tools:
            assert await tools.call("echo_text", {"text": "hi"}) == {"result": "hi"}
            assert await tools.call("revoke_tokens", {}) == {"result": 1}  # the token is gone: 401 next
            assert await tools.call("echo_text", {"text": "after"}) == {"result": "after"}
            assert await tools.call("revoke_tokens", {}) == {"result": 1}  # a new token was fetched
    logs = "\n".join(record.getMessage() for record in caplog.records)
    assert CLIENT_SECRET not in logs and "at-1-" not in logs and "at-2-" not in logs


async def test_oauth_with_a_wrong_client_secret_is_unauthorized(tmp_path: Path) -> None:
    with oauth_server(tmp_path) as server:
        async with open_tools(oauth_config(server.port, secret="cs-wrong-0000000")) as tools:
            assert "auth" in tools.unavailable
            with pytest.raises(ToolError) as caught:
                await tools.call("echo_text", {"text": "x"})
            assert caught.value.kind == "unauthorized", caught.value
            assert "cs-wrong-0000000" not in str(caught.value)
