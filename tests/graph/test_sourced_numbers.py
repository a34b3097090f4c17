"""A travel plan may not invent precise numbers (coordinates): the planner is sent back to take them from a call.
Replay model, real function tools; the rule is the profile's (``Profile.sourced_numbers``)."""

from __future__ import annotations

from planwerk.models.replay import ReplayChatModel
from tests.graph.tools import GEO, plan_json, replay_agent, weather_call

QUESTION = "Wie wird das Wetter in Barcelona am 1. Dezember 2026?"
INVENTED = plan_json(
    [{"id": "wx", "name": "get_weather", "arguments": {"lat": 20.26, "lon": 16, "start_date": "2026-12-01",
                                                       "end_date": "2026-12-01"}}]
)  # fmt: skip
GOOD_PLAN = plan_json([GEO], [weather_call("2026-12-01")])


async def test_invented_coordinates_are_sent_back_and_the_geocoded_plan_runs() -> None:
    model = ReplayChatModel.of([INVENTED, GOOD_PLAN, "Am 1. Dezember 2026 werden es in Barcelona 17.2 °C."])
    async with replay_agent(model) as planwerk:
        events = [event async for event in planwerk.events(QUESTION, thread_id="t")]
        state = await planwerk.state("t")
    (replan,) = [e for e in events if e["event"] == "replan"]
    assert "lat = 20.26" in replan["reason"] and "$ref" in replan["reason"]
    assert "lon" not in replan["reason"]  # 16 is a whole number: a choice, not a measurement
    assert [call["tool"] for call in state["calls"]] == ["geocode", "get_weather"]
    assert state["calls"][1]["args"]["lat"] == 41.3825802


async def test_a_profile_without_the_rule_runs_the_literal() -> None:
    model = ReplayChatModel.of([INVENTED, "Am 1. Dezember 2026: 17.2 °C."])
    async with replay_agent(model, profile="generic") as planwerk:
        events = [event async for event in planwerk.events(QUESTION, thread_id="t")]
        state = await planwerk.state("t")
    assert not [e for e in events if e["event"] == "replan"]
    assert state["calls"][0]["args"]["lat"] == 20.26
