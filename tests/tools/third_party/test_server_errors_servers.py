"""Server failures are visible: a server that fails to start is a ``server_error`` event (``--json`` and the graph's
stream), calls meant for a down server fail with kind ``unavailable`` (not "unknown tool"), and a crashed stdio
server (the real ``mcp-server-time``) is restarted once."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from planwerk.core.tools import ToolError
from planwerk.tools.mcp import MCPToolSource, open_tools
from tests.third_party import time_server
from tests.tools.conftest import child_pids

BROKEN = {
    "command": sys.executable,
    "args": ["-c", "import sys; sys.stderr.write('licence file missing'); sys.exit(3)"],
    "timeout": 20,
}
TIME_PLAN = {
    "steps": [
        {"description": "", "tools": [{"id": "t", "name": "get_current_time", "arguments": {"timezone": "Asia/Tokyo"}}]}
    ],
    "final": None,
}


def time_entry() -> dict[str, Any]:
    command, *args = time_server()
    return {"command": command, "args": args, "timeout": 30}


async def error_of(tools: MCPToolSource, name: str, arguments: dict[str, Any]) -> ToolError:
    with pytest.raises(ToolError) as caught:
        await tools.call(name, arguments)
    return caught.value


async def test_calls_meant_for_a_server_that_failed_to_start_are_unavailable() -> None:
    config = {"mcpServers": {"time": time_entry(), "lookup": {**BROKEN, "allowed_tools": ["find_person"]}}}
    async with open_tools(config) as tools:
        assert set(tools.unavailable) == {"lookup"}
        assert set(tools.specs) == {"get_current_time", "convert_time"}
        error = await error_of(tools, "find_person", {"name": "Ada"})
        assert error.kind == "unavailable" and error.server == "lookup"
        assert "find_person: no available server offers it, and server lookup is unavailable" in str(error)
        # A name no live server has may be the down server's (it never listed its tools): unavailable, not unknown.
        assert (await error_of(tools, "whatever", {})).kind == "unavailable"
        assert (await tools.call("get_current_time", {"timezone": "Asia/Tokyo"}))["timezone"] == "Asia/Tokyo"
    async with open_tools({"mcpServers": {"time": time_entry()}}) as tools:
        unknown = await error_of(tools, "whatever", {})
        assert unknown.kind == "invalid_arguments" and "unknown tool 'whatever'" in str(unknown)


def run_cli(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"time": time_entry(), "lookup": BROKEN}}))
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([json.dumps(TIME_PLAN), "The clock tool answered."]))
    command = [sys.executable, "-m", "planwerk.cli", "ask", "What time is it in Tokyo?", "--no-retrieval"]
    command += ["--mcp-config", str(config), "--model", f"replay:{replies}", "--today", "2026-11-22", *args]
    environment = {**os.environ, "PLANWERK_HOME": str(tmp_path / "home"), "COLUMNS": "200"}
    return subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)


def test_a_plan_naming_a_tool_of_a_down_server_is_told_the_server_is_down(tmp_path: Path) -> None:
    """The plan check's feedback says why the tool is missing (its server is down), not only "unknown tool"."""
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"time": time_entry(), "lookup": BROKEN}}))
    lookup = {"steps": [{"description": "", "tools": [{"id": "p", "name": "find_person", "arguments": {}}]}]}
    replies = tmp_path / "replies.json"
    replies.write_text(json.dumps([json.dumps(lookup), json.dumps(TIME_PLAN), "The clock tool answered."]))
    command = [sys.executable, "-m", "planwerk.cli", "ask", "Who is Ada, and what time is it in Tokyo?", "--json"]
    command += ["--no-retrieval", "--mcp-config", str(config), "--model", f"replay:{replies}"]
    command += ["--profile", "generic-en"]
    environment = {**os.environ, "PLANWERK_HOME": str(tmp_path / "home")}
    done = subprocess.run(command, capture_output=True, text=True, timeout=120, env=environment)
    assert done.returncode == 0, done.stderr
    replans = [e for e in map(json.loads, done.stdout.splitlines()) if e["event"] == "replan"]
    assert len(replans) == 1 and "unknown tool 'find_person'" in replans[0]["reason"]
    assert "unavailable (MCP server down): lookup (" in replans[0]["reason"]


def test_a_server_that_fails_to_start_is_an_event_in_json_and_in_the_readable_output(tmp_path: Path) -> None:
    done = run_cli(tmp_path, "--json")
    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert [e["event"] for e in events][:3] == ["start", "server_error", "retrieval"]
    error = events[1]
    assert error["server"] == "lookup" and error["error"]  # why, in words
    assert events[-1]["event"] == "final_answer" and events[-1]["answer"] == "The clock tool answered."
    assert any(e["event"] == "tool_result" and e["tool"] == "get_current_time" for e in events)

    readable = run_cli(tmp_path)
    assert readable.returncode == 0, readable.stderr
    assert "MCP-Server lookup nicht verfügbar" in readable.stdout


@pytest.mark.faults
async def test_a_crashed_third_party_stdio_server_is_restarted_once() -> None:
    async with open_tools({"mcpServers": {"time": time_entry()}}) as tools:
        assert (await tools.call("get_current_time", {"timezone": "UTC"}))["timezone"] == "UTC"
        [first] = child_pids("mcp_server_time")
        os.kill(first, signal.SIGKILL)
        answered = await call_until_answered(tools)  # the first calls may fail fast while it restarts
        assert answered["timezone"] == "UTC"
        [second] = child_pids("mcp_server_time")
        assert second != first

        os.kill(second, signal.SIGKILL)  # a second crash: no more restarts
        assert (await error_of(tools, "get_current_time", {"timezone": "UTC"})).kind == "unavailable"
        assert "time" in tools.unavailable
        loop = asyncio.get_running_loop()
        started = loop.time()
        later = await error_of(tools, "get_current_time", {"timezone": "UTC"})
        assert later.kind == "unavailable" and loop.time() - started < 5  # fails fast, no restart
        assert child_pids("mcp_server_time") == []


async def call_until_answered(tools: MCPToolSource, limit_s: float = 30) -> Any:
    """Call until the restarted server answers; bounded by ``limit_s`` (only bounds a hang)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + limit_s
    while True:
        try:
            return await tools.call("get_current_time", {"timezone": "UTC"})
        except ToolError as error:
            assert error.kind == "unavailable", error
            if loop.time() > deadline:
                raise
            await asyncio.sleep(0.05)
