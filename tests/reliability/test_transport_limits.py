"""Transport limits of MCP servers over stdio, against a real server (tests/reliability/heavy_server.py).

- A result far over the message limit (50 MB) fails at once with a clear error, without being read into memory,
  and the server keeps answering; a large result under a raised limit is read in linear time.
- Timed-out calls are cancelled on the server (``notifications/cancelled``): its running calls do not pile up.
- A server that stops answering (two timeouts in a row) or dies is marked unavailable, its calls fail fast, and it
  is restarted once; a second failure leaves it unavailable.
- A stdio server does not see planwerk's environment, only the basics and what its config names.
"""

from __future__ import annotations

import asyncio
import resource
import time
from pathlib import Path
from typing import Any

import pytest

from planwerk.core.scheduling import ReadyCall
from planwerk.core.tools import ToolError
from planwerk.execution import ExecutionPolicy, call_one
from planwerk.tools.mcp import MCPToolSource, open_tools

pytestmark = pytest.mark.faults  # injects faults and waits them out (tests/conftest.py: the tiers)

HEAVY = str(Path(__file__).with_name("heavy_server.py"))
FAULTY = str(Path(__file__).with_name("faulty_server.py"))


def heavy(**extra: Any) -> dict[str, Any]:
    """A config with the heavy server over stdio."""
    return {"mcpServers": {"heavy": {"command": "${PYTHON}", "args": [HEAVY, "stdio"], "timeout": 20, **extra}}}


def rss_peak_mb() -> int:
    """This process's peak resident memory so far, in MB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024


async def failure(tools: MCPToolSource, name: str, args: dict[str, Any] | None = None) -> tuple[ToolError, float]:
    started = time.perf_counter()
    with pytest.raises(ToolError) as info:
        await tools.call(name, args or {})
    return info.value, time.perf_counter() - started


async def until(condition: Any, timeout_s: float) -> bool:
    """Poll the async ``condition`` until it is true or ``timeout_s`` passed."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if await condition():
            return True
        await asyncio.sleep(0.1)
    return False


async def test_a_50_mb_result_fails_fast_unread_and_the_server_keeps_answering(figures: Any) -> None:
    async with open_tools(heavy()) as tools:
        before = rss_peak_mb()
        error, seconds = await failure(tools, "big", {"megabytes": 50})
        peak = rss_peak_mb()
        assert error.kind == "error" and error.server == "heavy"
        assert "over the limit of 8,388,608 bytes; it was not read" in str(error)
        assert seconds < 10.0  # the SDK's reader took over 30 s for this and held the server for minutes
        assert peak - before < 100  # the line was skipped, not kept (the SDK needed ~700 MB for it)
        started = time.perf_counter()
        assert (await tools.call("in_flight", {})) == {"result": 0}
        next_s = time.perf_counter() - started
        assert next_s < 1.0 and not tools.unavailable
    figures.record(
        "transport/stdio_50mb_result",
        result_mb=50,
        failed_after_s=round(seconds, 2),
        next_call_s=round(next_s, 3),
        rss_growth_mb=peak - before,
        rss_peak_mb=peak,
    )


async def test_a_large_result_under_a_raised_limit_is_read_in_linear_time(figures: Any) -> None:
    timings = {}
    async with open_tools(heavy(max_message_bytes=100_000_000)) as tools:
        for megabytes in (8, 16):  # FastMCP sends a str result twice (text and structured): 16 and 32 MB lines
            started = time.perf_counter()
            result = await tools.call("big", {"megabytes": megabytes})
            timings[megabytes] = time.perf_counter() - started
            assert len(result["result"]) == megabytes * 1_000_000
    # The SDK's reader: 1.8 s and 8.2 s here (quadratic); linear reading keeps both well under that.
    assert timings[16] < 5.0
    figures.record(
        "transport/stdio_large_results",
        read_8mb_s=round(timings[8], 2),
        read_16mb_s=round(timings[16], 2),
        rss_peak_mb=rss_peak_mb(),
    )


async def test_timed_out_calls_are_cancelled_on_the_server(figures: Any) -> None:
    counts = []
    async with open_tools(heavy(timeout=4)) as tools:
        caller = ExecutionPolicy(timeout_s=0.3)
        for i in range(20):
            if i % 10 == 9:  # the server's own timeout (4 s: start-up on a busy machine needs that much)
                error, _ = await failure(tools, "sleepy", {"seconds": 60})
                assert error.kind == "timeout"
            else:  # the caller's timeout (execution.call_one cancels the call)
                call = ReadyCall(id=f"c{i}", tool="sleepy", step=0, args={"seconds": 60})
                record = await call_one(tools, call, caller)
                assert record["kind"] == "timeout"
            counts.append((await tools.call("in_flight", {}))["result"])
        settled = await until(lambda: _in_flight_is(tools, 0), timeout_s=2.0)
        assert not tools.unavailable  # every timeout was followed by an answer: the server is answering
    assert settled and max(counts) <= 2  # without the cancellation: 1, 2, ..., 20 running calls
    figures.record(
        "transport/timeouts_cancelled",
        timeouts=20,
        running_after_each_max=max(counts),
        running_after_all=0,
        rss_peak_mb=rss_peak_mb(),
    )


async def _in_flight_is(tools: MCPToolSource, count: int) -> bool:
    return bool((await tools.call("in_flight", {}))["result"] == count)


async def test_a_server_that_stops_answering_is_marked_unavailable_and_restarted_once(figures: Any) -> None:
    caller = ExecutionPolicy(timeout_s=0.5)  # the caller's timeout counts like the server's own

    async def time_out() -> None:
        record = await call_one(tools, ReadyCall(id="s", tool="sleepy", step=0, args={"seconds": 60}), caller)
        assert record["kind"] == "timeout"

    async with open_tools(heavy(timeout=10)) as tools:
        first_pid = (await tools.call("pid", {}))["result"]
        await time_out()
        assert not tools.unavailable  # one timeout is no verdict
        await time_out()
        fast, fast_s = await failure(tools, "in_flight")
        assert fast.kind == "unavailable" and "stopped answering" in str(fast) and fast_s < 0.1
        assert await until(lambda: _answers(tools), timeout_s=10.0)  # restarted
        second_pid = (await tools.call("pid", {}))["result"]
        assert second_pid != first_pid
        await time_out()
        await time_out()
        await asyncio.sleep(3.0)  # time enough for a restart that must not come
        again, again_s = await failure(tools, "pid")
        assert again.kind == "unavailable" and again_s < 0.1 and "heavy" in tools.unavailable
    figures.record(
        "transport/server_stops_answering",
        timeouts=4,
        restarts=1,
        fail_fast_s=round(max(fast_s, again_s), 3),
        rss_peak_mb=rss_peak_mb(),
    )


async def _answers(tools: MCPToolSource) -> bool:
    try:
        await tools.call("in_flight", {})
    except ToolError as error:
        assert error.kind == "unavailable"
        return False
    return True


async def test_a_server_that_dies_is_restarted_once() -> None:
    config = {"mcpServers": {"faulty": {"command": "${PYTHON}", "args": [FAULTY, "stdio"], "timeout": 10}}}
    async with open_tools(config) as tools:
        first = (await tools.call("ok", {"text": "a"}))["pid"]
        died, _ = await failure(tools, "die")
        assert died.kind == "unavailable"
        assert await until(lambda: _ok(tools), timeout_s=10.0)
        assert (await tools.call("ok", {"text": "b"}))["pid"] != first
        await failure(tools, "die")
        await asyncio.sleep(3.0)
        dead, dead_s = await failure(tools, "ok", {"text": "c"})
        assert dead.kind == "unavailable" and dead_s < 0.1


async def _ok(tools: MCPToolSource) -> bool:
    try:
        await tools.call("ok", {"text": "?"})
    except ToolError:
        return False
    return True


async def test_a_stdio_server_sees_only_the_basics_and_what_its_config_names(
    monkeypatch: pytest.MonkeyPatch, figures: Any
) -> None:
    monkeypatch.setenv("PLANWERK_TEST_SECRET", "parent-secret-value")
    monkeypatch.setenv("PLANWERK_TEST_SETTING", "eu-west")
    async with open_tools(heavy()) as tools:
        names = (await tools.call("environment", {}))["result"]
        assert "PLANWERK_TEST_SECRET" not in names and "PLANWERK_TEST_SETTING" not in names
        assert "PATH" in names
    named = heavy(env={"GIVEN": "${PLANWERK_TEST_SECRET}"}, inherit_env=["PLANWERK_TEST_SETTING"])
    async with open_tools(named) as tools:
        # The server has the value; echoed back it is a configured secret, redacted (planwerk.tools.redaction).
        assert (await tools.call("getenv", {"name": "GIVEN"}))["result"] == "***"
        assert (await tools.call("getenv", {"name": "PLANWERK_TEST_SETTING"}))["result"] == "eu-west"
        assert (await tools.call("getenv", {"name": "PLANWERK_TEST_SECRET"}))["result"] == ""
    figures.record("transport/stdio_environment", variables_seen=len(names))
