"""Conversations and scope through the graph (replay model scripts the planner, in-process travel tools)."""

from __future__ import annotations

from typing import Annotated, Any

import pytest
from pydantic import Field

from planwerk.agent import Agent
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.base import FunctionToolSource
from tests.graph.tools import GEO, WEATHER, plan_json, travel_tools, weather_call
from tests.helpers import make_agent

FIRST = "Wie wird das Wetter in Barcelona am 1. Dezember 2026?"
MADRID_LISBON = plan_json(
    [
        {"id": "g1", "name": "geocode", "arguments": {"destination": "Madrid"}},
        {"id": "g2", "name": "geocode", "arguments": {"destination": "Lissabon"}},
    ]
)
"""What the 0.5B model planned for "Und morgen?" after a Barcelona question: the cities of a few-shot example."""


def agent(model: ReplayChatModel, log: list[tuple[str, dict]]) -> Agent:
    """The shared agent with the travel profile on the travel tools (their calls go to ``log``)."""
    return make_agent(model, tools=travel_tools(log), profile="travel")


async def test_a_follow_up_keeps_its_referent_and_a_plan_for_other_cities_is_rejected() -> None:
    log: list[tuple[str, Any]] = []
    model = ReplayChatModel.of(
        [
            plan_json([GEO], [weather_call("2026-12-01")]),
            "In Barcelona werden am 2026-12-01 bis zu 17.2 °C erwartet.",
            MADRID_LISBON,  # rejected before anything runs: nobody asked about Madrid or Lisbon
            plan_json([GEO], [weather_call("2026-11-23")]),
            "In Barcelona werden am 2026-11-23 bis zu 17.2 °C erwartet.",
        ]
    )
    async with agent(model, log) as planwerk:
        await planwerk.ask(FIRST, thread_id="trip")
        events = [event async for event in planwerk.events("Und morgen?", thread_id="trip")]
    follow_up_prompt = str(model.prompts[2][-1].content)
    assert follow_up_prompt.endswith(f"Frage: Und morgen? (vorherige Frage: {FIRST})")
    replans = [e for e in events if e.get("event") == "replan"]
    assert len(replans) == 1 and "Madrid" in replans[0]["reason"] and "Lissabon" in replans[0]["reason"]
    assert "Aufruf g1 nennt den Ort Madrid" in str(model.prompts[3][-1].content)  # the repair feedback, German
    assert [name for name, _ in log].count("geocode") == 2
    assert {args["destination"] for name, args in log if name == "geocode"} == {"Barcelona"}


async def test_a_two_city_comparison_planned_for_one_city_is_completed_for_the_other_in_code() -> None:
    """The travel bench's two-city questions were planned for one city three times and rejected three times: the
    plan's chain for Barcelona is copied for Rome instead, and the plan event says so."""
    log: list[tuple[str, Any]] = []
    model = ReplayChatModel.of(
        [
            plan_json([GEO], [WEATHER]),  # one city only
            "In Barcelona werden am 2026-11-22 bis zu 17.2 °C erwartet, in Rom ebenfalls 17.2 °C.",
        ]
    )
    async with agent(model, log) as planwerk:
        events = [e async for e in planwerk.events("Ist es heute in Barcelona oder in Rom wärmer?")]
    plans = [e for e in events if e.get("event") == "plan"]
    assert len(plans) == 1 and plans[0]["completed"] == ["Rom"] and model.calls == 2  # no replanning
    assert sorted(args["destination"] for name, args in log if name == "geocode") == ["Barcelona", "Rom"]
    weather = sorted((args["lat"], args["start_date"]) for name, args in log if name == "get_weather")
    assert weather == [(41.3825802, "2026-11-22"), (41.8933203, "2026-11-22")]  # Rome's weather at Rome's place
    assert not [e for e in events if e.get("event") == "replan"]


async def test_a_plan_for_another_city_than_asked_is_replanned_not_completed() -> None:
    log: list[tuple[str, Any]] = []
    rome = {"id": "rom", "name": "geocode", "arguments": {"destination": "Rom"}}
    madrid = {"id": "geo", "name": "geocode", "arguments": {"destination": "Madrid"}}
    model = ReplayChatModel.of(
        [
            plan_json([madrid]),  # invented and missing places: no chain to copy
            plan_json([GEO, rome]),
            "Barcelona liegt bei 41.38, 2.18, Rom bei 41.89, 12.48.",
        ]
    )
    async with agent(model, log) as planwerk:
        reply = await planwerk.ask("Wo liegen Barcelona und Rom?")
    feedback = str(model.prompts[1][-1].content)
    assert "Madrid" in feedback and "Die Frage nennt Rom, aber kein Aufruf des Plans verwendet diesen Ort" in feedback
    assert [args["destination"] for name, args in log if name == "geocode"] == ["Barcelona", "Rom"]
    assert reply.answer.startswith("Barcelona liegt bei 41.38")


async def test_an_out_of_domain_question_ends_in_the_profiles_refusal_in_the_questions_language() -> None:
    """'Capital of Australia' was answered 'Sydney': the planner is sent back twice (a place nothing names), its
    last attempt is rejected twice by the answer check, then the refusal."""
    final = plan_json(final="The capital of Australia is Sydney.")
    model = ReplayChatModel.of([final, final, final, "Sydney is the capital of Australia."])
    async with agent(model, []) as planwerk:
        reply = await planwerk.ask("What is the capital of Australia?")
    assert reply.answer == "I cannot answer this question, as it is outside what this assistant is for."
    assert reply.metadata["answer_source"] == "fallback"
    assert [e["attempt"] for e in reply.events if e["event"] == "replan"] == [1, 2]
    assert [e["attempt"] for e in reply.events if e["event"] == "answer_rejected"] == [1, 2]


class FailsOnce(ReplayChatModel):
    """A replay model whose first call dies after it started (as a process killed mid-generation would)."""

    failed: bool = False

    def _next(self, messages: Any, options: Any = None) -> str:
        if not self.failed:
            self.failed = True
            raise ConnectionError("the model process went away mid-generation")
        return super()._next(messages, options)


async def test_a_model_call_lost_to_a_crash_is_counted_when_the_run_continues() -> None:
    log: list[tuple[str, Any]] = []
    model = FailsOnce(responses=[plan_json([GEO], [WEATHER]), "In Barcelona werden heute bis zu 17.2 °C erwartet."])
    async with agent(model, log) as planwerk:
        with pytest.raises(ConnectionError):
            await planwerk.ask("Wie ist heute das Wetter in Barcelona?", thread_id="crash")
        reply = await planwerk.resume(thread_id="crash")  # continue the interrupted run from its checkpoint
    assert reply.answer == "In Barcelona werden heute bis zu 17.2 °C erwartet."
    assert reply.metadata["llm_calls"] == 3  # the lost plan call, the plan call again, the answer


async def test_a_place_planned_in_the_genitive_is_geocoded_by_its_name() -> None:
    """The 0.5B model planned geocode("Barcelonas") on the travel bench (a genitive copied from a retrieved chunk):
    the plan check took it for Barcelona, the geocoder found nothing. The plan runs with the name instead, and
    the plan event says what was replaced."""
    log: list[tuple[str, Any]] = []
    genitive = {**GEO, "arguments": {"destination": "Barcelonas"}}
    model = ReplayChatModel.of(
        [plan_json([genitive], [WEATHER]), "In Barcelona werden am 2026-11-22 bis zu 17.2 °C erwartet."]
    )
    async with agent(model, log) as planwerk:
        events = [e async for e in planwerk.events("Wie wird heute das Wetter in Barcelona?")]
    plans = [e for e in events if e.get("event") == "plan"]
    assert len(plans) == 1 and plans[0]["named"] == [{"call_id": "geo", "old": "Barcelonas", "new": "Barcelona"}]
    assert plans[0]["plan"]["steps"][0]["tools"][0]["arguments"] == {"destination": "Barcelona"}
    assert [args["destination"] for name, args in log if name == "geocode"] == ["Barcelona"]
    assert not [e for e in events if e.get("event") in ("replan", "tool_error")]


def palma_chain(day: str = "2026-11-22") -> str:
    """The chain of a few-shot example for Palma, as the 0.5B model copied it for a question about Barcelona."""
    geo = {"id": "geo_palma", "name": "geocode", "arguments": {"destination": "Palma"}}
    weather = {
        "id": "wetter_palma",
        "name": "get_weather",
        "arguments": {
            "lat": {"$ref": "geo_palma.lat"},
            "lon": "$ref:geo_palma.lon",
            "start_date": day,
            "end_date": day,
        },
    }
    return plan_json([geo], [weather])


PALMA_SUBSTITUTED = {
    "old": "Palma",
    "new": "Barcelona",
    "calls": ["geo_barcelona"],
    "renamed": {"geo_palma": "geo_barcelona", "wetter_palma": "wetter_barcelona"},
    "dropped": [],
}


async def test_a_plan_for_an_examples_city_runs_for_the_asked_city_without_asking_the_planner_again() -> None:
    """'Which parks are within 20 km of Barcelona?' was planned three times for Palma on the travel bench and ended
    with no plan: the one invented city is replaced by the one asked about, and the plan event says so."""
    log: list[tuple[str, Any]] = []
    model = ReplayChatModel.of(
        [palma_chain(), "In Barcelona werden am 2026-11-22 bis zu 17.2 °C erwartet."]  # one plan call, the answer
    )
    async with agent(model, log) as planwerk:
        events = [e async for e in planwerk.events("Wie wird heute das Wetter in Barcelona?")]
    plans = [e for e in events if e.get("event") == "plan"]
    assert len(plans) == 1 and plans[0]["substituted"] == [PALMA_SUBSTITUTED] and model.calls == 2
    assert [call["id"] for step in plans[0]["plan"]["steps"] for call in step["tools"]] == [
        "geo_barcelona",
        "wetter_barcelona",
    ]
    assert [args["destination"] for name, args in log if name == "geocode"] == ["Barcelona"]
    assert [args["lat"] for name, args in log if name == "get_weather"] == [41.3825802]
    assert not [e for e in events if e.get("event") in ("replan", "tool_error")]


async def test_a_follow_up_planned_for_an_examples_city_runs_for_the_referents_city() -> None:
    """'Und am 19. Januar?' after a Barcelona question was planned three times for Sevilla on the travel bench:
    the follow-up names no place, so the city of the question it continues is the asked one."""
    log: list[tuple[str, Any]] = []
    model = ReplayChatModel.of(
        [
            plan_json([GEO], [weather_call("2026-12-01")]),
            "In Barcelona werden am 2026-12-01 bis zu 17.2 °C erwartet.",
            palma_chain("2026-11-23"),
            "In Barcelona werden am 2026-11-23 bis zu 17.2 °C erwartet.",
        ]
    )
    async with agent(model, log) as planwerk:
        await planwerk.ask(FIRST, thread_id="trip")
        events = [e async for e in planwerk.events("Und morgen?", thread_id="trip")]
    plans = [e for e in events if e.get("event") == "plan"]
    assert len(plans) == 1 and plans[0]["substituted"] == [PALMA_SUBSTITUTED] and model.calls == 4
    assert not [e for e in events if e.get("event") in ("replan", "tool_error")]


async def test_a_follow_up_planned_as_an_examples_comparison_until_the_last_attempt_runs_for_the_referent() -> None:
    """The travel set's f1 (8bdd7bb): "Und am 19. Januar?" after a Barcelona question was planned three times as
    the comparison of two cities of an example, and ended without a plan. On the last attempt one chain runs for
    Barcelona, the other is left out, and the plan event says so."""
    log: list[tuple[str, Any]] = []
    comparison = plan_json(
        [
            {"id": "g1", "name": "geocode", "arguments": {"destination": "Madrid"}},
            {"id": "g2", "name": "geocode", "arguments": {"destination": "Lissabon"}},
        ],
        [
            {"id": "w1", "name": "get_weather", "arguments": {"lat": {"$ref": "g1.lat"}, "lon": {"$ref": "g1.lon"},
             "start_date": "2026-12-01", "end_date": "2026-12-01"}},  # the earlier day, as the 0.5B model wrote
            {"id": "w2", "name": "get_weather", "arguments": {"lat": {"$ref": "g2.lat"}, "lon": {"$ref": "g2.lon"},
             "start_date": "2026-12-02", "end_date": "2026-12-02"}},
        ],
    )  # fmt: skip
    model = ReplayChatModel.of(
        [
            plan_json([GEO], [weather_call("2026-12-01")]),
            "In Barcelona werden am 2026-12-01 bis zu 17.2 °C erwartet.",
            comparison,
            comparison,
            comparison,
            "In Barcelona werden am 2026-12-02 bis zu 17.2 °C erwartet.",
        ]
    )
    async with agent(model, log) as planwerk:
        await planwerk.ask(FIRST, thread_id="trip")
        events = [event async for event in planwerk.events("Und am 2. Dezember?", thread_id="trip")]
    assert [e["attempt"] for e in events if e.get("event") == "replan"] == [1, 2]
    [plan] = [e for e in events if e.get("event") == "plan"]
    assert plan["substituted"] == [
        {"old": "Madrid", "new": "Barcelona", "calls": ["g1"], "renamed": {}, "dropped": ["g2", "w2"]}
    ]
    follow_up_calls = log[2:]
    assert follow_up_calls == [
        ("geocode", {"destination": "Barcelona"}),
        ("get_weather", {"lat": 41.3825802, "lon": 2.177073, "start_date": "2026-12-02", "end_date": "2026-12-02"}),
    ]


async def test_a_follow_up_naming_another_day_runs_for_it_though_the_plan_copied_the_earlier_day() -> None:
    """The travel set's f1: "Und am 19. Januar?" after a question about the 18th was planned for the 18th (copied
    from the conversation) and answered for it. The day the follow-up names is written in instead."""
    log: list[tuple[str, Any]] = []
    model = ReplayChatModel.of(
        [
            plan_json([GEO], [weather_call("2026-12-01")]),
            "In Barcelona werden am 2026-12-01 bis zu 17.2 °C erwartet.",
            plan_json([GEO], [weather_call("2026-12-01")]),  # the earlier day again
            "In Barcelona werden am 2026-12-02 bis zu 17.2 °C erwartet.",
        ]
    )
    async with agent(model, log) as planwerk:
        await planwerk.ask(FIRST, thread_id="trip")
        reply = await planwerk.ask("Und am 2. Dezember?", thread_id="trip")
    weather = [args for name, args in log if name == "get_weather"]
    assert [(w["start_date"], w["end_date"]) for w in weather] == [
        ("2026-12-01", "2026-12-01"),
        ("2026-12-02", "2026-12-02"),
    ]
    assert reply.answer == "In Barcelona werden am 2026-12-02 bis zu 17.2 °C erwartet." and model.calls == 4


async def test_a_stray_call_given_the_asked_day_for_its_place_is_left_out_before_anything_runs() -> None:
    """The travel set's f1 (0.5B model): "Und am 19. Januar?" planned geocode("Barcelona"), geocode("2026-01-19")
    and the weather at the first; the second ran and failed. A day is no place, and nothing took its result."""
    places: list[str] = []

    async def geocode(destination: Annotated[str, Field(description="A place, e.g. 'Barcelona'.")]) -> dict:
        """Coordinates of a place."""
        places.append(destination)
        return {"lat": 41.38, "lon": 2.17}

    async def get_weather(lat: float, lon: float, start_date: str, end_date: str) -> dict:
        """Daily weather for a place and dates."""
        return {"date": start_date, "temperature_max": 17.2}

    planned = plan_json(
        [GEO, {"id": "geo_2", "name": "geocode", "arguments": {"destination": "2026-12-02"}}],
        [weather_call("2026-12-02")],
    )
    model = ReplayChatModel.of([planned, "In Barcelona werden am 2026-12-02 bis zu 17.2 °C erwartet."])
    tools = FunctionToolSource([geocode, get_weather])
    async with make_agent(model, tools=tools, profile="travel") as planwerk:
        reply = await planwerk.ask("Wie wird das Wetter in Barcelona am 2. Dezember 2026?")
    assert places == ["Barcelona"] and model.calls == 2
    assert reply.answer == "In Barcelona werden am 2026-12-02 bis zu 17.2 °C erwartet."


async def test_a_follow_up_answered_with_the_earlier_answers_values_is_regenerated() -> None:
    """The travel set's f1 (43e6666): "Und am 19. Januar?" ran the weather for the 19th, and the model answered with
    the 18th's values from the earlier answer; the check passed it, since the conversation grounded them. Where
    this question's calls delivered, earlier answers ground nothing (the person's words still do)."""

    async def geocode(destination: str) -> dict:
        """Coordinates of a place."""
        return {"lat": 41.38, "lon": 2.17, "name": destination}

    async def get_weather(lat: float, lon: float, start_date: str, end_date: str) -> dict:
        """Daily weather for a place and dates."""
        return {"date": start_date, "temperature_max": {"2026-12-01": 13.6, "2026-12-02": 12.6}[start_date]}

    stale = "In Barcelona werden am 2026-12-02 bis zu 13.6 °C erwartet."
    fresh = "In Barcelona werden am 2026-12-02 bis zu 12.6 °C erwartet."
    model = ReplayChatModel.of(
        [
            plan_json([GEO], [weather_call("2026-12-01")]),
            "In Barcelona werden am 2026-12-01 bis zu 13.6 °C erwartet.",
            plan_json([GEO], [weather_call("2026-12-02")]),
            stale,
            fresh,
        ]
    )
    async with make_agent(model, tools=FunctionToolSource([geocode, get_weather]), profile="travel") as planwerk:
        first = await planwerk.ask(FIRST, thread_id="trip")
        reply = await planwerk.ask("Und am 2. Dezember?", thread_id="trip")
    assert first.metadata["answer_source"] == "model"
    [rejected] = [e for e in reply.events if e["event"] == "answer_rejected"]
    assert rejected["answer"] == stale and any("13.6" in problem for problem in rejected["problems"])
    assert reply.answer == fresh and reply.metadata["answer_source"] == "regenerated"
