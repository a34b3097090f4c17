"""Precise numbers in a plan's arguments must come from the question, the conversation, the context or results."""

from __future__ import annotations

import pytest

from planwerk.core.literals import (
    InventedNumber,
    decimals,
    invented_numbers,
    listed_values,
    one_call_per_value,
    unused_question_numbers,
)
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


@pytest.mark.parametrize(
    ("question", "arguments", "unused"),
    [
        # A function-calling benchmark's parallel entries (0.5B model): the first value only.
        ("What are the prime factors of the numbers 45, 100, and 150?", [{"number": 45}], ["100", "150"]),
        ("List cases filed in 2019, also those filed in 2018.", [{"year": 2019}], ["2018"]),
        # Percentages count as their fraction too; the values taken elsewhere are not asked about.
        ("Growth of 500 at 2% for 10 years, or at 1.5%?", [{"n": 500, "rate": 0.02, "years": 10}], ["1.5%"]),
        ("What are the prime factors of 45, 100 and 150?", [{"number": n} for n in (45, 100, 150)], []),
        # Numbers inside strings (a date) are taken; a plan that takes none of them is not asked about.
        ("Weather from 19 to 20 January 2026?", [{"start": "2026-01-19", "end": "2026-01-20"}], []),
        ("Send the 3 files from 2019 to me.", [{"folder": "inbox"}], []),
        ("What is 7 times 6?", [{"a": 7}], ["6"]),
        ("Add 7.", [{"a": 7}], []),
    ],
)
def test_numbers_of_the_question_no_call_takes_while_calls_take_others(
    question: str, arguments: list[dict[str, object]], unused: list[str]
) -> None:
    assert unused_question_numbers(_plan(*arguments), question) == unused


def _calls(data: object) -> list[tuple[str, dict[str, object]]]:
    plan = Plan.model_validate(data)
    return [(call.id, call.arguments) for _, call in plan.calls()]


def test_the_proposal_copies_the_call_whose_number_is_nearest_for_each_unused_one() -> None:
    question = "Estimate 500 elephants at 2% growth for 10 years, and at 1.5% and 2.5%."
    proposal = one_call_per_value(_plan({"n": 500, "rate": 0.02, "years": 10}), question)
    assert _calls(proposal) == [  # percentages scaled as the taken one was written
        ("c0", {"n": 500, "rate": 0.02, "years": 10}),
        ("c0_2", {"n": 500, "rate": 0.015, "years": 10}),
        ("c0_3", {"n": 500, "rate": 0.025, "years": 10}),
    ]
    assert _calls(one_call_per_value(_plan({"year": 2019}), "Cases of 2019, also of 2018.")) == [
        ("c0", {"year": 2019}),
        ("c0_2", {"year": 2018}),
    ]


def test_no_proposal_without_a_number_of_the_same_unit_or_for_calls_that_change_something() -> None:
    assert one_call_per_value(_plan({"amount": 2}), "Send 2 EUR for 3 books.") is None  # EUR is no plain number
    assert one_call_per_value(_plan({"number": 45}), "Factors of 45, 100 and 150?", fixed={"t"}) is None


@pytest.mark.parametrize(
    ("question", "completed"),
    [
        ("What are the prime factors of the numbers 45, 100, and 150?", [45, 100, 150]),
        ("Was sind die Primfaktoren von 45, 100 und 150?", [45, 100, 150]),
        ("Factors of 45; also of 100?", None),  # not one list: asked, not completed
        ("Factors of 45 for 3 people?", None),
    ],
)
def test_values_the_question_lists_are_completed_one_call_each(question: str, completed: list[int] | None) -> None:
    done = listed_values(_plan({"number": 45}), question)
    assert (done and [args["number"] for _, args in _calls(done)]) == completed
