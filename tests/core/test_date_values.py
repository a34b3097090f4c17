"""Dates taken for values (issue 32: "the day after tomorrow" planned as geocode(destination="Tomorrow"))."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from planwerk.core.date_values import (
    DateValue,
    date_values,
    follow_up_day,
    is_date_expression,
    stated_day,
    takes_a_day,
    without_stray_day_places,
)
from planwerk.core.plan import Plan
from planwerk.text.gazetteer import default_gazetteer
from planwerk.text.places import Gazetteer

TODAY = date(2026, 11, 22)
PLACE = {"type": "string", "description": "A place name, e.g. 'Barcelona' or 'Rom, Italien'."}
SCHEMAS: dict[str, dict[str, Any]] = {
    "geocode": {"type": "object", "properties": {"destination": PLACE}},
    "note": {"type": "object", "properties": {"label": {"type": "string", "description": "A short label."}}},
    "weather": {
        "type": "object",
        "properties": {"day": {"type": "string", "format": "date"}, "start": {"type": "string", "pattern": "^x"}},
    },
}


@pytest.fixture(scope="module")
def gazetteer() -> Gazetteer:
    return default_gazetteer()


def plan(name: str, **arguments: Any) -> Plan:
    return Plan.model_validate({"steps": [{"tools": [{"id": "c", "name": name, "arguments": arguments}]}]})


@pytest.mark.parametrize(
    "value", ["Tomorrow", "the day after tomorrow", "übermorgen", "Morgen", "heute", "next Friday"]
)
def test_a_date_expression_is_no_place(value: str, gazetteer: Gazetteer) -> None:
    found = date_values(plan("geocode", destination=value), SCHEMAS, gazetteer=gazetteer, today=TODAY)
    assert found == [DateValue("c", "destination", value, takes_places=True)]


def test_a_parameter_that_names_no_place_is_still_no_date(gazetteer: Gazetteer) -> None:
    found = date_values(plan("note", label="tomorrow"), SCHEMAS, gazetteer=gazetteer, today=TODAY)
    assert found == [DateValue("c", "label", "tomorrow", takes_places=False)]
    # A tool the catalog does not describe: its parameters take no date either.
    assert date_values(plan("other", x="tomorrow"), SCHEMAS, gazetteer=gazetteer, today=TODAY)[0].argument == "x"


@pytest.mark.parametrize(
    "value",
    [
        "Barcelona",  # a place
        "Essen",  # a place that is also a word
        "Friday Harbor",  # more than a date
        "Heute Abend",  # a date and a word the date reader does not read
        "Wetter morgen in Rom",  # free text naming a place
        "$ref:g.lat",  # a reference
        "",
    ],
)
def test_places_written_dates_and_free_text_are_values(value: str, gazetteer: Gazetteer) -> None:
    assert date_values(plan("geocode", destination=value), SCHEMAS, gazetteer=gazetteer, today=TODAY) == []


def test_a_day_written_as_a_day_is_a_value_except_where_a_place_belongs(gazetteer: Gazetteer) -> None:
    # Measured on the travel set (f1, 0.5B model): geocode("2026-01-19") ran for "Und am 19. Januar?".
    found = date_values(plan("geocode", destination="2026-11-23"), SCHEMAS, gazetteer=gazetteer, today=TODAY)
    assert found == [DateValue("c", "destination", "2026-11-23", takes_places=True)]
    assert date_values(plan("note", label="2026-11-23"), SCHEMAS, gazetteer=gazetteer, today=TODAY) == []
    # The prompt's date line copied as a place (an English question, 0.5B model): a weekday and a day are a day too.
    found = date_values(plan("geocode", destination="Montag, 2026-12-07"), SCHEMAS, gazetteer=gazetteer, today=TODAY)
    assert found == [DateValue("c", "destination", "Montag, 2026-12-07", takes_places=True)]
    assert date_values(plan("note", label="Montag, 2026-12-07"), SCHEMAS, gazetteer=gazetteer, today=TODAY) == []
    assert date_values(plan("geocode", destination="Paris 2026"), SCHEMAS, gazetteer=gazetteer, today=TODAY) == []


def test_date_parameters_are_left_to_their_schema(gazetteer: Gazetteer) -> None:
    dated = plan("weather", day="tomorrow", start="tomorrow")
    assert date_values(dated, SCHEMAS, gazetteer=gazetteer, today=TODAY) == []


def test_a_date_expression_is_words_the_date_reader_reads() -> None:
    assert is_date_expression("day after tomorrow", TODAY)
    assert not is_date_expression("Barcelona", TODAY)
    assert not is_date_expression("tomorrow 2026", TODAY)  # digits: a value, whatever else it says


@pytest.mark.parametrize(
    ("parameter", "takes"),
    [
        ({"type": "string", "format": "date"}, True),
        ({"type": "string", "description": "The date, in the format of 'YYYY-MM-DD'."}, True),
        ({"type": "string", "default": "2019-03-01"}, True),
        ({"type": "string", "examples": ["2026-12-01"]}, True),
        ({"type": "string", "description": "The name of the city."}, False),
        ({"type": "string", "format": "date-time"}, False),  # a moment, not a day: left to the planner
    ],
)
def test_a_parameter_takes_a_day_when_its_schema_shows_the_form(parameter: dict[str, Any], takes: bool) -> None:
    assert takes_a_day(parameter) is takes


FORECAST = {
    "forecast": {
        "properties": {
            "city": {"type": "string"},
            "date": {"type": "string", "description": "in the format of 'YYYY-MM-DD'", "default": "2019-03-01"},
        }
    }
}


def _forecast(*arguments: dict[str, Any]) -> Plan:
    calls = [{"id": f"f{i}", "name": "forecast", "arguments": a} for i, a in enumerate(arguments)]
    return Plan.model_validate({"steps": [{"tools": calls}]})


def test_the_one_day_the_question_names_goes_into_the_day_parameter_left_out() -> None:
    # A function-calling benchmark's entry, 0.5B model: the city planned, the day left out.
    question = "Can you tell me the forecast for Pacifica on April 11th, 2023?"
    done = stated_day(_forecast({"city": "Pacifica"}), question, FORECAST, today=TODAY)
    assert done is not None and done["steps"][0]["tools"][0]["arguments"] == {"city": "Pacifica", "date": "2023-04-11"}
    german = stated_day(_forecast({"city": "Madrid"}), "Wetter in Madrid am 11. April 2023?", FORECAST, today=TODAY)
    assert german is not None and german["steps"][0]["tools"][0]["arguments"]["date"] == "2023-04-11"


@pytest.mark.parametrize(
    ("plan", "question", "fixed"),
    [
        (_forecast({"city": "Pacifica", "date": "2023-04-11"}), "Forecast for Pacifica on April 11th, 2023?", ()),
        (_forecast({"city": "Pacifica"}), "Forecast for Pacifica?", ()),  # no day named
        (_forecast({"city": "A"}), "Forecast for A on April 11th, 2023 and April 12th, 2023?", ()),  # two days
        (_forecast({"city": "A"}, {"city": "B"}), "Forecast for A and B on April 11th, 2023?", ()),  # two slots
        (_forecast({"city": "Pacifica"}), "Forecast for Pacifica on April 11th, 2023?", ("forecast",)),  # acts
    ],
)
def test_no_day_is_written_in_where_it_is_given_ambiguous_or_for_a_tool_that_acts(
    plan: Plan, question: str, fixed: tuple[str, ...]
) -> None:
    assert stated_day(plan, question, FORECAST, today=TODAY, fixed=frozenset(fixed)) is None


def _weather_days(*days: str) -> Plan:
    tools = [
        {"id": f"w{i}", "name": "weather", "arguments": {"lat": {"$ref": "g.lat"}, "start": d, "end": d}}
        for i, d in enumerate(days)
    ]
    return Plan.model_validate({"steps": [{"tools": tools}]})


def test_a_follow_up_naming_another_day_gets_it_in_place_of_the_day_copied_from_the_conversation() -> None:
    # Measured on the travel set (f1, 0.5B model): "Und am 19. Januar?" after the 18th was planned for the 18th.
    earlier = ["Wie wird das Wetter in Barcelona am 18. Januar 2026?"]
    redated = follow_up_day(_weather_days("2026-01-18"), "Und am 19. Januar?", earlier, today=date(2026, 1, 16))
    assert redated is not None
    assert redated["steps"][0]["tools"][0]["arguments"] == {
        "lat": {"$ref": "g.lat"},
        "start": "2026-01-19",
        "end": "2026-01-19",
    }


@pytest.mark.parametrize(
    ("days", "question", "earlier"),
    [
        (("2026-01-19",), "Und am 19. Januar?", ["Wetter am 18. Januar 2026?"]),  # the asked day is planned
        (("2026-01-18", "2026-01-20"), "Und am 19. Januar?", ["Wetter am 18. Januar 2026?"]),  # two days held
        (("2026-01-18",), "Und in Rom?", ["Wetter am 18. Januar 2026?"]),  # no day named: the referent's stays
        (("2026-01-18",), "Vom 19. bis 20. Januar?", ["Wetter am 18. Januar 2026?"]),  # two days named
        (("2026-01-17",), "Und am 19. Januar?", ["Wetter am 18. Januar 2026?"]),  # a day from nowhere: not ours
    ],
)
def test_no_day_is_replaced_where_the_follow_up_or_the_plan_leaves_it_open(
    days: tuple[str, ...], question: str, earlier: list[str]
) -> None:
    assert follow_up_day(_weather_days(*days), question, earlier, today=date(2026, 1, 16)) is None


def test_a_stray_call_given_a_day_for_its_place_is_left_out(gazetteer: Gazetteer) -> None:
    # Measured on the travel set (f1, 0.5B model): geocode("2026-01-19") beside geocode("Barcelona") and the weather.
    calls = [
        {"id": "g", "name": "geocode", "arguments": {"destination": "Barcelona"}},
        {"id": "d", "name": "geocode", "arguments": {"destination": "2026-01-19"}},
        {"id": "w", "name": "weather", "arguments": {"lat": {"$ref": "g.lat"}, "day": "2026-01-19"}},
    ]
    planned = Plan.model_validate({"steps": [{"tools": calls[:2]}, {"tools": calls[2:]}]})
    kept = without_stray_day_places(planned, SCHEMAS, gazetteer=gazetteer, today=TODAY)
    assert kept is not None and [c["id"] for step in kept["steps"] for c in step["tools"]] == ["g", "w"]
    # Its result taken by another call, or the only call: the planner hears it (or the person is asked).
    taken = Plan.model_validate({"steps": [{"tools": calls[1:2]}, {"tools": [{**calls[2], "arguments": {
        "lat": {"$ref": "d.lat"}}}]}]})  # fmt: skip
    assert without_stray_day_places(taken, SCHEMAS, gazetteer=gazetteer, today=TODAY) is None
    assert without_stray_day_places(plan("geocode", destination="morgen"), SCHEMAS, gazetteer=gazetteer,
                                    today=TODAY) is None  # fmt: skip
