"""A call whose result contradicts what the question states (mcp-server-time, real, over stdio; a replay model):
the question gives a clock time for one place, the conversion took it as the other place's time. The planner is
told once, with the places, and its corrected plan is what the answer comes from."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import open_tools
from tests.helpers import make_agent
from tests.third_party import time_server

QUESTION = "Wie spät ist es in New York, wenn es in Berlin 15:00 Uhr ist?"


def convert(source: str, target: str) -> str:
    arguments = {"source_timezone": source, "time": "15:00", "target_timezone": target}
    return json.dumps({"steps": [{"tools": [{"id": "conv", "name": "convert_time", "arguments": arguments}]}]})


WRONG = convert("America/New_York", "Europe/Berlin")
RIGHT = convert("Europe/Berlin", "America/New_York")


@pytest.fixture
async def time_tools() -> AsyncIterator[Any]:
    command, *args = time_server()
    async with open_tools({"mcpServers": {"time": {"command": command, "args": args}}}) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools


async def ask(model: ReplayChatModel, tools: Any) -> Any:
    async with make_agent(model, tools=tools, profile="generic", embedding_model="none") as planwerk:
        return await planwerk.ask(QUESTION)


async def test_a_conversion_the_wrong_way_round_is_planned_again_with_the_places_named(time_tools: Any) -> None:
    model = ReplayChatModel.of([WRONG, RIGHT, "Wenn es in Berlin 15:00 Uhr ist, ist es in New York 09:00 Uhr."])
    reply = await ask(model, time_tools)
    replans = [event for event in reply.events if event["event"] == "replan"]
    assert len(replans) == 1
    assert replans[0]["reason"] == (
        "- conv (convert_time) hat 15:00 als Uhrzeit in America/New_York genommen, die Frage nennt 15:00 aber für "
        "Berlin."
    )
    # The planner reads it with the result so far; the answer comes from the corrected call.
    second = "\n".join(str(message.content) for message in model.prompts[1])
    assert "sein Ergebnis widerspricht der Frage" in second and "America/New_York genommen" in second
    # With the corrected plan: the call's two places swapped.
    shown = second.split("Mit getauschten Orten wäre der Plan:\n", 1)[1].splitlines()[0]
    assert (
        json.loads(shown)["steps"][0]["tools"][0]["arguments"] == json.loads(RIGHT)["steps"][0]["tools"][0]["arguments"]
    )
    assert reply.answer == "Wenn es in Berlin 15:00 Uhr ist, ist es in New York 09:00 Uhr."


async def test_a_conversion_the_right_way_round_is_not_questioned(time_tools: Any) -> None:
    model = ReplayChatModel.of([RIGHT, "Wenn es in Berlin 15:00 Uhr ist, ist es in New York 09:00 Uhr."])
    reply = await ask(model, time_tools)
    assert not [event for event in reply.events if event["event"] == "replan"]
    assert reply.metadata["llm_calls"] == 2


async def test_the_same_contradiction_is_not_told_twice_and_the_call_written_again_runs_swapped(
    time_tools: Any,
) -> None:
    # The planner writes the told plan again: telling it once more would loop, and the same call would deliver the
    # same contradiction; code swaps its two places, says so in the plan event, and the answer comes from that.
    model = ReplayChatModel.of([WRONG, WRONG, "Wenn es in Berlin 15:00 Uhr ist, ist es in New York 09:00 Uhr."])
    reply = await ask(model, time_tools)
    assert len([event for event in reply.events if event["event"] == "replan"]) == 1
    plans = [event for event in reply.events if event["event"] == "plan"]
    assert [event["swapped"] for event in plans] == [[], ["conv"]]
    assert (
        plans[1]["plan"]["steps"][0]["tools"][0]["arguments"] == json.loads(RIGHT)["steps"][0]["tools"][0]["arguments"]
    )
    assert reply.answer == "Wenn es in Berlin 15:00 Uhr ist, ist es in New York 09:00 Uhr."
    assert reply.metadata["llm_calls"] == 3
