"""A call's timeout is its server's configured one; ``--tool-timeout`` and ``Context.tool_timeout_s`` override it,
longer or shorter, on both sides of the call. Against the real server-everything's long-running operation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from planwerk.agent import Agent
from planwerk.core.tools import ToolSpec
from planwerk.execution import DEFAULT_TOOL_TIMEOUT_S, call_timeout
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import open_tools
from tests.graph.tools import plan_json
from tests.tools.third_party.content_servers import cli_files, everything_stdio, run_cli

LONG = "trigger-long-running-operation"
REPLIES = ["The operation ended."] * 4
"""The answer (and its regenerations, should the answer check ask for them)."""


def operation(seconds: float) -> dict[str, Any]:
    """A plan call of the long-running operation taking ``seconds`` in one step."""
    return {"id": "op", "name": LONG, "arguments": {"duration": seconds, "steps": 1}}


async def run(server_timeout_s: float, seconds: float, **context: Any) -> list[dict[str, Any]]:
    """The events of a run whose one call takes ``seconds`` on a server configured with ``server_timeout_s``."""
    config = {"mcpServers": {"everything": everything_stdio(server_timeout_s)}}
    async with open_tools(config) as tools:
        assert tools.specs[LONG].timeout_s == server_timeout_s
        model = ReplayChatModel.of([plan_json([operation(seconds)]), *REPLIES])
        settings = Context(tool_retry_attempts=1, max_plan_attempts=1, **context)
        async with Agent(model=model, tools=tools, retriever=False, context=settings) as agent:
            reply = await agent.ask("Run the long operation.", thread_id="t")
    return reply.events


def outcome(events: list[dict[str, Any]]) -> dict[str, Any]:
    """The call's ``tool_result`` or ``tool_error`` event."""
    [event] = [e for e in events if e["event"] in ("tool_result", "tool_error") and e["id"] == "op"]
    return event


async def test_the_servers_own_timeout_bounds_the_call() -> None:
    event = outcome(await run(server_timeout_s=0.5, seconds=30))
    assert event["event"] == "tool_error" and event["kind"] == "timeout" and "after 0.5 s" in event["error"]


async def test_the_runs_timeout_overrides_a_shorter_server_timeout() -> None:
    # Before: the server's 0.5 s cut the call whatever the run allowed.
    event = outcome(await run(server_timeout_s=0.5, seconds=1.5, tool_timeout_s=60))
    assert event["event"] == "tool_result" and "Long running operation completed" in event["result"]


def test_cli_tool_timeout_overrides_a_longer_server_timeout(tmp_path: Path) -> None:
    files = cli_files(tmp_path, everything_stdio(120), [plan_json([operation(30)]), *REPLIES])
    events = run_cli(["ask", "Run the long operation.", *files, "--tool-timeout", "0.5"], tmp_path / "home")
    errors = [e for e in events if e["event"] == "tool_error"]
    assert errors and all(e["kind"] == "timeout" and "after 0.5 s" in e["error"] for e in errors)


def test_the_timeout_is_the_override_else_the_tools_own_else_the_default() -> None:
    spec = ToolSpec(name="t", timeout_s=120)
    assert call_timeout(5, spec) == 5
    assert call_timeout(None, spec) == 120
    assert call_timeout(None, ToolSpec(name="t")) == call_timeout(None, None) == DEFAULT_TOOL_TIMEOUT_S


@pytest.mark.parametrize("bad", [0, -1, "30", True])
def test_a_bad_tool_timeout_is_named(bad: Any) -> None:
    assert Context().tool_timeout_s is None  # each server's own
    with pytest.raises(ValueError, match="tool_timeout_s must be a positive number"):
        Context(tool_timeout_s=bad)
