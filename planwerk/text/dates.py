"""The one date and time reader of planwerk: absolute dates an answer or a source states, the dates a question
names (relative ones too, "morgen"), and clock times. Pure: no I/O (dateparser only parses).

Absolute dates are read in ISO (2026-12-01, also inside a datetime: 2026-11-27T00:00:00+09:00), German numeric
(1.12.2026) and written German and English forms ("1. Dezember 2026", "Friday, 27 November 2026", "December 1,
2026"); month names are data (:mod:`planwerk.text.words`). A clock time inside an ISO datetime is stated too:
"00:00" is grounded by 2026-11-27T00:00:00+09:00 (issue 30: the correct answer of a third-party time server was
rejected).

For questions, dateparser resolves relative dates. Two things it gets wrong, measured on the travel bench (r3,
"Mit welchem Wetter muss ich in Barcelona vom 10. bis 14. Juni 2026 rechnen?"): it reads a capitalised three-letter
word as a weekday ("Mit" is Mittwoch), and it misses a range's bare first day ("vom 10. bis 14. Juni 2026"). So a
one-word mention needs :data:`MIN_WORD_MENTION` letters, and a range's first day takes the month and year of its
last. A month without a day ("September 2026") is dropped: dateparser fills in today's day, a day nobody asked for.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterable
from dataclasses import dataclass
from datetime import date, datetime

from planwerk.text.words import words

_W = words()
MONTHS: dict[str, int] = _W.months
"""Month names and abbreviations (lower case) → month number."""
MONTH_WORDS: frozenset[str] = frozenset(MONTHS)
"""The month names and abbreviations (lower case)."""
_MONTH = "|".join(sorted((re.escape(m) for m in MONTHS), key=len, reverse=True))
_OPENERS = "|".join(re.escape(w) for w in _W.date_openers)
_ORDINAL = r"(?:st|nd|rd|th)?"
_YEAR = r"(?:,?\s*(?P<y>\d{4})(?!\d))?"
_DATE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"(?<!\d)(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})(?!\d)"), "ymd"),  # also "…-27T00:00"
    (re.compile(r"\b(?P<d>\d{1,2})\.\s?(?P<m>\d{1,2})\.\s?(?P<y>\d{4}|\d{2}(?!\d))"), "dmy"),
    (re.compile(r"\b(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{4})\b"), "slash"),
    # "am 1.12." without a year only after a word that opens a date: "17.2." alone is a decimal number.
    (re.compile(rf"(?i:\b(?:{_OPENERS})\s)(?P<d>\d{{1,2}})\.(?P<m>\d{{1,2}})\.(?!\d)"), "dm"),
    (re.compile(rf"\b(?P<d>\d{{1,2}})(?:\.|{_ORDINAL})\s*(?:of\s+)?(?P<mn>{_MONTH})\b\.?{_YEAR}", re.I), "d_month"),
    (re.compile(rf"\b(?P<mn>{_MONTH})\b\.?\s+(?P<d>\d{{1,2}}){_ORDINAL}\b{_YEAR}", re.I), "month_d"),
)
_MERIDIEM = r"(?:\s?(?P<meridiem>[AaPp]\.[Mm]\.|[Pp][Mm]|AM)(?!\w))?"
"""A 12-hour clock's marker after a time ("1:30 PM", "9:00 a.m."); a lowercase "am" is none: German writes "15:00
am Montag"."""
_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?!\d)" + _MERIDIEM)
"""A clock time: "13:05", "9:00", "1:30 PM"; in "01:15:58" or "T00:00:00" only the hours and minutes."""
CLOCK_TIME = re.compile(r"\b\d{1,2}:\d{2}\b" + _MERIDIEM)
"""A clock time as an answer writes it, with its 12-hour marker (its digits are no numbers to the number check)."""


@dataclass(frozen=True)
class DateClaim:
    """An absolute date a text states; ``year`` is ``None`` when it names none ("am 1. Dezember")."""

    text: str
    year: int | None
    month: int
    day: int
    start: int
    end: int
    alternatives: tuple[tuple[int, int], ...] = ()
    """Other (month, day) readings of an ambiguous form (1/12/2026 is 1 December or January 12)."""


SourceDate = tuple[int | None, int, int]
"""(year or None, month, day): a date a source names."""


def _valid(year: int | None, month: int, day: int) -> bool:
    try:
        date(year or 2000, month, day)
    except ValueError:
        return False
    return True


def find_date_claims(text: str) -> list[DateClaim]:
    """The absolute dates ``text`` names, in the order they appear."""
    claims: list[DateClaim] = []
    for pattern, form in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            start, end = (match.start("d") if form == "dm" else match.start()), match.end()
            if any(start < c.end and c.start < end for c in claims):
                continue
            groups = match.groupdict()
            year = int(groups["y"]) if groups.get("y") else None
            year = year + 2000 if year is not None and year < 100 else year
            alternatives: tuple[tuple[int, int], ...] = ()
            if form == "slash":
                month, day, alternatives = int(groups["b"]), int(groups["a"]), ((int(groups["a"]), int(groups["b"])),)
            elif groups.get("mn"):
                month, day = MONTHS[groups["mn"].lower()], int(groups["d"])
            else:
                month, day = int(groups["m"]), int(groups["d"])
            if _valid(year, month, day):
                claims.append(DateClaim(text[start:end].strip(), year, month, day, start, end, alternatives))
    return sorted(claims, key=lambda c: c.start)


def source_dates_in_text(text: str) -> list[SourceDate]:
    """Every absolute date a source text names, with or without a year."""
    return [(c.year, c.month, c.day) for c in find_date_claims(text)]


def date_grounded(claim: DateClaim, sources: Iterable[SourceDate]) -> bool:
    """Whether a source names the claimed date: same month and day, and the same year when both name one."""
    readings = ((claim.month, claim.day), *claim.alternatives)
    return any(
        (month, day) in readings and (claim.year is None or year is None or claim.year == year)
        for year, month, day in sources
    )


_UTC_OFFSET = re.compile(r"(T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?)[+\-]\d{2}:\d{2}")
"""The UTC offset of an ISO datetime ("+01:00"): no clock time."""


def _on_24_hours(hour: int, meridiem: str | None) -> int:
    """``hour`` on the 24-hour clock: a 12-hour marker moves 1–12 ("1:30 PM" is 13:30, "12:15 AM" 00:15)."""
    if meridiem is None or not 1 <= hour <= 12:
        return hour
    return hour % 12 + (12 if meridiem.replace(".", "").lower() == "pm" else 0)


def clock_times(text: str) -> set[tuple[int, int]]:
    """The (hour, minute) pairs of the clock times in ``text`` on the 24-hour clock (ISO datetimes included:
    "…T01:15:58-05:00" holds 01:15, not 05:00; "1:30 PM" is 13:30)."""
    found = set()
    for match in _CLOCK.finditer(_UTC_OFFSET.sub(r"\1", text)):
        hour, minute = _on_24_hours(int(match.group(1)), match.group("meridiem")), int(match.group(2))
        if hour < 24 and minute < 60:
            found.add((hour, minute))
    return found


def clock_grounded(claim: str, times: set[tuple[int, int]]) -> bool:
    """Whether the clock time ``claim`` ("3:58", "15:58", "3:58 PM") is one of ``times``: with a 12-hour marker as it
    says, without one read as 24-hour or 12-hour time."""
    match = _CLOCK.match(claim)
    if match is None:
        return False
    hour, minute = int(match.group(1)), int(match.group(2))
    if match.group("meridiem") is not None:
        return (_on_24_hours(hour, match.group("meridiem")), minute) in times
    return (hour, minute) in times or ((hour + 12) % 24, minute) in times


# ---------------------------------------------------------------------------------------- a question's dates

_NUMERIC_DATE = re.compile(r"\d{4}-\d{1,2}-\d{1,2}|\d{1,2}\.\d{1,2}\.(?:\d{2,4})?|\d{1,2}/\d{1,2}/\d{2,4}")
_WORD = re.compile(r"[^\W\d_]{3,}", re.UNICODE)
_DAY_NUMBER = re.compile(r"(?<!\d)\d{1,2}(?!\d)")
MIN_WORD_MENTION = 4
"""A mention that is a single word needs this many letters: "Mit", "Die", "Son", "Sun" are words, not weekdays."""
_RANGE_WORDS = "|".join(re.escape(w).replace(r"\ ", r"\s+") for w in sorted(_W.range_words, key=len, reverse=True))
# "vom 10. bis" / "10.–" / "from 3 to": a bare day number right before the mention it ends with.
_RANGE_START = re.compile(rf"\b(\d{{1,2}})\.?\s*(?:{_RANGE_WORDS}|-|–)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class DateMention:
    """A date expression of a question and the day it means."""

    text: str
    day: date


def find_dates(text: str, today: date, languages: tuple[str, ...] = ("de", "en")) -> list[DateMention]:
    """The dates a question names ("heute", "morgen", "am 1. Dezember 2026", "05.03.2027", "2026-12-01"),
    relative to ``today``; bare numbers ("12 + 30", "vom 10.") are not taken for dates."""
    import dateparser  # 0.15-0.2 s to import: only a question's dates pay for it
    from dateparser.search import search_dates

    settings = {
        "RELATIVE_BASE": datetime(today.year, today.month, today.day),
        "PREFER_DATES_FROM": "future",
        "DATE_ORDER": "DMY",
        "REQUIRE_PARTS": [],
    }
    found = search_dates(text, languages=list(languages), settings=settings)
    fillers = _W.date_fillers
    mentions: list[DateMention] = []
    for phrase, searched in found or []:
        # The phrase read again by itself: search_dates reads "the day after tomorrow" as tomorrow (dateparser
        # 1.2), its parser gets the day right.
        moment = dateparser.parse(phrase, languages=list(languages), settings=settings) or searched
        if not [w for w in _WORD.findall(phrase) if w.lower() not in fillers] and not _NUMERIC_DATE.search(phrase):
            continue
        tokens = phrase.strip(" ?!,;:").split()
        while tokens and tokens[0].lower() in fillers:
            tokens.pop(0)
        while tokens and tokens[-1].lower().strip(".") in fillers:
            tokens.pop()
        cleaned = " ".join(tokens).rstrip("?!,;:")
        if len(tokens) == 1 and not _NUMERIC_DATE.search(cleaned) and len(cleaned) < MIN_WORD_MENTION:
            continue
        if _names_no_day(cleaned, fillers):
            continue
        if any(t.lower().strip(".,") in MONTH_WORDS for t in tokens) and not _DAY_NUMBER.search(cleaned):
            continue  # a month without a day
        if any(m.text == cleaned for m in mentions):
            continue
        if (start := _range_start(text, cleaned, moment.date())) and not any(m.day == start.day for m in mentions):
            mentions.append(start)
        mentions.append(DateMention(cleaned, moment.date()))
    return mentions


def _names_no_day(mention: str, fillers: Collection[str]) -> bool:
    """Whether ``mention`` is a clock time with at most one short word ("12:00 Uhr", "at 9:30"): dateparser reads it
    as today, but it names no day (the answer check then took a time conversion's next day for a day not asked)."""
    if not CLOCK_TIME.search(mention) or _NUMERIC_DATE.search(mention):
        return False
    rest = [w for w in CLOCK_TIME.sub(" ", mention).split() if w.lower().strip(".,") not in fillers]
    return not rest or (len(rest) == 1 and len(rest[0]) < MIN_WORD_MENTION)


def _range_start(text: str, mention: str, end: date) -> DateMention | None:
    """The first day of a range written "vom 10. bis 14. Juni 2026" (the day in the month and year of ``end``), when
    ``mention`` ("14. Juni 2026") is the range's last day; else ``None``."""
    position = text.find(mention)
    found = _RANGE_START.search(text[:position]) if position > 0 else None
    if found is None:
        return None
    day = int(found[1])
    if not 1 <= day < end.day:
        return None  # not a day before the end in the same month ("vom 28. bis 3. März" is not read)
    return DateMention(re.match(r"\d{1,2}\.?", found[0])[0], end.replace(day=day))  # type: ignore[index]
