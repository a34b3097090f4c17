"""Dates named in a question, resolved in code: small models copy today's date instead of converting
"am 1. Dezember 2026" or "morgen" (measured with the packaged 0.5B model), so the planner is told the ISO dates.
Pure: no I/O (dateparser only parses).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime

_NUMERIC_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}\.\d{1,2}\.(?:\d{2,4})?|\d{1,2}/\d{1,2}/\d{2,4}")
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
# Words dateparser accepts around a date that do not name one by themselves.
_FILLER = {
    "am",
    "an",
    "in",
    "im",
    "vom",
    "von",
    "bis",
    "ab",
    "den",
    "der",
    "dem",
    "on",
    "the",
    "from",
    "to",
    "at",
    "und",
    "and",
    "for",
    "für",
}


@dataclass(frozen=True)
class DateMention:
    """A date expression of the question and the day it means."""

    text: str
    day: date


def find_dates(text: str, today: date, languages: tuple[str, ...] = ("de", "en")) -> list[DateMention]:
    """The dates a question names ("heute", "morgen", "am 1. Dezember 2026", "05.03.2027", "2026-12-01"),
    relative to ``today``; bare numbers ("12 + 30", "vom 10.") are not taken for dates."""
    from dateparser.search import search_dates

    found = search_dates(
        text,
        languages=list(languages),
        settings={
            "RELATIVE_BASE": datetime(today.year, today.month, today.day),
            "PREFER_DATES_FROM": "future",
            "DATE_ORDER": "DMY",
            "REQUIRE_PARTS": [],
        },
    )
    mentions: list[DateMention] = []
    for phrase, moment in found or []:
        words = [w for w in _WORD.findall(phrase) if w.lower() not in _FILLER]
        if not words and not _NUMERIC_DATE.search(phrase):
            continue
        tokens = phrase.strip(" ?!,;:").split()
        while tokens and tokens[0].lower() in _FILLER:
            tokens.pop(0)
        while tokens and tokens[-1].lower().strip(".") in _FILLER:
            tokens.pop()
        cleaned = " ".join(tokens).rstrip("?!,;:")
        if not any(m.text == cleaned for m in mentions):
            mentions.append(DateMention(cleaned, moment.date()))
    return mentions
