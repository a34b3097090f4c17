"""Dates taken for values (issue 32: "the day after tomorrow" planned as geocode(destination="Tomorrow"))."""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest

from planwerk.core.date_values import DateValue, date_values, is_date_expression
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
        "2026-11-23",  # a date written as a date is a value
        "Wetter morgen in Rom",  # free text naming a place
        "$ref:g.lat",  # a reference
        "",
    ],
)
def test_places_written_dates_and_free_text_are_values(value: str, gazetteer: Gazetteer) -> None:
    assert date_values(plan("geocode", destination=value), SCHEMAS, gazetteer=gazetteer, today=TODAY) == []


def test_date_parameters_are_left_to_their_schema(gazetteer: Gazetteer) -> None:
    dated = plan("weather", day="tomorrow", start="tomorrow")
    assert date_values(dated, SCHEMAS, gazetteer=gazetteer, today=TODAY) == []


def test_a_date_expression_is_words_the_date_reader_reads() -> None:
    assert is_date_expression("day after tomorrow", TODAY)
    assert not is_date_expression("Barcelona", TODAY)
    assert not is_date_expression("tomorrow 2026", TODAY)  # digits: a value, whatever else it says
