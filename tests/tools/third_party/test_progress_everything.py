"""Progress notifications of the real server-everything's long-running operation become ``tool_progress`` events:
at the tool source (stdio and streamable HTTP), in a graph run's stream, and in ``planwerk ask --json``."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from planwerk.agent import Agent
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.call_options import ToolProgress, call_options
from planwerk.tools.mcp import MCPToolSource, open_tools
from tests.graph.tools import plan_json
from tests.tools.third_party.content_servers import cli_files, everything_config, everything_stdio, run_cli

LONG = "trigger-long-running-operation"
OPERATION = {"id": "op", "name": LONG, "arguments": {"duration": 0.3, "steps": 3}}
"""Three progress notifications, 0.1 s apart."""


@pytest.fixture(params=["stdio", "http"])
async def everything(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[MCPToolSource]:
    """A tool source on a fresh server-everything, over each transport."""
    with everything_config(request.param, tmp_path) as config:
        async with open_tools(config) as tools:
            assert not tools.unavailable, tools.unavailable
            yield tools


async def test_a_call_with_a_progress_sink_gets_every_notification(everything: MCPToolSource) -> None:
    received: list[ToolProgress] = []
    with call_options(on_progress=received.append):
        result = await everything.call(LONG, OPERATION["arguments"])
    assert result == "Long running operation completed. Duration: 0.3 seconds, Steps: 3."
    assert received == [ToolProgress(progress=n, total=3, message=None) for n in (1, 2, 3)]
    # Outside call_options nothing asks for progress (no progress token is sent) and the call works as before.
    assert await everything.call(LONG, {"duration": 0.1, "steps": 1}) == (
        "Long running operation completed. Duration: 0.1 seconds, Steps: 1."
    )


async def test_a_run_streams_tool_progress_between_the_call_and_its_result(everything: MCPToolSource) -> None:
    model = ReplayChatModel.of([plan_json([OPERATION]), "The operation completed."])
    async with Agent(model=model, tools=everything, retriever=False) as agent:
        reply = await agent.ask("Run the long operation.", thread_id="p")
    kinds = [event["event"] for event in reply.events]
    progress = [event for event in reply.events if event["event"] == "tool_progress"]
    assert [(e["id"], e["tool"], e["progress"], e["total"], e["message"]) for e in progress] == [
        ("op", LONG, n, 3, None) for n in (1, 2, 3)
    ]
    first, last = kinds.index("tool_progress"), len(kinds) - 1 - kinds[::-1].index("tool_progress")
    assert kinds.index("tool_call") < first and last < kinds.index("tool_result")


def test_ask_json_prints_tool_progress_events(tmp_path: Path) -> None:
    files = cli_files(tmp_path, everything_stdio(), [plan_json([OPERATION]), "The operation completed."])
    events = run_cli(["ask", "Run the long operation.", *files], tmp_path / "home")
    progress = [e for e in events if e["event"] == "tool_progress"]
    assert [(e["id"], e["tool"], e["progress"], e["total"]) for e in progress] == [
        ("op", LONG, n, 3) for n in (1, 2, 3)
    ]
    assert all("message" in e and "thread_id" in e for e in progress)
