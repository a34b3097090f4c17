"""Plans run through the engine's executor on real MCP servers: math over stdio, travel over streamable HTTP,
and mcp-server-time, with parallel calls in one step and ``$ref``s between calls."""

from __future__ import annotations

import time
from pathlib import Path

from planwerk.execution import execute_plan
from planwerk.tools.mcp import open_tools
from tests.tools.conftest import BARCELONA, ECHO_SCRIPT, http_server, upstream_env


async def test_plan_across_stdio_http_and_a_third_party_server(upstream_stub: str, tmp_path: Path) -> None:
    env = upstream_env(upstream_stub, tmp_path / "cache")
    with (
        http_server(["-m", "planwerk.tools.servers.travel"], env=env) as (travel_url, _),
        http_server([ECHO_SCRIPT]) as (echo_url, _),
    ):
        config = {
            "mcpServers": {
                "travel": {"url": travel_url},
                "echo": {"url": echo_url},
                "math": {"command": "${PYTHON}", "args": ["-m", "planwerk.tools.servers.math", "stdio"]},
                "time": {
                    "command": "${PYTHON}",
                    "args": ["-m", "mcp_server_time", "--local-timezone", "UTC"],
                },
            }
        }
        plan = {
            "steps": [
                {
                    "description": "independent calls, run together",
                    "tools": [
                        {
                            "id": "geo",
                            "name": "geocode",
                            "arguments": {"destination": {"$ref": "user.destination"}},
                        },
                        {"id": "a", "name": "add", "arguments": {"arg_0": 2, "arg_1": 3}},
                        {"id": "nap1", "name": "slow", "arguments": {"seconds": 1.0}},
                        {"id": "nap2", "name": "slow", "arguments": {"seconds": 1.0}},
                        {
                            "id": "now",
                            "name": "get_current_time",
                            "arguments": {"timezone": {"$ref": "user.tz"}},
                        },
                    ],
                },
                {
                    "description": "calls that use earlier results",
                    "tools": [
                        {
                            "id": "sq",
                            "name": "power",
                            "arguments": {"arg_0": {"$ref": "a.result"}, "arg_1": 2},
                        },
                        {
                            "id": "ranked",
                            "name": "rank_spots",
                            "arguments": {
                                "lat": {"$ref": "geo.lat"},
                                "lon": {"$ref": "geo.lon"},
                                "start_date": "2026-01-16",
                                "end_date": "2026-01-23",
                                "activity": "beach",
                                "top_k": 3,
                            },
                        },
                        {
                            "id": "conv",
                            "name": "convert_time",
                            "arguments": {
                                "source_timezone": {"$ref": "now.timezone"},
                                "time": "12:00",
                                "target_timezone": "Europe/Berlin",
                            },
                        },
                    ],
                },
                {
                    "description": "use a nested result",
                    "tools": [
                        {
                            "id": "best",
                            "name": "echo_text",
                            "arguments": {"text": {"$ref": "ranked.result.0.name"}},
                        },
                    ],
                },
            ],
            "final": None,
        }
        async with open_tools(config) as tools:
            started = time.perf_counter()
            records = await execute_plan(plan, tools, user={"destination": "Barcelona", "tz": "Asia/Tokyo"})
            elapsed = time.perf_counter() - started
    assert {r["id"]: r["status"] for r in records.values()} == dict.fromkeys(
        ["geo", "a", "nap1", "nap2", "now", "sq", "ranked", "conv", "best"], "ok"
    ), {r["id"]: r["error"] for r in records.values()}
    assert elapsed < 1.9  # the two one-second naps of step 1 overlapped
    assert (records["geo"]["result"]["lat"], records["geo"]["result"]["lon"]) == BARCELONA
    assert records["sq"]["result"] == {"result": 25.0}
    assert records["ranked"]["args"]["lat"] == BARCELONA[0]
    assert records["best"]["result"] == {"result": records["ranked"]["result"]["result"][0]["name"]}
    assert records["conv"]["args"]["source_timezone"] == "Asia/Tokyo"
    assert records["conv"]["result"]["source"]["timezone"] == "Asia/Tokyo"
    assert records["conv"]["result"]["target"]["datetime"][11:16] in {"04:00", "05:00"}
