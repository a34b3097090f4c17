"""A plan that calls nothing answers in its own words; when those words state a number, date or place nothing backs,
the planner tries again with the tools instead of the run ending on an invented answer. Replay model, real tools."""

from __future__ import annotations

import json

from langgraph.checkpoint.memory import InMemorySaver

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.base import FunctionToolSource
from tests.graph.tools import GEO, plan_json, replay_agent, weather_call

QUESTION = "Wie wird das Wetter in Barcelona am 1. Dezember 2026?"
GOOD_PLAN = plan_json([GEO], [weather_call("2026-12-01")])


def no_calls(final: str) -> str:
    return json.dumps({"steps": [], "final": final}, ensure_ascii=False)


async def test_an_invented_answer_without_calls_is_sent_back_and_the_tools_run() -> None:
    model = ReplayChatModel.of([no_calls("In Barcelona werden es am 1. Dezember 22 °C."), GOOD_PLAN, "17 °C."])
    async with replay_agent(model) as planwerk:
        events = [event async for event in planwerk.events(QUESTION, thread_id="t")]
        state = await planwerk.state("t")
    replans = [e for e in events if e["event"] == "replan"]
    assert len(replans) == 1 and "22 °C" in replans[0]["reason"] and "kein Werkzeug" in replans[0]["reason"]
    assert [call["tool"] for call in state["calls"]] == ["geocode", "get_weather"]
    assert state["answer"] == "17 °C." and model.calls == 3
    # the planner saw why: its rejected reply and the problem, in the profile's language
    retry_prompt = "\n".join(str(m.content) for m in model.prompts[1])
    assert "22 °C" in retry_prompt and "Plane die Aufrufe" in retry_prompt


async def test_a_backed_or_empty_final_stands_without_another_model_call() -> None:
    # A refusal states nothing to back; a final that only repeats the question's date and place is backed by it.
    for final in ("Dazu kann ich nichts sagen.", "Am 1. Dezember 2026 in Barcelona: dazu fehlen mir Daten."):
        model = ReplayChatModel.of([no_calls(final)])
        async with replay_agent(model) as planwerk:
            reply = await planwerk.ask(QUESTION)
        assert reply.answer == final and model.calls == 1 and reply.metadata["answer_source"] == "planner"


async def test_on_the_last_attempt_the_final_goes_to_the_answer_check() -> None:
    invented = no_calls("Es werden 22 °C.")
    model = ReplayChatModel.of([invented, invented, "Es werden 22 °C."])
    async with replay_agent(model, max_plan_attempts=2) as planwerk:
        reply = await planwerk.ask(QUESTION)
    # attempt 1 was sent back; attempt 2 is the last: the finalizer checks it, asks once more, then falls back
    assert model.calls == 3 and reply.metadata["plan_attempts"] == 2
    assert "22" not in (reply.answer or "") and reply.metadata["answer_source"] == "fallback"


async def test_without_tools_to_plan_with_the_final_is_not_sent_back() -> None:
    model = ReplayChatModel.of([no_calls("Es werden 22 °C."), "Es werden 22 °C."])
    nothing = FunctionToolSource([])  # e.g. every MCP server down: no call could back the answer
    async with Agent(
        model=model, tools=nothing, retriever=False, checkpointer=InMemorySaver(), context=Context(today="2026-11-22")
    ) as planwerk:
        reply = await planwerk.ask(QUESTION)
    assert reply.metadata["plan_attempts"] == 1 and reply.metadata["answer_source"] in ("regenerated", "fallback")
