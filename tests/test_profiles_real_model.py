"""The generic profile with the packaged default model: a time question against the real ``mcp-server-time``.

Before the generic profile, the default (travel) persona made the model refuse this question although the time
tool was loaded. Run it alone and under the heavy-work lock: ``flock /tmp/planwerk-heavy.lock .venv/bin/python -m
pytest -q -m slow tests/test_profiles_real_model.py``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.text.dates import clock_times
from tests.third_party import time_server

pytestmark = pytest.mark.slow


@pytest.fixture
def time_config(tmp_path: Path) -> Path:
    command, *args = time_server()
    path = tmp_path / "mcp.json"
    path.write_text(json.dumps({"mcpServers": {"time": {"command": command, "args": args, "timeout": 60}}}))
    return path


def calls_of(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["event"] == "tool_call"]


@pytest.mark.parametrize(
    ("question", "zone"),
    [
        ("What time is it in Tokyo right now?", "Asia/Tokyo"),
        ("Wie spät ist es gerade in New York?", "America/New_York"),
    ],
)
async def test_the_default_model_answers_a_time_question_with_the_time_tool(
    time_config: Path, question: str, zone: str
) -> None:
    # No --profile: an MCP config of one's own makes the default the generic profile.
    agent = Agent(
        model="default",
        mcp_config=time_config,
        retriever=False,
        checkpointer=InMemorySaver(),
        context=Context(today="2026-11-22"),
    )
    async with agent as planwerk:
        reply = await planwerk.ask(question)
    # The question is answered from the time tool: a call for the zone returned (a small model may add a second,
    # broken call beside it; its error then goes to the replanner), and the answer states the returned time.
    results = {e["id"]: e["result"] for e in reply.events if e["event"] == "tool_result"}
    answered = [c for c in calls_of(reply.events) if c["id"] in results and c["args"] == {"timezone": zone}]
    assert answered and answered[0]["tool"] == "get_current_time", reply.events
    returned = results[answered[0]["id"]]["datetime"]  # "2026-11-23T13:05:42+09:00"
    hour, minute = int(returned[11:13]), int(returned[14:16])
    stated = clock_times(reply.answer or "")  # "13:05", "1:05 PM" or the datetime itself
    assert (hour, minute) in stated or (hour % 12, minute) in stated, (reply.answer, results)
