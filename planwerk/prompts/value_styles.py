"""How values are written in each language: decimal separator, month and weekday names, date formats (data).

Used wherever a result's value is written for a person: an answer by reference (:mod:`planwerk.prompts.answer_refs`)
and the deterministic answer (:mod:`planwerk.prompts.fallback`).
"""

from __future__ import annotations

from collections.abc import Mapping

from planwerk.core.answers.render import ValueStyle
from planwerk.core.language import Language

GERMAN_STYLE = ValueStyle(
    decimal_separator=",",
    months=(
        "Januar",
        "Februar",
        "März",
        "April",
        "Mai",
        "Juni",
        "Juli",
        "August",
        "September",
        "Oktober",
        "November",
        "Dezember",
    ),
    weekdays=("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag"),
    date_format="{day}. {month} {year}",
    weekday_format="{weekday}, {date}",
    datetime_format="{date}, {time} Uhr",
    yes="ja",
    no="nein",
    clipped="[… {chars} weitere Zeichen]",
)

ENGLISH_STYLE = ValueStyle(
    decimal_separator=".",
    months=(
        "January",
        "February",
        "March",
        "April",
        "May",
        "June",
        "July",
        "August",
        "September",
        "October",
        "November",
        "December",
    ),
    weekdays=("Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"),
    date_format="{day} {month} {year}",
    weekday_format="{weekday}, {date}",
    datetime_format="{date}, {time}",
    yes="yes",
    no="no",
    clipped="[… {chars} more characters]",
)

VALUE_STYLES: Mapping[Language, ValueStyle] = {"de": GERMAN_STYLE, "en": ENGLISH_STYLE}


def value_style(language: Language) -> ValueStyle:
    """The style of ``language`` (German for a language without its own)."""
    return VALUE_STYLES.get(language, GERMAN_STYLE)
