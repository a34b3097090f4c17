"""A clock time the question gives for one place, held by a call's result as another place's time
(:func:`planwerk.checks.pairs.contradicted_times`; mcp-server-time's result shape)."""

from __future__ import annotations

from typing import Any

import pytest

from planwerk.checks.pairs import ContradictedTime, contradicted_times
from planwerk.text.gazetteer import default_gazetteer


def conversion(source: str, target: str, given: str, computed: str) -> dict[str, Any]:
    return {
        "id": "conv",
        "tool": "convert_time",
        "status": "ok",
        "args": {"source_timezone": source, "time": given, "target_timezone": target},
        "result": {
            "source": {"timezone": source, "datetime": f"2026-12-07T{given}:00-05:00", "is_dst": False},
            "target": {"timezone": target, "datetime": f"2026-12-07T{computed}:00+01:00", "is_dst": False},
            "time_difference": "+6.0h",
        },
    }


NEW_YORK_FIRST = conversion("America/New_York", "Europe/Berlin", "15:00", "21:00")


@pytest.mark.parametrize(
    "question",
    [
        "Wie spät ist es in New York, wenn es in Berlin 15:00 Uhr ist?",
        "When it is 15:00 in Berlin, what time is it in New York?",
        "Es ist 15:00 Uhr in Berlin. Wie spät ist es dann in New York?",
        "What time is it in New York when it is 15:00 in Berlin?",  # a condition opens the premise, without a comma
    ],
)
def test_a_time_the_question_gives_for_one_place_and_the_result_for_the_other(question: str) -> None:
    found = contradicted_times(question, [NEW_YORK_FIRST], default_gazetteer())
    expected = ContradictedTime(
        "conv", "convert_time", "15:00", "Berlin", "America/New_York", "source_timezone", "target_timezone"
    )
    assert found == [expected]


@pytest.mark.parametrize(
    "question",
    [
        "Wie spät ist es in Berlin, wenn es in New York 15:00 Uhr ist?",
        "What time is it in Berlin when it is 15:00 in New York?",
        "Convert 15:00 Berlin time to New York.",  # one clause names both places: not judged
    ],
)
def test_a_time_the_result_gives_the_place_the_question_does_or_an_unclear_pairing(question: str) -> None:
    assert contradicted_times(question, [NEW_YORK_FIRST], default_gazetteer()) == []


def test_a_failed_call_contradicts_nothing() -> None:
    failed = NEW_YORK_FIRST | {"status": "error"}
    question = "Wie spät ist es in New York, wenn es in Berlin 15:00 Uhr ist?"
    assert contradicted_times(question, [failed], default_gazetteer()) == []


def test_a_time_zone_owns_the_times_of_every_city_in_it() -> None:
    # Mumbai's time is Asia/Kolkata's part of the result: the conversion ran the right way round.
    kolkata = conversion("Asia/Kolkata", "Europe/Berlin", "06:00", "01:30")
    question = "If it is 06:00 in Mumbai, what time is it in Berlin?"
    assert contradicted_times(question, [kolkata], default_gazetteer()) == []
    wrong = conversion("Europe/Berlin", "Asia/Kolkata", "06:00", "10:30")
    assert [found.taken_for for found in contradicted_times(question, [wrong], default_gazetteer())] == [
        "Europe/Berlin"
    ]
