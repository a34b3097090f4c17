"""Which place each value belongs to: a value stated for a place must be one of that place's own results
(``misplaced``), and each place the question asks about gets one of its own (``unreported``). Pure: no I/O.

A call is about the places its arguments name; one call can be about two (a conversion between two places). Its
result then says which value is whose by its structure: an object that names one place owns the clock times in it
(:func:`place_times`). Measured on the domain answers set (0.5B, BENCHMARKS.md §12): a conversion returned place A
at 15:00 and place B at 21:00, and "the time in A is 21:00" was kept, every value grounded.

Measured on the travel bench: "Die Temperatur in Barcelona ist 10.5°C, während die Temperatur in Madrid ist
12.4°C." (12.4 °C was Barcelona's maximum, Madrid's forecast had failed), and "Compare the weather in Rome and
Barcelona" answered with one city's values for both, every number grounded.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planwerk.checks.domain import NO_DOMAIN
from planwerk.checks.sources import Sources, _walk
from planwerk.text.dates import CLOCK_TIME, clock_grounded, clock_times, find_date_claims
from planwerk.text.numbers import NumberClaim, SourceNumber, number_grounded
from planwerk.text.places import Gazetteer, PlaceClaim, find_places, fold, named_parts
from planwerk.text.words import words

_CLAUSE_END = re.compile(r"[.!?,;:](?=\s|$)|\n|\b(?:" + "|".join(map(re.escape, words().clause_ends)) + r")\b", re.I)
"""Where a clause ends: a value after it is no longer said of a place before it (a decimal comma is followed by a
digit, not a space; a date's dots end none: :func:`clause_ends`)."""

PlaceNumbers = Mapping[int, Sequence[SourceNumber]]
"""The numbers the successful calls about each city delivered, by city id."""

PlaceTimes = Mapping[int, set[tuple[int, int]]]
"""The clock times (hour, minute) of each city's own part of the successful calls' results, by city id."""


def _string_places(value: str, gazetteer: Gazetteer) -> dict[str, frozenset[int]]:
    """The places a short string names, by folded name (:func:`planwerk.text.places.named_parts`)."""
    return {fold(part.replace("_", " ")): ids for part, ids in named_parts(value, gazetteer)}


def _values(value: Any) -> Iterator[Any]:
    if isinstance(value, Mapping):
        value = list(value.values())
    if isinstance(value, list | tuple):
        for item in value:
            yield from _values(item)
    else:
        yield value


def _call_places(
    calls: Sequence[Mapping[str, Any]], gazetteer: Gazetteer
) -> tuple[list[set[int]], list[list[SourceNumber]]]:
    """The cities each call is about, and the numbers each delivered. A call is about the cities a short string
    argument names, and those of a call whose result a numeric argument with decimals is (a value passed on along a
    reference, such as coordinates)."""
    about: list[set[int]] = []
    for call in calls:
        cities: set[int] = set()
        for value in _values(call.get("args") or {}):
            if isinstance(value, str):
                cities = cities.union(*_string_places(value, gazetteer).values())
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
    return about, delivered


def place_results(
    calls: Sequence[Mapping[str, Any]], gazetteer: Gazetteer, *, uncounted: Collection[str] = ()
) -> dict[int, list[SourceNumber]]:
    """The numbers the successful calls about each city (:func:`_call_places`) delivered. Calls in ``uncounted``
    pass their cities on, their numbers do not count."""
    by_city: dict[int, list[SourceNumber]] = {}
    for call, cities, numbers in zip(calls, *_call_places(calls, gazetteer), strict=True):
        for city in cities if call.get("id") not in uncounted else ():
            by_city.setdefault(city, []).extend(numbers)
    return by_city


def failed_places(calls: Sequence[Mapping[str, Any]], gazetteer: Gazetteer) -> frozenset[int]:
    """The cities a call that did not succeed was about (:func:`_call_places`)."""
    about, _ = _call_places(calls, gazetteer)
    return frozenset().union(*(cities for call, cities in zip(calls, about, strict=True) if call.get("status") != "ok"))


def clause_ends(answer: str) -> list[int]:
    """Where the clauses of ``answer`` end (the offsets of their ending marks), but for the dots inside a date ("am
    20. Januar 2026 in B": one clause)."""
    dates = find_date_claims(answer)
    return [
        match.start()
        for match in _CLAUSE_END.finditer(answer)
        if not any(date.start <= match.start() < date.end - 1 for date in dates)
    ]


def _stated_for(
    start: int, places: Sequence[PlaceClaim], ends: Sequence[int], values: Sequence[NumberClaim]
) -> PlaceClaim | None:
    """The place a value at ``start`` is stated for: the one place its clause names before it, or the last of
    several when another value stands between that place and the one before ("in A 10.5 °C und in B 12.4 °C");
    ``None`` when the clause names none, or several with nothing between ("in A und B 10.5 °C und 12.4 °C")."""
    clause = max((end for end in ends if end < start), default=-1)
    before = [p for p in places if p.start > clause and p.end <= start]
    if not before:
        return None
    last = before[-1]
    others = [p.end for p in before if fold(p.text) != fold(last.text)]
    if others and not any(max(others) <= v.start and v.end <= last.start for v in values):
        return None
    return last


def misplaced(
    answer: str, numbers: Sequence[NumberClaim], places: Sequence[PlaceClaim], elsewhere: Sequence[SourceNumber],
    place_numbers: PlaceNumbers,
) -> Iterator[tuple[str, str]]:  # fmt: skip
    """(value, place) for each number with a unit stated for one place (:func:`_stated_for`) that the calls about
    that place did not deliver, the calls about another place did, and neither the question nor a chunk says
    (``elsewhere``). A value stated for no place, or for several at once, is not judged."""
    ends = clause_ends(answer)
    measured = [n for n in numbers if n.unit not in (None, "date")]
    for number in measured:
        place = _stated_for(number.start, places, ends, measured)
        if place is None or not (own := place.ids & place_numbers.keys()):
            continue
        mine = [n for city in own for n in place_numbers[city]]
        others = [n for city, found in place_numbers.items() if city not in place.ids for n in found]
        wrong = not number_grounded(number, mine) and not number_grounded(number, elsewhere)
        if wrong and number_grounded(number, others):
            yield number.text, place.text


def place_times(calls: Sequence[Mapping[str, Any]], gazetteer: Gazetteer) -> dict[int, set[tuple[int, int]]]:
    """The clock times each city's own part of the successful calls' results holds. An object whose string
    values name exactly one place owns the clock times in its strings and in what it nests (but for nested objects
    that name a place of their own); times outside such an object belong to no place."""
    owned: dict[int, set[tuple[int, int]]] = {}

    def walk(value: Any, owner: frozenset[int]) -> None:
        if isinstance(value, Mapping):
            named: dict[str, frozenset[int]] = {}
            for item in value.values():
                if isinstance(item, str):
                    named |= _string_places(item, gazetteer)
            if len(named) == 1:
                owner = next(iter(named.values()))
            for item in value.values():
                walk(item, owner)
        elif isinstance(value, list | tuple):
            for item in value:
                walk(item, owner)
        elif isinstance(value, str) and owner:
            for city in owner:
                owned.setdefault(city, set()).update(clock_times(value))

    for call in calls:
        if call.get("status") == "ok":
            walk(call.get("result"), frozenset())
    return owned


def misplaced_times(
    answer: str,
    places: Sequence[PlaceClaim],
    times: PlaceTimes,
    elsewhere: set[tuple[int, int]],
    *,
    ends_at: Sequence[int] | None = None,
) -> Iterator[tuple[str, str]]:
    """(clock time, place) for each clock time stated in a clause that names exactly one place, which that
    place's part of the results does not hold, another place's part does, and ``elsewhere`` (the question, the
    conversation) does not. A clause naming two places ("16:00 in A is 00:00 in B") is not judged. The clauses end
    at :func:`clause_ends`, or at ``ends_at``."""
    ends = [0, *(end + 1 for end in (clause_ends(answer) if ends_at is None else ends_at)), len(answer)]
    for match in CLOCK_TIME.finditer(answer):
        start = max(e for e in ends if e <= match.start())
        end = min(e for e in ends if e >= match.end())
        named = [p for p in places if p.start >= start and p.end <= end]
        if len({fold(p.text) for p in named}) != 1 or clock_grounded(match.group(), elsewhere):
            continue
        own = set().union(*(times.get(city, set()) for city in named[0].ids))
        others = set().union(*(found for city, found in times.items() if city not in named[0].ids))
        if not clock_grounded(match.group(), own) and clock_grounded(match.group(), others):
            yield match.group(), named[0].text


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


@dataclass(frozen=True)
class ContradictedTime:
    """A clock time the question gives for one place that a call's result holds as another place's time: the call
    took the places the wrong way round, so no answer from its result can be right."""

    call: str
    """The call's id."""
    tool: str
    time: str
    """The clock time as the question writes it."""
    place: str
    """The place the question gives it for, as the question writes it."""
    taken_for: str
    """The call's argument value that names the place the result gives it for."""
    taken_argument: str
    """The name of that argument."""
    place_argument: str
    """The name of the call's argument that names :attr:`place`; empty when none does."""


def contradicted_times(
    question: str, calls: Sequence[Mapping[str, Any]], gazetteer: Gazetteer
) -> list[ContradictedTime]:
    """The clock times of ``question`` that a successful call's result gives another place than the question does:
    the rule of :func:`misplaced_times` applied to the question against each call's own result, for a call one of
    whose string arguments names that other place. Measured on the domain answers set (0.5B, BENCHMARKS.md §12,
    session 15): a question giving a time for place B was converted from place A's time, and an answer restating
    that result passed with a delivered value."""
    places = find_places(question, gazetteer)
    # A question's premise is a clause of its own where a condition opens it without a comma ("… in A when it is
    # 12:00 in B?"); an answer's is not split so ("The time in A when it is 18:00 in B is 15:00" states 15:00 for A).
    openers = re.compile(r"\b(?:" + "|".join(map(re.escape, words().condition_openers)) + r")\b", re.I)
    ends = sorted({*clause_ends(question), *(match.start() - 1 for match in openers.finditer(question))})
    found = []
    for call in calls:
        if call.get("status") != "ok":
            continue
        times = place_times([call], gazetteer)
        named = {
            name: set().union(*_string_places(value, gazetteer).values())
            for name, value in (call.get("args") or {}).items()
            if isinstance(value, str)
        }
        for time, place in misplaced_times(question, places, times, set(), ends_at=ends):
            owners = {city for city, held in times.items() if clock_grounded(time, held)}
            asked = set().union(*(claim.ids for claim in places if fold(claim.text) == fold(place)))
            taken = next((name for name, cities in named.items() if cities & owners), None)
            if taken is None:
                continue  # no argument named the place the result gave the time: nothing the plan could swap
            given = next((name for name, cities in named.items() if cities & asked and name != taken), "")
            args = call.get("args") or {}
            found.append(
                ContradictedTime(
                    str(call.get("id")), str(call.get("tool")), time, place, str(args[taken]), taken, given
                )
            )
    return found


def swapped_places(plan: Mapping[str, Any], contradicted: Sequence[ContradictedTime]) -> dict[str, Any] | None:
    """``plan`` (stored plan data) with the two place arguments of each contradicted call swapped: the argument that
    took the question's time for the other place now names the question's place, and the other way round. ``None``
    when no contradicted call names the question's place in an argument of its own (nothing to swap)."""
    fixes = {found.call: found for found in contradicted if found.place_argument}
    if not fixes:
        return None
    swapped = copy.deepcopy(dict(plan))
    for step in swapped.get("steps") or []:
        for call in step.get("tools") or []:
            if (found := fixes.get(call.get("id"))) is not None:
                arguments = call.get("arguments") or {}
                taken, given = found.taken_argument, found.place_argument
                arguments[taken], arguments[given] = arguments.get(given), arguments.get(taken)
    return swapped
