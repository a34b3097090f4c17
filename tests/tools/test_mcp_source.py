"""MCPToolSource against real MCP servers over real transports (stdio subprocesses, streamable HTTP)."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from planwerk.core.tools import ToolError
from planwerk.tools.base import ToolSource
from planwerk.tools.mcp import open_tools
from planwerk.tools.servers.launch import free_port
from tests.tools.conftest import (
    BARCELONA,
    ECHO_SCRIPT,
    child_pids,
    http_server,
    silent_tcp_server,
    upstream_env,
)

ECHO = ECHO_SCRIPT
MATH = {"command": "${PYTHON}", "args": ["-m", "planwerk.tools.servers.math", "stdio"], "timeout": 20}


async def _error(coro: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        await coro
    return info.value


async def test_default_config_over_stdio_with_parallel_calls_on_one_session(
    upstream_stub: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The travel subprocess must see these: the parent's environment is passed to stdio servers explicitly.
    for key, value in upstream_env(upstream_stub, tmp_path / "cache").items():
        monkeypatch.setenv(key, value)
    async with open_tools() as tools:
        assert isinstance(tools, ToolSource)
        assert {"geocode", "get_weather", "get_parks", "get_spots", "rank_spots", "add", "sqrt"} <= set(tools.specs)
        assert tools.specs["add"].server == "math" and tools.specs["geocode"].server == "travel"
        assert tools.specs["add"].output_schema["properties"]["result"]["type"] == "number"
        assert tools.specs["get_weather"].input_schema["required"] == ["lat", "lon", "start_date", "end_date"]
        pids = {name: child_pids(f"planwerk.tools.servers.{name}") for name in ("math", "travel")}
        assert all(len(p) == 1 for p in pids.values()), pids

        started = time.perf_counter()
        results = await asyncio.gather(
            *(tools.call("multiply", {"arg_0": i, "arg_1": "3"}) for i in range(8)),  # "3": repaired to 3
            tools.call("geocode", {"destination": "Barcelona"}),
            tools.call(
                "get_weather",
                {"lat": 41.4375, "lon": 2.1875, "start_date": "2026-01-16", "end_date": "2026-01-23"},
            ),
        )
        elapsed = time.perf_counter() - started
        assert results[:8] == [{"result": float(i * 3)} for i in range(8)]
        assert results[8] == {
            "lat": BARCELONA[0],
            "lon": BARCELONA[1],
            "name": "Barcelona, Catalunya, España",
            "source": "nominatim",
        }
        assert results[9]["source"] == "forecast" and len(results[9]["days"]) == 8
        assert elapsed < 10
        # still the same two processes: the sessions persisted
        assert {name: child_pids(f"planwerk.tools.servers.{name}") for name in pids} == pids

        error = await _error(tools.call("divide", {"arg_0": 1, "arg_1": 0}))
        assert (error.kind, error.tool, error.server) == ("error", "divide", "math")
        assert "division by zero" in str(error) and "math" in str(error)
        bad = await _error(tools.call("get_spots", {"lat": 41.4, "lon": 2.1, "radius_km": 5, "activity": "surfing"}))
        assert bad.kind == "invalid_arguments" and "unknown activity 'surfing'" in str(bad)  # kind sent in _meta
        assert await tools.call("add", {"arg_0": 1, "arg_1": 2}) == {"result": 3.0}  # the session is still fine
        unknown = await _error(tools.call("teleport", {}))
        assert unknown.kind == "invalid_arguments" and "available tools: add" in str(unknown)
        invalid = await _error(tools.call("add", {"arg_0": "one", "arg_1": 2}))
        assert invalid.kind == "invalid_arguments" and invalid.server == "math"
    assert child_pids("planwerk.tools.servers.") == []


async def test_travel_server_over_streamable_http(upstream_stub: str, tmp_path: Path) -> None:
    env = upstream_env(upstream_stub, tmp_path / "cache")
    with http_server(["-m", "planwerk.tools.servers.travel"], env=env) as (url, _):
        async with open_tools({"mcpServers": {"travel": {"url": url, "timeout": 30}}}) as tools:
            coords = await tools.call("geocode", {"destination": "Barcelona"})
            estimate, spots, parks = await asyncio.gather(
                tools.call(
                    "get_weather",
                    {
                        "lat": 41.441124,
                        "lon": 2.2014387,
                        "start_date": "2026-06-10",
                        "end_date": "2026-06-17",
                    },
                ),
                tools.call(
                    "get_spots",
                    {"lat": coords["lat"], "lon": coords["lon"], "radius_km": 10, "activity": "sightseeing"},
                ),
                tools.call("get_parks", {"lat": coords["lat"], "lon": coords["lon"], "radius_km": 3}),
            )
    assert coords["source"] == "nominatim"
    assert estimate["is_estimate"] and estimate["reference_years"] == list(range(2016, 2026))
    assert len(spots["result"]) > 10 and all(s["activity"] == "sightseeing" for s in spots["result"])
    assert len(parks["result"]) == 5


async def test_a_third_party_server_from_pypi_works_through_the_same_config() -> None:
    config = {
        "mcpServers": {"time": {"command": "${PYTHON}", "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"]}}
    }
    async with open_tools(config) as tools:
        assert {"get_current_time", "convert_time"} <= set(tools.specs)
        now = await tools.call("get_current_time", {"timezone": "Asia/Tokyo"})
        assert now["timezone"] == "Asia/Tokyo" and now["datetime"].endswith("+09:00")  # JSON text, parsed
        converted = await tools.call(
            "convert_time",
            {"source_timezone": "Europe/Berlin", "time": "12:00", "target_timezone": "Asia/Tokyo"},
        )
        assert converted["target"]["datetime"][11:16] in {"19:00", "20:00"}
        error = await _error(tools.call("get_current_time", {"timezone": "Mars/Olympus"}))
        assert error.server == "time" and error.kind == "error" and "Invalid timezone" in str(error)


async def test_headers_secrets_tool_errors_and_call_timeouts_over_http(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("ECHO_TOKEN", "sekret-token-4711")
    with http_server([ECHO]) as (url, _):
        config = {
            "mcpServers": {
                "echo": {
                    "url": url,
                    "timeout": 1.5,
                    "headers": {"Authorization": "Bearer ${ECHO_TOKEN}", "X-Team": "${TEAM:-planwerk}"},
                }
            }
        }
        async with open_tools(config) as tools:
            seen = await tools.call("whoami", {})
            # The server got both headers; echoed back, configured header values are secrets and come back
            # redacted (a value the server had not been sent would come back as it is).
            assert seen == {"authorization": "***", "x_team": "***"}

            leaked = await _error(tools.call("leak", {}))
            assert "sekret-token-4711" not in str(leaked) and "rejected credentials ***" in str(leaked)

            failed = await _error(tools.call("boom", {"message": "the moon is down"}))
            assert (failed.kind, failed.tool, failed.server) == ("error", "boom", "echo")
            assert "the moon is down" in str(failed)

            started = time.perf_counter()
            slow = await _error(tools.call("slow", {"seconds": 5}))
            assert slow.kind == "timeout" and "slow on server echo timed out" in str(slow)
            assert time.perf_counter() - started < 4
            assert await tools.call("slow", {"seconds": 0.01}) == {"result": 0.01}  # the session survived


@pytest.mark.faults
async def test_a_server_that_accepts_tcp_and_never_answers_times_out(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    with silent_tcp_server() as url:
        config = {
            "mcpServers": {
                "silent": {"url": url, "timeout": 1.5},
                "math": {**MATH, "allowed_tools": ["add", "sqrt"]},
            }
        }
        started = time.perf_counter()
        async with open_tools(config) as tools:
            assert time.perf_counter() - started < 10
            assert set(tools.specs) == {"add", "sqrt"}
            assert "silent" in tools.unavailable
            assert await tools.call("sqrt", {"arg_0": 17}) == {"result": 4.0}
    assert any("MCP server silent is unavailable" in r.getMessage() for r in caplog.records)


async def test_servers_down_at_start_are_reported_and_the_others_work(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING)
    config = {
        "mcpServers": {
            "closed": {
                "url": f"http://127.0.0.1:{free_port()}/mcp",
                "headers": {"Authorization": "Bearer tok-0815-xyz"},
            },
            "missing": {"command": "/nonexistent/mcp-server"},
            "exits": {"command": sys.executable, "args": ["-c", "pass"]},
            "math": MATH,
        }
    }
    async with open_tools(config, allowed={"add", "get_current_time"}) as tools:
        assert set(tools.unavailable) == {"closed", "missing", "exits"}
        assert set(tools.specs) == {"add"}
        assert await tools.call("add", {"arg_0": 2, "arg_1": 2}) == {"result": 4.0}
    messages = [r.getMessage() for r in caplog.records]
    for name in ("closed", "missing", "exits"):
        assert any(f"MCP server {name} is unavailable" in m for m in messages), messages
    assert any("not offered by any available server: get_current_time" in m for m in messages)
    assert not any("tok-0815-xyz" in m for m in messages)


@pytest.mark.faults
async def test_servers_killed_mid_run_fail_their_calls_and_spare_the_others() -> None:
    with http_server([ECHO]) as (url, proc):
        config = {"mcpServers": {"echo": {"url": url, "timeout": 5}, "math": MATH}}
        async with open_tools(config) as tools:
            assert await tools.call("echo_text", {"text": "hi"}) == {"result": "hi"}
            proc.kill()
            proc.wait(timeout=5)
            started = time.perf_counter()
            gone = await _error(tools.call("echo_text", {"text": "hi"}))
            assert gone.kind == "unavailable" and gone.server == "echo" and "echo_text" in str(gone)
            assert time.perf_counter() - started < 5
            assert await tools.call("add", {"arg_0": 1, "arg_1": 1}) == {"result": 2.0}
            again = await _error(tools.call("whoami", {}))
            assert again.kind == "unavailable"

            (math_pid,) = child_pids("planwerk.tools.servers.math")
            os.kill(math_pid, signal.SIGKILL)
            await asyncio.sleep(0.2)
            dead = await _error(tools.call("add", {"arg_0": 1, "arg_1": 1}))
            assert dead.kind == "unavailable" and dead.server == "math"
            assert set(tools.unavailable) == {"echo", "math"}
