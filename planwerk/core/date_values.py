"""Dates taken for values: a plan's literal argument that is nothing but a date expression ("Tomorrow",
"übermorgen", "next Friday") given to a parameter that takes no date. Pure: no I/O (the date reader only parses).

Measured with the packaged 0.5B model (issue 32): a question about "the day after tomorrow" that named no place was
planned with the date word as a place argument: a word of the question taken for the value nobody gave. The place
check did not see it (no gazetteer knows such a place), so the call ran. A date is never the value of a
parameter that takes none, whatever the tool: planned dates are written as dates (the plan rules say
YYYY-MM-DD), so such an argument is rejected before anything runs.

What a date expression is decides the one date reader (:func:`planwerk.text.dates.find_dates`), with its
per-language data; a value a gazetteer knows as a place is a place ("Essen", "Nice"). A parameter takes a date
when its schema says so (``format`` date or date-time, or a ``pattern``: the schema's validation judges those).
A parameter **takes places** when its own description or examples name a place the gazetteer knows (a description
that gives a city as its example): then the date stood where a place belongs, and a question that names no place
is asked back (``planwerk.graph.nodes.check``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

from planwerk.core.plan import Plan
from planwerk.core.refs import ref_text
from planwerk.core.scheduling import call_dependencies, without_calls
from planwerk.core.scope import argument_places, takes_places
from planwerk.text.dates import find_dates
from planwerk.text.places import MAX_PLACE_ARGUMENT_WORDS, Gazetteer
from planwerk.text.words import words

DATE_FORMATS = frozenset({"date", "date-time"})
"""JSON schema ``format`` values of parameters that take dates."""
_WORD = re.compile(r"[^\W\d_]+", re.UNICODE)


@dataclass(frozen=True)
class DateValue:
    """Argument ``argument`` of call ``call_id`` is ``value``, a date expression, and its parameter takes no date."""

    call_id: str
    argument: str
    value: str
    takes_places: bool
    """The parameter's description or examples name a place: the date stood where a place belongs."""


def is_date_expression(value: str, today: date) -> bool:
    """Whether ``value`` is a date expression in words and nothing else ("Tomorrow", "the day after tomorrow";
    not "Friday Harbor", not "2026-12-01": a date written as a date is a value)."""
    if any(character.isdigit() for character in value):
        return False
    found = find_dates(value, today)
    if not found:
        return False
    said = {word.lower() for mention in found for word in _WORD.findall(mention.text)}
    fillers = {word.lower() for word in words().date_fillers}
    return not [word for word in _WORD.findall(value) if word.lower() not in said | fillers]


def is_only_a_day(value: str, today: date) -> bool:
    """Whether ``value`` is nothing but days, in words or in digits ("2026-12-07", "Montag, 2026-12-07", the form of
    the prompt's date line): what the date reader finds in it, and the date fillers around it (measured with the
    0.5B model: an English question's place argument was "Montag, 2026-12-07", copied from the date line)."""
    found = find_dates(value, today)
    rest = value
    for mention in found:
        rest = rest.replace(mention.text, " ")
    fillers = {word.lower() for word in words().date_fillers}
    return bool(found) and not any(c.isdigit() for c in rest) and all(w.lower() in fillers for w in _WORD.findall(rest))


def date_values(
    plan: Plan, schemas: Mapping[str, Mapping[str, Any]], *, gazetteer: Gazetteer, today: date
) -> list[DateValue]:
    """The literal arguments of ``plan`` that are date expressions given to parameters that take no date.
    ``schemas`` are the tools' input schemas by tool name (a tool without one: its parameters take no date)."""
    found: list[DateValue] = []
    for _, call in plan.calls():
        properties = (schemas.get(call.name) or {}).get("properties") or {}
        for argument, value in call.arguments.items():
            if not isinstance(value, str) or ref_text(value) is not None or not value.strip():
                continue
            if len(value.split()) > MAX_PLACE_ARGUMENT_WORDS:
                continue  # free text (a query, a note) may mention a date
            parameter = properties.get(argument) if isinstance(properties.get(argument), Mapping) else {}
            if parameter.get("format") in DATE_FORMATS or parameter.get("pattern"):
                continue
            places = takes_places(parameter, gazetteer)
            # A day written as a day is a value, except where a place belongs: a day is no place.
            written_day = places and is_only_a_day(value, today)
            if not written_day and (argument_places(value, gazetteer) or not is_date_expression(value, today)):
                continue
            found.append(DateValue(call.id, argument, value, places))
    return found


_ISO_DAY = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DAY_SHOWN = re.compile(r"\d{4}-\d{2}-\d{2}|YYYY-MM-DD")


def takes_a_day(parameter: Mapping[str, Any]) -> bool:
    """Whether a parameter takes a day written YYYY-MM-DD: its schema's ``format`` is ``date``, or its default, an
    example or its description shows that form (``'YYYY-MM-DD'``, ``2019-03-01``)."""
    if parameter.get("format") == "date":
        return True
    shown = [parameter.get("default"), *(parameter.get("examples") or []), parameter.get("description")]
    return any(isinstance(value, str) and _ISO_DAY_SHOWN.search(value) for value in shown)


def stated_day(
    plan: Plan,
    question: str,
    schemas: Mapping[str, Mapping[str, Any]],
    *,
    today: date,
    fixed: frozenset[str] = frozenset(),
) -> dict[str, Any] | None:
    """``plan`` (stored) with the one day ``question`` names written into the one parameter that takes a day
    (:func:`takes_a_day`) and that no call of the plan sets, where no argument holds that day yet; ``None``
    otherwise (no day, several days, several such parameters, or the day already given). Calls of the tools in
    ``fixed`` (tools that change something) are left as planned.

    Measured with the packaged 0.5B model on a function-calling benchmark's entry: "the forecast for Pacifica on
    April 11th, 2023" planned with the city only, for a tool whose optional ``date`` parameter is described "in the
    format of 'YYYY-MM-DD'": the tool would have answered for another day."""
    days = {mention.day for mention in find_dates(question, today)}
    if len(days) != 1:
        return None
    (day,) = days
    held = {text for _, call in plan.calls() for text in _ISO_DAY.findall(json.dumps(call.arguments))}
    if day.isoformat() in held:
        return None
    open_slots = [
        (call.id, name)
        for _, call in plan.calls()
        if call.name not in fixed
        for name, parameter in ((schemas.get(call.name) or {}).get("properties") or {}).items()
        if isinstance(parameter, Mapping) and name not in call.arguments and takes_a_day(parameter)
    ]
    if len(open_slots) != 1:
        return None
    (call_id, name), data = open_slots[0], plan.stored()
    for step in data["steps"]:
        for call in step["tools"]:
            if call["id"] == call_id:
                call["arguments"][name] = day.isoformat()
    return data


def follow_up_day(plan: Plan, question: str, earlier: Sequence[str], *, today: date) -> dict[str, Any] | None:
    """``plan`` (stored) with the one day its arguments hold replaced by the one day ``question`` names, where the
    held day is one an earlier question of the conversation (``earlier``) named and ``question`` does not; ``None``
    otherwise (the question names no day or several, the plan holds several or the asked one, or the held day
    comes from nowhere in the conversation). Every literal string holding the day is changed ("2026-01-18" and
    "2026-01-18T09:00").

    Measured with the 0.5B model (BENCHMARKS.md §12, session 8): a follow-up naming the next day was planned with
    the earlier question's day copied, as start and end date; the answer then gave the earlier day."""
    days = {mention.day for mention in find_dates(question, today)}
    if len(days) != 1:
        return None
    asked = next(iter(days)).isoformat()
    held = {text for _, call in plan.calls() for text in _ISO_DAY.findall(json.dumps(call.arguments))}
    if len(held) != 1 or asked in held:
        return None
    (copied,) = held
    if copied not in {mention.day.isoformat() for text in earlier for mention in find_dates(text, today)}:
        return None
    data = plan.stored()
    for step in data["steps"]:
        for call in step["tools"]:
            call["arguments"] = _replaced_day(call["arguments"], copied, asked)
    return data


def _replaced_day(value: Any, old: str, new: str) -> Any:
    if isinstance(value, str):
        return value if ref_text(value) is not None else value.replace(old, new)
    if isinstance(value, Mapping):
        return value if ref_text(value) is not None else {key: _replaced_day(v, old, new) for key, v in value.items()}
    if isinstance(value, list):
        return [_replaced_day(item, old, new) for item in value]
    return value


def without_stray_day_places(
    plan: Plan, schemas: Mapping[str, Mapping[str, Any]], *, gazetteer: Gazetteer, today: date
) -> dict[str, Any] | None:
    """``plan`` (stored) without the calls that were given a date where a place belongs (:func:`date_values`,
    ``takes_places``) and whose result no other call takes: a stray call that can only fail, beside the calls that
    answer. ``None`` when there is none, or when no call would be left (then the planner hears the problem, or the
    person is asked for the place).

    Measured with the 0.5B model (BENCHMARKS.md §12, session 8): a follow-up naming another day was planned with
    one lookup for the place, one lookup for the day as if it were a place, and the next call on the first; the
    second could only fail."""
    dated = {
        found.call_id for found in date_values(plan, schemas, gazetteer=gazetteer, today=today) if found.takes_places
    }
    if not dated:
        return None
    taken = {needed for needs in call_dependencies(plan).values() for needed in needs}
    kept = without_calls(plan, dated - taken) if dated - taken else None
    return kept[0].stored() if kept is not None else None
