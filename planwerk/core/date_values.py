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
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

from planwerk.core.plan import Plan
from planwerk.core.refs import ref_text
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
            if argument_places(value, gazetteer) or not is_date_expression(value, today):
                continue
            found.append(DateValue(call.id, argument, value, takes_places(parameter, gazetteer)))
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
