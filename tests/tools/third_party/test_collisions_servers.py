"""Tool name collisions between real servers: resolved by prefixes (configured, or automatic), never by hiding.

Two instances of ``mcp-server-time`` (PyPI) expose the same two tool names; two instances of the npm
``server-memory``, each with its own file, show that a prefixed call reaches its own server.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from planwerk.tools.config import ConfigError, load_config, offered_tool_names
from planwerk.tools.mcp import open_tools
from tests.third_party import npm_server, time_server


def time_entry(zone: str, **extra: Any) -> dict[str, Any]:
    command, *args = time_server()
    args[args.index("--local-timezone") + 1] = zone
    return {"command": command, "args": args, "timeout": 30, **extra}


def test_offered_names_prefix_only_what_collides_and_never_drop_a_tool() -> None:
    assert offered_tool_names([("a", None, "t"), ("b", None, "t"), ("b", None, "u")]) == ["a_t", "b_t", "u"]
    assert offered_tool_names([("a", "x", "t"), ("b", None, "t")]) == ["x_t", "t"]  # a prefix ends the collision
    # A prefixed name that spells another server's tool name is numbered, not dropped.
    assert offered_tool_names([("x", None, "t"), ("y", None, "t"), ("z", None, "x_t")]) == ["x_t", "y_t", "x_t_2"]
    assert offered_tool_names([("a", "p", "t"), ("b", "p", "t")]) == ["p_t", "p_t_2"]


def test_prefix_config_is_validated() -> None:
    config = load_config({"mcpServers": {"berlin": time_entry("Europe/Berlin", prefix=True)}})
    assert config.servers["berlin"].tool_prefix == "berlin"
    assert load_config({"mcpServers": {"b": time_entry("Europe/Berlin", prefix="de")}}).servers["b"].tool_prefix == "de"
    assert (
        load_config({"mcpServers": {"b": time_entry("Europe/Berlin", prefix=False)}}).servers["b"].tool_prefix is None
    )
    for bad in ("", "a b", 3, "x" * 40):
        with pytest.raises(ConfigError, match=r"mcpServers\.b\.prefix: expected true or a prefix of letters"):
            load_config({"mcpServers": {"b": time_entry("Europe/Berlin", prefix=bad)}})
    with pytest.raises(ConfigError, match=r"mcpServers\.with space\.prefix: .*the server's name, as prefix: true"):
        load_config({"mcpServers": {"with space": time_entry("Europe/Berlin", prefix=True)}})


async def test_two_servers_with_the_same_tools_are_both_offered_prefixed() -> None:
    config = {"mcpServers": {"berlin": time_entry("Europe/Berlin"), "tokyo": time_entry("Asia/Tokyo")}}
    async with open_tools(config) as tools:
        assert set(tools.specs) == {
            "berlin_get_current_time",
            "berlin_convert_time",
            "tokyo_get_current_time",
            "tokyo_convert_time",
        }
        berlin, tokyo = tools.specs["berlin_get_current_time"], tools.specs["tokyo_get_current_time"]
        assert (berlin.server, tokyo.server) == ("berlin", "tokyo")
        # Each spec is its own server's: the time server names its local zone in the argument description.
        assert "Europe/Berlin" in json.dumps(berlin.input_schema) and "Asia/Tokyo" in json.dumps(tokyo.input_schema)
        result = await tools.call("tokyo_get_current_time", {"timezone": "Asia/Tokyo"})
        assert result["timezone"] == "Asia/Tokyo"
        converted = await tools.call(
            "berlin_convert_time", {"source_timezone": "Europe/Berlin", "time": "12:00", "target_timezone": "UTC"}
        )
        assert converted["target"]["datetime"][11:16] in {"11:00", "10:00"}  # winter or summer time


async def test_a_configured_prefix_applies_without_a_collision_and_ends_one() -> None:
    config = {
        "mcpServers": {
            "berlin": time_entry("Europe/Berlin", prefix="de"),
            "tokyo": time_entry("Asia/Tokyo"),
        }
    }
    async with open_tools(config) as tools:
        assert set(tools.specs) == {"de_get_current_time", "de_convert_time", "get_current_time", "convert_time"}
        assert tools.specs["get_current_time"].server == "tokyo"
        assert (await tools.call("de_get_current_time", {"timezone": "Europe/Berlin"}))["timezone"] == "Europe/Berlin"


async def test_allowed_tools_use_the_servers_own_names() -> None:
    config = {
        "mcpServers": {
            "berlin": time_entry("Europe/Berlin", allowed_tools=["convert_time"]),
            "tokyo": time_entry("Asia/Tokyo", allowed_tools=["get_current_time"]),
        }
    }
    async with open_tools(config) as tools:
        assert set(tools.specs) == {"convert_time", "get_current_time"}  # no collision left: no prefix


async def test_prefixed_calls_reach_their_own_npm_server(tmp_path: Path) -> None:
    command = npm_server("mcp-server-memory")

    def memory(name: str) -> dict[str, Any]:
        return {"command": command, "env": {"MEMORY_FILE_PATH": str(tmp_path / f"{name}.jsonl")}, "timeout": 30}

    async with open_tools({"mcpServers": {"home": memory("home"), "work": memory("work")}}) as tools:
        assert {"home_create_entities", "work_create_entities", "home_read_graph", "work_read_graph"} <= set(
            tools.specs
        )
        assert not any(name in tools.specs for name in ("create_entities", "read_graph"))
        entity = {"name": "Alice", "entityType": "person", "observations": ["likes tea"]}
        await tools.call("home_create_entities", {"entities": [entity]})
        home, work = await tools.call("home_read_graph", {}), await tools.call("work_read_graph", {})
    assert [e["name"] for e in home["entities"]] == ["Alice"]
    assert work["entities"] == []
    assert "Alice" in (tmp_path / "home.jsonl").read_text() and not (tmp_path / "work.jsonl").exists()
