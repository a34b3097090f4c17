"""An optional argument whose allowed values the question states, left out by a call, is set to them."""

from __future__ import annotations

from typing import Any

from planwerk.core.enum_values import listed_values, stated_choices, stated_enum_values
from planwerk.core.plan import Plan
from planwerk.core.tools import ToolSpec

EVENTS = ToolSpec(
    name="find_event",
    description="Find events for groups by location and event type.",
    input_schema={
        "type": "object",
        "properties": {
            "location": {"type": "string"},
            "event_type": {"type": "array", "items": {"type": "string", "enum": ["Concert", "Sports", "Festival"]}},
            "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]},
            "order": {"type": "string", "enum": ["asc", "desc"]},
        },
        "required": ["location"],
    },
)
QUESTION = "Find events in Seattle for us: we would like to attend a concert or a Sports event."


def _arguments(data: Any) -> dict[str, Any]:
    [(_, call)] = list(Plan.model_validate(data).calls())
    return call.arguments


def _plan(**arguments: Any) -> Plan:
    call = {"id": "e", "name": "find_event", "arguments": arguments}
    return Plan.model_validate({"steps": [{"tools": [call]}]})


def test_an_optional_argument_left_out_takes_the_allowed_values_the_question_states() -> None:
    completed = stated_enum_values(_plan(location="Seattle"), QUESTION, {"find_event": EVENTS})
    assert _arguments(completed) == {"location": "Seattle", "event_type": ["Concert", "Sports"]}
    one = stated_enum_values(_plan(location="Seattle"), "Events in Seattle, in fahrenheit.", {"find_event": EVENTS})
    assert _arguments(one) == {"location": "Seattle", "unit": "fahrenheit"}


def test_given_arguments_tools_that_act_and_unclear_values_are_left_alone() -> None:
    specs = {"find_event": EVENTS}
    assert stated_enum_values(_plan(location="Seattle", event_type=["Concert"]), QUESTION, specs) is None
    assert stated_enum_values(_plan(location="Seattle"), QUESTION, specs, fixed={"find_event"}) is None
    both = "Events in Seattle: asc or desc, and celsius or fahrenheit?"  # one value each, and two were stated
    assert stated_enum_values(_plan(location="Seattle"), both, specs) is None
    assert stated_enum_values(_plan(location="Seattle"), "Sportsfest events in Seattle", specs) is None  # no word


def test_values_a_description_quotes_by_example_count_as_allowed_values() -> None:
    # A function-calling benchmark's multiple entry: "the structural dynamic analysis" for a mode described
    # "Mode of analysis, e.g. 'static' or 'dynamic'. Default is 'static'."
    mode = {"type": "string", "description": "Mode of analysis, e.g. 'static' or 'dynamic'. Default is 'static'."}
    spec = ToolSpec(
        name="analyze_structure",
        input_schema={"type": "object", "properties": {"building_id": {"type": "string"}, "mode": mode}},
    )
    call = {"id": "a", "name": "analyze_structure", "arguments": {"building_id": "B1004"}}
    plan = Plan.model_validate({"steps": [{"tools": [call]}]})
    completed = stated_enum_values(plan, "The structural dynamic analysis of building B1004?", {spec.name: spec})
    assert _arguments(completed) == {"building_id": "B1004", "mode": "dynamic"}
    quoted_only = {"type": "string", "description": "The mode, 'static' or 'dynamic'."}  # no example: no values
    plain = ToolSpec(name=spec.name, input_schema={"type": "object", "properties": {"mode": quoted_only}})
    assert stated_enum_values(plan, "The dynamic analysis of building B1004?", {spec.name: plain}) is None


ACTIVITY = {
    "type": "string",
    "description": "hiking, running, beach, sightseeing (sights, attractions) or parks "
    "(German names work too: Wandern, Joggen, Strand, Sehenswürdigkeiten).",
}
SPOTS = ToolSpec(
    name="get_spots",
    input_schema={
        "type": "object",
        "properties": {"place": {"type": "string", "description": "A city."}, "activity": ACTIVITY},
    },
)


def _spots(**arguments: Any) -> Plan:
    return Plan.model_validate({"steps": [{"tools": [{"id": "s", "name": "get_spots", "arguments": arguments}]}]})


def test_a_description_that_lists_names_gives_them_as_allowed_values() -> None:
    assert listed_values(ACTIVITY) == [
        "hiking", "running", "beach", "sightseeing", "sights", "attractions", "parks",
        "Wandern", "Joggen", "Strand", "Sehenswürdigkeiten",
    ]  # fmt: skip
    assert listed_values({"type": "string", "description": "The city and state, for example Berlin."}) == []
    assert listed_values({"type": "string", "description": "celsius or fahrenheit"}) == []  # two names: no list
    assert listed_values({"type": "integer", "description": "1, 2, 3 or 4"}) == []
    assert listed_values(EVENTS.input_schema["properties"]["unit"]) == ["celsius", "fahrenheit"]


def test_a_listed_value_the_question_does_not_state_gives_way_to_the_one_it_states() -> None:
    # The travel set's s1 (0.5B model): sights asked for in German, planned as hiking.
    question = "Welche Sehenswürdigkeiten gibt es im Umkreis von 2 km um Barcelona?"
    chosen = stated_choices(_spots(place="Barcelona", activity="hiking"), question, {"get_spots": SPOTS})
    assert _arguments(chosen) == {"place": "Barcelona", "activity": "Sehenswürdigkeiten"}
    unit = stated_choices(_plan(location="Seattle", unit="celsius"), "Seattle in Fahrenheit?", {"find_event": EVENTS})
    assert _arguments(unit) == {"location": "Seattle", "unit": "fahrenheit"}


def test_a_choice_the_question_makes_too_or_leaves_open_is_left_alone() -> None:
    specs = {"get_spots": SPOTS}
    hiking = _spots(place="Barcelona", activity="hiking")
    assert stated_choices(hiking, "Wo kann ich bei Barcelona hiking machen, Sehenswürdigkeiten?", specs) is None
    assert stated_choices(hiking, "Strand oder Sehenswürdigkeiten in Barcelona?", specs) is None  # two stated
    assert stated_choices(hiking, "Was gibt es in Barcelona?", specs) is None  # none stated
    assert stated_choices(hiking, "Sehenswürdigkeiten in Barcelona?", specs, fixed={"get_spots"}) is None
    free = _spots(place="Madrid", activity="hiking")  # a value no list holds is not a choice among them
    assert _arguments(stated_choices(free, "Sehenswürdigkeiten in Barcelona?", specs))["place"] == "Madrid"
