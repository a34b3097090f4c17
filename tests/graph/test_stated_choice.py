"""A listed value the question did not choose gives way to the one it chose, in the check node, for every profile
with JSON plans (the travel set's s1: "Sehenswürdigkeiten" planned as ``activity: "hiking"``). Replay model, real
function tools."""

from __future__ import annotations

from typing import Annotated

import pytest
from pydantic import Field

from planwerk.models.replay import ReplayChatModel
from planwerk.tools.base import FunctionToolSource
from tests.graph.tools import plan_json
from tests.helpers import make_agent

QUESTION = "Welche Sehenswürdigkeiten gibt es in Barcelona?"


def spot_tools(log: list[dict]) -> FunctionToolSource:
    async def get_spots(
        place: Annotated[str, Field(description="A city.")],
        activity: Annotated[
            str,
            Field(description="hiking, running, beach or sightseeing (German: Wandern, Strand, Sehenswürdigkeiten)."),
        ],
    ) -> list[str]:
        """Named places for an activity in a city."""
        log.append({"place": place, "activity": activity})
        return ["Sagrada Família"] if activity in ("sightseeing", "Sehenswürdigkeiten") else ["Collserola"]

    return FunctionToolSource([get_spots])


@pytest.mark.parametrize("profile", ["travel", "generic"])
async def test_the_question_s_choice_among_listed_values_is_the_call_s(profile: str) -> None:
    log: list[dict] = []
    hiking = plan_json([{"id": "s", "name": "get_spots", "arguments": {"place": "Barcelona", "activity": "hiking"}}])
    model = ReplayChatModel.of([hiking, "In Barcelona gibt es die Sagrada Família."])
    async with make_agent(model, tools=spot_tools(log), profile=profile) as planwerk:
        await planwerk.ask(QUESTION, thread_id="t")
    assert log == [{"place": "Barcelona", "activity": "Sehenswürdigkeiten"}]
