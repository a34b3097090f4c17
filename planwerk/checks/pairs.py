"""Which place each value belongs to: a value stated for a place must be one of that place's own results
(``misplaced``), and each place the question asks about gets one of its own (``unreported``). Pure: no I/O.

Measured on the travel bench: "Die Temperatur in Barcelona ist 10.5°C, während die Temperatur in Madrid ist
12.4°C." (12.4 °C was Barcelona's maximum, Madrid's forecast had failed), and "Compare the weather in Rome and
Barcelona" answered with one city's values for both, every number grounded.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

from planwerk.checks.domain import NO_DOMAIN
from planwerk.checks.sources import Sources, _walk
from planwerk.text.numbers import NumberClaim, SourceNumber, number_grounded
from planwerk.text.places import (
    MAX_PLACE_ARGUMENT_WORDS,
    PLACE_PART_SEPARATORS,
    Gazetteer,
    PlaceClaim,
    find_places,
    fold,
)
from planwerk.text.words import words

_CLAUSE_END = re.compile(r"[.!?,;:](?=\s|$)|\n|\b(?:" + "|".join(map(re.escape, words().clause_ends)) + r")\b", re.I)
"""Where a clause ends: a value after it is no longer said of a place before it (a decimal comma is followed by a
digit, not a space)."""

PlaceNumbers = Mapping[int, Sequence[SourceNumber]]
"""The numbers the successful calls about each city delivered, by city id."""


def _values(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, list | tuple):
        for item in value:
            yield from _values(item)
    else:
        yield value


def place_results(
    calls: Sequence[Mapping[str, Any]], gazetteer: Gazetteer, *, uncounted: Collection[str] = ()
) -> dict[int, list[SourceNumber]]:
    """The numbers the successful calls about each city delivered. A call is about a city when a short string
    argument names it, or when a numeric argument with decimals is a value a call about it returned (coordinates
    passed on: a weather call after a geocode). Calls in ``uncounted`` pass their cities on, their numbers do not
    count."""
    about: list[set[int]] = []
    for call in calls:
        cities: set[int] = set()
        for value in _values(call.get("args") or {}):
            if isinstance(value, str) and len(value.split()) <= MAX_PLACE_ARGUMENT_WORDS:
                for part in re.split(PLACE_PART_SEPARATORS, value.replace("_", " ")):
                    cities |= gazetteer.lookup(part.split()) if part.split() else frozenset()
        about.append(cities)
    delivered = []
    for call in calls:
        found = Sources()
        if call.get("status") == "ok":
            _walk(call.get("result"), None, found, NO_DOMAIN)
        delivered.append(found.numbers)
    for _ in calls:  # pass cities on along references until nothing changes
        changed = False
        for index, call in enumerate(calls):
            passed = {v for v in _values(call.get("args") or {}) if isinstance(v, float) and not v.is_integer()}
            for other, cities in enumerate(about):
                if other != index and cities - about[index] and any(n.value in passed for n in delivered[other]):
                    about[index] |= cities
                    changed = True
        if not changed:
            break
    by_city: dict[int, list[SourceNumber]] = {}
    for call, cities, numbers in zip(calls, about, delivered, strict=True):
        for city in cities if call.get("id") not in uncounted else ():
            by_city.setdefault(city, []).extend(numbers)
    return by_city


def misplaced(
    answer: str, numbers: Sequence[NumberClaim], places: Sequence[PlaceClaim], elsewhere: Sequence[SourceNumber],
    place_numbers: PlaceNumbers,
) -> Iterator[tuple[str, str]]:  # fmt: skip
    """(value, place) for each number with a unit stated after exactly one place in its clause that the calls about
    that place did not deliver, the calls about another place did, and neither the question nor a chunk says
    (``elsewhere``). A value with no place or several before it in its clause is not judged."""
    for number in numbers:
        if number.unit in (None, "date"):
            continue
        before = [p for p in places if p.end <= number.start and not _CLAUSE_END.search(answer[p.end : number.start])]
        if len({fold(p.text) for p in before}) != 1 or not (own := before[-1].ids & place_numbers.keys()):
            continue
        mine = [n for city in own for n in place_numbers[city]]
        others = [n for city, found in place_numbers.items() if city not in before[-1].ids for n in found]
        wrong = not number_grounded(number, mine) and not number_grounded(number, elsewhere)
        if wrong and number_grounded(number, others):
            yield number.text, before[-1].text


def unreported(
    numbers: Sequence[NumberClaim], question: str, gazetteer: Gazetteer, place_reports: PlaceNumbers
) -> Iterator[str]:
    """Each place of two or more the question names whose reported calls delivered measured values (a unit, not an
    angle), for which the answer states none of its own (values another place shares count for neither)."""
    measured = {city: [n for n in found if n.unit not in (None, "°")] for city, found in place_reports.items()}
    reported = {fold(p.text): p for p in find_places(question, gazetteer) if any(measured.get(c) for c in p.ids)}
    if len(reported) < 2:
        return
    for place in reported.values():
        shared = {round(n.value, 6) for city, found in measured.items() if city not in place.ids for n in found}
        own = [n for city in place.ids for n in measured.get(city, ()) if round(n.value, 6) not in shared]
        if own and not any(number_grounded(number, own) for number in numbers):
            yield place.text
