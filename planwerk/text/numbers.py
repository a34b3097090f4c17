"""Numbers with their units, as an answer states them and as sources hold them. Pure: no I/O.

A stated number is grounded by a source number when rounding *or* truncating the source value to the stated
decimals gives the stated value (17.2 grounds "17 °C", 41.3825802 grounds "41.38"), after converting within one
quantity (0.5 km grounds "500 m"); units must be of one quantity when both are known. A source value's unit comes
from its text or its JSON key (generic suffixes: ``_c`` °C, ``_mm`` mm, ``lat`` °; a profile adds parts such as
``temp`` through :attr:`planwerk.checks.domain.Domain.field_units`); the parts of a date ground bare numbers only.
Unit spellings in words are per-language data (:mod:`planwerk.text.words`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from planwerk.text.dates import CLOCK_TIME, find_date_claims
from planwerk.text.words import words

_QUANTITIES: dict[str, tuple[tuple[str, ...], float, tuple[str, ...]]] = {
    # unit: (quantities, factor to the quantity's base unit, symbols)
    "°C": (("temperature",), 1.0, ("°C", "° C", "℃")),
    "°F": (("temperature",), 1.0, ("°F", "° F", "℉")),
    "°": (("temperature", "angle"), 1.0, ("°",)),
    "km/h": (("speed",), 1.0, ("km/h", "kmh", "km/std")),
    "m/s": (("speed",), 3.6, ("m/s",)),
    "mph": (("speed",), 1.609344, ("mph",)),
    "km²": (("area",), 1e6, ("km²", "km2")),
    "m²": (("area",), 1.0, ("m²",)),
    "km": (("length",), 1000.0, ("km",)),
    "m": (("length",), 1.0, ("m",)),
    "cm": (("length",), 0.01, ("cm",)),
    "mm": (("length",), 0.001, ("mm",)),
    "kg": (("mass",), 1000.0, ("kg",)),
    "g": (("mass",), 1.0, ("g",)),
    "%": (("percent",), 1.0, ("%",)),
    "h": (("time",), 60.0, ("h",)),
    "min": (("time",), 1.0, ("min",)),
    "d": (("days",), 1.0, ()),
    "€": (("euro",), 1.0, ("€", "EUR")),
    "$": (("dollar",), 1.0, ("$", "USD")),
    "date": (("date",), 1.0, ()),  # a number inside a date grounds a bare number ("2026"), never "22 °C"
}
UNITS: frozenset[str] = frozenset(_QUANTITIES)
"""The canonical units numbers are read with."""
CODE = "code"
"""The "unit" of a result field that holds a code or an identifier (``weather_code``, ``station_id``): it measures
nothing, so it grounds no number stated with a unit (measured: "95 °C" passed on a thunderstorm's WMO code 95)."""


def _spelling(text: str, flags: int) -> tuple[re.Pattern[str], int]:
    end = r"(?!\w)" if text[-1].isalnum() else ""
    return re.compile(re.escape(text).replace(r"\ ", r"\s") + end, flags), len(text)


_UNIT_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (pattern, unit)
    for (pattern, _), unit in sorted(
        [(_spelling(s, 0), u) for u, (_, _, symbols) in _QUANTITIES.items() for s in symbols]
        + [(_spelling(s, re.I), u) for u, spellings in words().units.items() for s in spellings],
        key=lambda item: -item[0][1],  # longer spellings first: "km/h" before "km", "Meter" before "m"
    )
)


@dataclass(frozen=True)
class NumberClaim:
    """A number a text states."""

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
    """A number a source holds, with its unit when known."""

    value: float
    unit: str | None = None


_NUMBER = re.compile(r"(?<![\w#/\\])\d+(?:[.,'\u202f\u00a0]\d+)*")
_LIST_ENUMERATOR = re.compile(r"(?m)^\s*\d{1,2}[.)]\s")
_SOURCE_REF = re.compile(r"[\w-]+\.(?:txt|md|pdf|html?|json)(?:#\d+)?", re.I)
_RANGE_GAP = re.compile(r"\s*(?:-|–|—|" + "|".join(re.escape(w) for w in words().number_range_words) + r")\s*", re.I)


def _readings(token: str) -> tuple[tuple[float, int], ...]:
    """Every plausible value of a number token: decimal comma or point, with or without thousands separators."""
    plain = re.sub(r"['\u202f\u00a0]", "", token)
    separators = re.findall(r"[.,]", plain)
    if not separators:
        return ((float(plain), 0),)
    readings: list[tuple[float, int]] = []
    groups = re.split(r"[.,]", plain)
    if all(len(g) == 3 for g in groups[1:]) and len(groups[0]) <= 3:  # thousands: "1.000", "12,500,000"
        readings.append((float("".join(groups)), 0))
    if len(separators) == 1:
        readings.append((float(plain.replace(",", ".")), len(groups[1])))
    elif len(set(separators)) == 2:  # "1.234,5" or "1,234.5"
        last = max(plain.rfind("."), plain.rfind(","))
        readings.append((float(re.sub(r"[.,]", "", plain[:last]) + "." + plain[last + 1 :]), len(plain) - last - 1))
    return tuple(dict.fromkeys(readings))


def _unit_at(text: str, position: int) -> tuple[str | None, int]:
    """The unit right after a number (one space allowed before it) and where it ends."""
    start = position + (1 if text[position : position + 1] in (" ", "\u00a0", "\u202f") else 0)
    for pattern, unit in _UNIT_PATTERNS:
        if found := pattern.match(text, start):
            return unit, found.end()
    return None, position


def _blank(text: str, spans: Iterable[tuple[int, int]]) -> str:
    chars = list(text)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def find_numbers(text: str, *, skip: Iterable[tuple[int, int]] = ()) -> list[NumberClaim]:
    """The numbers ``text`` states with their units; ``skip`` spans (dates) are left out, as are source
    references ("Razepato.txt#3"), clock times, list enumerators and digits inside words ("H2O", "get_2")."""
    hidden = [
        *skip,
        *((m.start(), m.end()) for p in (_SOURCE_REF, CLOCK_TIME, _LIST_ENUMERATOR) for m in p.finditer(text)),
    ]
    visible = _blank(text, hidden)
    claims: list[NumberClaim] = []
    for match in _NUMBER.finditer(visible):
        token = match.group().rstrip(".,")
        end = match.start() + len(token)
        unit, unit_end = _unit_at(visible, end)
        if unit is None and end < len(visible) and (visible[end].isalpha() or visible[end] == "_"):
            continue  # part of a word or an identifier ("3D")
        stop = unit_end if unit else end
        claims.append(NumberClaim(text[match.start() : stop].strip(), _readings(token), unit, match.start(), stop))
    for index in range(len(claims) - 1):  # "10-15 °C": the first number of a range takes the second's unit
        first, second = claims[index], claims[index + 1]
        if first.unit is None and second.unit and _RANGE_GAP.fullmatch(visible[first.end : second.start]):
            claims[index] = NumberClaim(first.text, first.readings, second.unit, first.start, first.end)
    return claims


def source_numbers_in_text(text: str) -> list[SourceNumber]:
    """Every number a source text holds, references included; the parts of a date have the unit ``date``, so
    "22.11.2026" grounds "2026" but not "22 °C"."""
    dates = [(c.start, c.end) for c in find_date_claims(text)]
    numbers = []
    for match in _NUMBER.finditer(text):
        token = match.group().rstrip(".,")
        unit = _unit_at(text, match.start() + len(token))[0]
        if any(start <= match.start() < end for start, end in dates):
            unit = "date"
        numbers.extend(SourceNumber(value, unit) for value, _ in _readings(token))
    return numbers


_KEY_SUFFIXES = (
    (("_f", "fahrenheit"), "°F"),
    (("_c", "celsius"), "°C"),
    (("_kmh", "_km_h"), "km/h"),
    (("_mm",), "mm"),
    (("_km", "distance"), "km"),
    (("_min", "minutes"), "min"),
    (("_h", "hours"), "h"),
    (("_pct", "_percent", "percent"), "%"),
    (("_days",), "d"),
)


def unit_of_key(key: str, field_units: Mapping[str, str] = {}) -> str | None:
    """The unit a result field's name implies: ``lat``/``lon`` °, a code or an identifier :data:`CODE`, a generic
    unit suffix (``wind_max_kmh`` km/h), else a part the profile names (``field_units``: ``temp`` °C), or None."""
    k = key.lower()
    if k in ("lat", "lon", "lng", "latitude", "longitude"):
        return "°"
    if k.endswith(("code", "_id")) or k == "id":
        return CODE
    for ends, unit in _KEY_SUFFIXES:
        if k.endswith(ends) or any(len(e) > 4 and e in k for e in ends):
            return unit
    return next((unit for part, unit in field_units.items() if part in k), None)


def _convert(value: float, source: str | None, target: str | None) -> float | None:
    """``value`` in ``source`` units, expressed in ``target`` units; None when they measure different things."""
    if source is None or target is None or source == target:
        return value
    (a, scale_a, _), (b, scale_b, _) = _QUANTITIES[source], _QUANTITIES[target]
    if not set(a) & set(b):
        return None
    if (source, target) == ("°F", "°C"):
        return (value - 32) * 5 / 9
    if (source, target) == ("°C", "°F"):
        return value * 9 / 5 + 32
    return value if "°" in (source, target) or "temperature" in a else value * scale_a / scale_b


def _matches(stated: float, decimals: int, value: float) -> bool:
    """Whether rounding or truncating ``value`` to ``decimals`` gives ``stated`` (signs are not compared: "-3"
    and "3 Grad unter null" both happen, and a range "10-15" is no negative number)."""
    stated, value, factor = abs(stated), abs(value), 10.0**decimals
    tolerance = 1e-9 * max(1.0, stated)
    rounded, truncated = math.floor(value * factor + 0.5) / factor, math.floor(value * factor + 1e-9) / factor
    return abs(rounded - stated) <= tolerance or abs(truncated - stated) <= tolerance


def number_grounded(claim: NumberClaim, sources: Iterable[SourceNumber]) -> bool:
    """Whether any source number grounds ``claim`` (unit-aware rounding, see the module docstring)."""
    for source in sources:
        if source.unit == CODE:
            if claim.unit is None and any(_matches(s, d, source.value) for s, d in claim.readings):
                return True
            continue
        value = _convert(source.value, source.unit, claim.unit)
        if value is not None and any(_matches(stated, decimals, value) for stated, decimals in claim.readings):
            return True
    return False


def states_value(text: str, value: float, *, dates: bool = True) -> bool:
    """Whether ``text`` states ``value``: to at least two decimals when the value has them, or within 0.5 %
    (stricter than grounding: "3" does not state 3.333)."""
    skip = [(c.start, c.end) for c in find_date_claims(text)] if dates else []
    fraction = repr(float(value)).split(".")[1].rstrip("0") if "e" not in repr(float(value)) else ""
    for claim in find_numbers(text, skip=skip):
        for stated, decimals in claim.readings:
            close = abs(abs(stated) - abs(value)) <= 0.005 * abs(value)
            if _matches(stated, decimals, value) and (decimals >= min(2, len(fraction)) or close):
                return True
    return False


def format_value(value: Any) -> str:
    """A result value for people: whole numbers without ".0", others with up to 10 significant digits."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return str(value)
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e15:
        return str(int(value))
    return format(value, ".10g") if isinstance(value, float) else str(value)
