"""Dates named in a question, resolved in code: small models copy today's date instead of converting
"am 1. Dezember 2026" or "morgen" (measured with the packaged 0.5B model), so the planner is told the ISO dates.
Pure: no I/O (dateparser only parses).

Two things dateparser gets wrong for questions, measured on the travel bench (r3, "Mit welchem Wetter muss ich in
Barcelona vom 10. bis 14. Juni 2026 rechnen?"): it reads a capitalised three-letter word as a weekday ("Mit" is
German "Mittwoch", so the planner was told "Mit" = 2026-01-21), and it does not see the bare first day of a range
("vom 10. bis 14. Juni 2026"). The planner then asked for 10 to 14 January. So a mention that is one short word
is dropped, and a range's first day takes the month and year of its last. A month without a day ("September
2026") is dropped too: dateparser fills in today's day of the month, a day nobody asked for.
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


_MONTHS = (
    "januar january jan februar february feb märz maerz march mar april apr mai may juni june jun juli july jul "
    "august aug september sep sept oktober october okt oct november nov dezember december dez dec"
)
MONTH_WORDS: frozenset[str] = frozenset(_MONTHS.split())
"""Month names, German and English, with their abbreviations (lower case)."""
_DAY_NUMBER = re.compile(r"(?<!\d)\d{1,2}(?!\d)")

MIN_WORD_MENTION = 4
"""A mention that is a single word needs this many letters: "Mit", "Die", "Son", "Sun" are words, not weekdays."""
# "vom 10. bis" / "10.–" / "from 3 to" / "between 3 and": a bare day number right before the mention it ends with.
_RANGE_START = re.compile(
    r"(?:\b(?:vom|von|from|between|zwischen)\s+)?\b(\d{1,2})\.?\s*(?:bis(?:\s+zum)?|-|–|to|and|und|until|till)\s*$",
    re.IGNORECASE,
)


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
        if len(tokens) == 1 and not _NUMERIC_DATE.search(cleaned) and len(cleaned) < MIN_WORD_MENTION:
            continue
        month_only = any(t.lower().strip(".,") in MONTH_WORDS for t in tokens) and not _DAY_NUMBER.search(cleaned)
        if month_only:
            continue
        if any(m.text == cleaned for m in mentions):
            continue
        if (start := _range_start(text, cleaned, moment.date())) and not any(m.day == start.day for m in mentions):
            mentions.append(start)
        mentions.append(DateMention(cleaned, moment.date()))
    return mentions


def _range_start(text: str, mention: str, end: date) -> DateMention | None:
    """The first day of a range written "vom 10. bis 14. Juni 2026" (the day in the month and year of ``end``), when
    ``mention`` ("14. Juni 2026") is the range's last day; else ``None``."""
    position = text.find(mention)
    found = _RANGE_START.search(text[:position]) if position > 0 else None
    if found is None or not found[1][0].isdigit():
        return None
    day = int(found[1])
    if not 1 <= day < end.day:
        return None  # not a day before the end in the same month ("vom 28. bis 3. März" is not read)
    written = re.search(r"\d{1,2}\.?", found[0])
    return DateMention(written[0] if written else str(day), end.replace(day=day))
