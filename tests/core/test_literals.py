"""Precise numbers in a plan's arguments must come from the question, the conversation, the context or results."""

from __future__ import annotations

import pytest

from planwerk.core.literals import (
    InventedNumber,
    decimals,
    invented_numbers,
    labelled_values,
    listed_values,
    named_numbers,
    named_values,
    one_call_per_value,
    percents_as_fractions,
    takes_percent_as_fraction,
    unlabelled_values,
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


@pytest.mark.parametrize(
    ("question", "argument", "numbers"),
    [
        ("How much would it cost to invest in 50 shares of Apple?", "shares", [50]),
        ("Buy shares: 50 of Apple", "shares", [50]),
        ("Payout with a dividend per share: 1.30", "dividend_per_share", [1.3]),
        ("Payout with a dividend per share 1.30", "shares", []),  # "share" here belongs to another name
        ("Kosten für 3 Jahre und 5 Jahre", "jahre", [3, 5]),
        ("each share returns $1.30 as dividend", "dividend", []),  # not next to the number
        ("invest 50, shares of Apple", "shares", []),  # a comma between: no longer the number's word
    ],
)
def test_numbers_the_question_writes_next_to_an_arguments_name(question: str, argument: str, numbers: list) -> None:
    assert named_numbers(question, argument) == numbers


def test_an_unstated_number_is_replaced_by_the_one_the_question_gives_that_argument_by_name() -> None:
    # A function-calling benchmark's parallel-multiple entry, 0.5B model: "shares 40" (an example's sample number).
    question = "How much would it cost me to invest in 50 shares of Apple? Also the payout at $1.30 per share."
    plan = _plan({"company": "Apple", "shares": 40}, {"shares": 50, "dividend_per_share": 1.3})
    assert [args for _, args in _calls(named_values(plan, question))] == [
        {"company": "Apple", "shares": 50},
        {"shares": 50, "dividend_per_share": 1.3},
    ]
    assert named_values(plan, question, fixed={"t"}) is None  # a tool that changes something: sent back instead
    assert named_values(_plan({"shares": 50}), question) is None  # stated: nothing to change
    two = "Cost of 50 shares of Apple and 20 shares of Tesla?"
    assert named_values(_plan({"shares": 40}), two) is None  # two numbers for shares: which one is not said


@pytest.mark.parametrize(
    ("description", "fraction"),
    [
        ("The expected annual return on investment as a decimal. E.g. 5% = 0.05", True),
        ("Rate, 12.5 % -> 0.125", True),
        ("Rate in percent, e.g. 5% = 5", False),
        ("The rate (5%).", False),
    ],
)
def test_a_description_shows_by_example_that_a_percentage_is_written_as_a_fraction(
    description: str, fraction: bool
) -> None:
    assert takes_percent_as_fraction(description) is fraction


def test_a_percentage_is_written_as_the_fraction_where_the_description_shows_it() -> None:
    # The same benchmark's parallel entry: "an annual return of 7%" planned as 7 for "as a decimal. E.g. 5% = 0.05".
    described = {"t": {"rate": "as a decimal. E.g. 5% = 0.05", "years": "Number of years."}}
    question = "The future value at an annual return of 7% over 5 years?"
    done = percents_as_fractions(_plan({"rate": 7, "years": 5}), question, described)
    assert [args for _, args in _calls(done)] == [{"rate": 0.07, "years": 5}]
    assert percents_as_fractions(_plan({"rate": 0.07, "years": 5}), question, described) is None
    assert percents_as_fractions(_plan({"rate": 7, "years": 5}), question, described, fixed={"t"}) is None
    assert percents_as_fractions(_plan({"rate": 7, "years": 5}), question, {"t": {"rate": "In percent."}}) is None


def test_a_text_value_that_repeats_its_arguments_name_from_the_question_is_written_without_it() -> None:
    # A function-calling benchmark's multiple entry (0.5B model): "building id B1004" for building_id.
    question = "What is the structural analysis of the building with building Id B1004 for the 2nd floor?"
    assert [args for _, args in _calls(unlabelled_values(_plan({"building_id": "building id B1004"}), question))] == [
        {"building_id": "B1004"}
    ]
    assert unlabelled_values(_plan({"building_id": "building id B1004"}), question, fixed={"t"}) is None
    assert unlabelled_values(_plan({"building_id": "B1004"}), question) is None  # nothing to change
    # Not written so in the question, or more than one word after the name: a value of its own ("city of London").
    assert unlabelled_values(_plan({"building_id": "building id B1004"}), "Analyze building B1004.") is None
    assert unlabelled_values(_plan({"city": "city of London"}), "The weather in the city of London.") is None


def test_a_retrieved_chunks_label_given_as_a_value_is_found() -> None:
    # The travel set (k3, 0.5B model): geocode("Razepato.txt#0") for a question the context answers.
    plan = _plan({"destination": "Razepato.txt#0"}, {"destination": " razepato.TXT "}, {"destination": "Razepato"})
    labels = {"Razepato.txt#0", "Razepato.txt"}
    assert labelled_values(plan, labels) == [
        ("c0", "destination", "Razepato.txt#0"),
        ("c1", "destination", " razepato.TXT "),
    ]
    assert labelled_values(plan, set()) == []
