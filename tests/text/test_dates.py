"""Dates named in a question are resolved in code and shown to the planner as ISO dates."""

from __future__ import annotations

from datetime import date

import pytest

from planwerk.prompts.render import render_dates
from planwerk.text.dates import clock_grounded, clock_times, find_dates

TODAY = date(2026, 11, 22)  # a Sunday


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Wie wird das Wetter in Barcelona am 1. Dezember 2026?", [("1. Dezember 2026", "2026-12-01")]),
        ("Wie ist heute das Wetter in Barcelona?", [("heute", "2026-11-22")]),
        ("Wie wird das Wetter morgen in Rom?", [("morgen", "2026-11-23")]),
        ("Wetter übermorgen in Palma", [("übermorgen", "2026-11-24")]),
        # dateparser's search_dates alone read it as tomorrow
        ("The forecast for the day after tomorrow?", [("day after tomorrow", "2026-11-24")]),
        ("Wie wird das Wetter in Madrid am 05.03.2027?", [("05.03.2027", "2027-03-05")]),
        ("Wetter am Samstag in Rom", [("Samstag", "2026-11-28")]),
        (
            "What is the weather in Tarragona from 2026-12-01 to 2026-12-03?",
            [("2026-12-01", "2026-12-01"), ("2026-12-03", "2026-12-03")],
        ),
        ("Was ist (12 + 30) * 3?", []),
        # r3 of the travel bench: "Mit" was read as Mittwoch, and the range's first day was not seen
        (
            "Mit welchem Wetter muss ich in Barcelona vom 10. bis 14. Juni 2026 rechnen?",
            [("10.", "2026-06-10"), ("14. Juni 2026", "2026-06-14")],
        ),
        ("Running in Porto between 3 and 5 May 2027?", [("3", "2027-05-03"), ("5 May 2027", "2027-05-05")]),
        ("Die Sonne in Rom, wie ist sie?", []),
        ("Wetter im Dezember 2026 in Rom", []),  # a month is no day (dateparser would add today's, the 22nd)
        ("Wetter vom 28. bis 3. Dezember 2026", [("3. Dezember 2026", "2026-12-03")]),  # no start after the end
        ("Wo kann man das Razepato am besten beobachten?", []),
        # a clock time names no day (dateparser reads "12:00 Uhr" as today): the domain answers set's time4
        ("Es ist 12:00 Uhr in Tokio. Wie spät ist es dann in Berlin?", []),
        ("Wie wird das Wetter morgen um 12:00 Uhr?", [("morgen um 12:00 Uhr", "2026-11-23")]),
    ],
)
def test_find_dates(question: str, expected: list[tuple[str, str]]) -> None:
    assert [(m.text, m.day.isoformat()) for m in find_dates(question, TODAY)] == expected


def test_prompt_names_the_question_dates_instead_of_today() -> None:
    # With today's date beside an absolute date, the packaged 0.5B model wrote today's date (measured).
    assert render_dates("Wetter in Barcelona am 1. Dezember 2026?", TODAY) == (
        "Daten in der Frage: „1. Dezember 2026“ = 2026-12-01."
    )
    assert render_dates("Wie wird das Wetter in Barcelona?", TODAY) == "Heute ist Sonntag, 2026-11-22."


def test_a_twelve_hour_marker_says_which_half_of_the_day() -> None:
    # Measured on the held-out places set (0.5B model): "Berlin is 1:30 PM …" was kept against a result of 01:30.
    night = {(1, 30)}
    assert not clock_grounded("1:30 PM", night) and not clock_grounded("1:30 p.m.", night)
    assert clock_grounded("1:30 AM", night) and clock_grounded("1:30", night) and clock_grounded("01:30", night)
    assert clock_grounded("12:15 AM", {(0, 15)}) and clock_grounded("12:15 PM", {(12, 15)})
    # A German "am" after a time is a preposition, not a marker.
    assert clock_times("Um 3:00 am Montag, 9:00 p.m. und 1:30 PM") == {(3, 0), (21, 0), (13, 30)}
