"""Precise numbers in a plan's arguments must come from the question, the conversation, the context or results."""

from __future__ import annotations

import pytest

from planwerk.core.literals import InventedNumber, decimals, invented_numbers
from planwerk.core.plan import Plan


def _plan(*arguments: dict[str, object]) -> Plan:
    return Plan.model_validate(
        {"steps": [{"tools": [{"id": f"c{i}", "name": "t", "arguments": a} for i, a in enumerate(arguments)]}]}
    )


@pytest.mark.parametrize(("value", "places"), [(20.26, 2), (16, 0), (16.0, 0), (41.3825802, 7), (0.5, 1), (1e-7, 0)])
def test_decimals_as_written(value: float, places: int) -> None:
    assert decimals(value) == places


def test_the_demo_plans_invented_coordinates_are_found() -> None:
    # measured on the travel bench (k1): get_parks(lat=20.26, lon=16, radius_km=100), no source held 20.26
    plan = _plan({"lat": 20.26, "lon": 16, "radius_km": 100, "max_elements": 5})
    question = "Wo kann man das Razepato am besten beobachten?"
    assert invented_numbers(plan, [question]) == [InventedNumber("c0", "lat", 20.26)]


def test_numbers_a_source_holds_references_and_choices_pass() -> None:
    sources = ["Barcelona liegt bei 41.3825802, 2.177073.", "Was kostet es mit 7.25 % Steuer?"]
    plan = _plan(
        {"lat": 41.38, "lon": 2.177073},  # rounded from a source, or as written
        {"rate": 7.25, "radius_km": 2.5, "top_k": 10},  # from the question; a choice with one decimal
        {"lat": {"$ref": "geo.lat"}, "points": [{"$ref": "geo.lon"}], "flag": True},  # references, a bool
    )
    assert invented_numbers(plan, sources) == []
    nested = _plan({"points": [{"lat": 48.85, "lon": 2.35}]})
    assert [(n.argument, n.value) for n in invented_numbers(nested, sources)] == [
        ("points.0.lat", 48.85),
        ("points.0.lon", 2.35),
    ]
