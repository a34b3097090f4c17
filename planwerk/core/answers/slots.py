"""Slots: every scalar value of a run's successful results, named ``<call id>.<path>`` as ``$ref`` names it.

A slot's name is a reference :func:`planwerk.core.refs.walk` resolves to the same value (``wx.temp_max_c``,
``wx.days.0.date``; a result that is one number is the call id alone). Its kind says how it is written (a number,
a date, a date and time, a clock time, a text, a flag) and, for a number, its unit: from the tool's output schema
where that declares one (an ``x-unit``/``unit`` keyword, or a unit symbol in parentheses at the end of the field's
description or title, ``"Distance (km)"``), else from a generic key suffix (``_c``, ``_km``, ``_mm``, ``_percent``:
:data:`UNIT_SUFFIXES`). No field names of any domain are known here.

Bounded (:class:`SlotLimits`): the first entries of each list, texts up to a length, a number of slots in all; what
is left out can still be quoted by the model as text, and the answer check sees it as today. A longer text (a
file, a message) is prose, not a value: it gets a slot of kind ``quote`` only where the limits ask for quotes
(:attr:`SlotLimits.max_quotes`), which :mod:`.render` writes as a fenced quotation; the model is shown its
placeholder, never its text. Pure: no I/O.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime, time
from typing import Any, Literal

from planwerk.core.json_pointer import pointer_target
from planwerk.core.refs import as_data

SlotKind = Literal["number", "date", "datetime", "time", "text", "flag", "quote"]
"""How a slot's value is written: a number (with its unit), a calendar date, a date with a clock time, a clock
time, a text as it stands, a yes/no, or a result's free text as a fenced quotation."""


@dataclass(frozen=True)
class Slot:
    """One named scalar of a result."""

    name: str
    """``<call id>.<path>``: a ``$ref`` to the value (``wx.days.0.temp_max_c``)."""
    value: str | int | float | bool
    kind: SlotKind
    unit: str | None = None
    """The unit of a number (``°C``, ``km``), when its schema or key says one."""
    length: int | None = None
    """A quote's full length in characters (its value is clipped to :attr:`SlotLimits.max_quote_chars`)."""


@dataclass(frozen=True)
class SlotLimits:
    """How many slots one run's results give at most."""

    max_slots: int = 150
    """Slots in all; results are walked in call order, so the first calls' values are kept."""
    max_items: int = 5
    """Entries named per list (``spots.items.0`` … ``spots.items.4``)."""
    max_text: int = 120
    """Longer texts are prose, not values: they get no value slot (a ``quote`` slot only where :attr:`max_quotes`
    allows)."""
    max_depth: int = 8
    max_quotes: int = 0
    """Free texts (longer than :attr:`max_text`, or of several lines) given a ``quote`` slot; 0: none."""
    max_quote_chars: int = 2000
    """A quote's value is clipped to this many characters (its :attr:`Slot.length` keeps the full length)."""


DEFAULT_SLOT_LIMITS = SlotLimits()

QUOTE_SLOT_LIMITS = SlotLimits(max_quotes=3)
"""The answer's limits: up to three free texts may be quoted (:mod:`planwerk.graph.nodes.answer_refs`)."""

UNIT_SUFFIXES: tuple[tuple[str, str], ...] = (
    ("_percent", "%"),
    ("_pct", "%"),
    ("_kmh", "km/h"),
    ("_km_h", "km/h"),
    ("_mph", "mph"),
    ("_hpa", "hPa"),
    ("_km", "km"),
    ("_cm", "cm"),
    ("_mm", "mm"),
    ("_m", "m"),
    ("_kg", "kg"),
    ("_c", "°C"),
    ("_f", "°F"),
    ("_deg", "°"),
    ("_min", "min"),
    ("_hours", "h"),
    ("_h", "h"),
    ("_seconds", "s"),
    ("_sec", "s"),
    ("_eur", "€"),
    ("_usd", "$"),
)
"""Generic key suffixes and the unit they name, longest match first (``wind_kmh`` is km/h, not a bare ``h``):
the conventions of unit-suffixed JSON field names, no domain's field names."""

UNIT_SYMBOLS: frozenset[str] = frozenset(unit for _, unit in UNIT_SUFFIXES) | {"K", "m/s", "m²", "km²", "g", "l", "ml"}
"""Unit symbols an output schema's description or title may end with in parentheses (``"Distance (km)"``)."""

NAME_SEGMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_-]*|\d+")
"""A key or an index a slot name may hold: the characters a placeholder ``{…}`` and its grammar allow."""

_ISO_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_ISO_DATETIME = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?")
_CLOCK = re.compile(r"\d{2}:\d{2}(?::\d{2})?")
_SCHEMA_UNIT = re.compile(r"\(([^()]{1,8})\)\s*\.?\s*$")


def read_moment(text: str) -> date | datetime | time | None:
    """The date, date and time, or clock time an ISO text (``2026-11-27``, ``2026-11-27T00:00:00+09:00``,
    ``16:00``) is, else ``None``. ISO forms only (what results hold); dates written in words are read by
    :mod:`planwerk.text.dates`."""
    value = text.strip()
    try:
        if _ISO_DATE.fullmatch(value):
            return date.fromisoformat(value)
        if _ISO_DATETIME.fullmatch(value):
            return datetime.fromisoformat(value.replace("Z", "+00:00"))
        if _CLOCK.fullmatch(value):
            return time.fromisoformat(value)
    except ValueError:  # "2026-13-45" is no date: a text
        return None
    return None


def unit_of_key(key: str) -> str | None:
    """The unit a field name's generic suffix names (``temp_max_c`` °C, ``distance_km`` km), else ``None``."""
    lowered = key.lower()
    for suffix, unit in UNIT_SUFFIXES:
        if lowered.endswith(suffix) and len(lowered) > len(suffix):
            return unit
    return None


def unit_of_schema(schema: Mapping[str, Any] | None) -> str | None:
    """The unit a property's JSON schema declares: ``x-unit`` or ``unit``, else a known unit symbol in parentheses
    at the end of its description or title."""
    if not isinstance(schema, Mapping):
        return None
    for key in ("x-unit", "unit"):
        if isinstance(schema.get(key), str) and schema[key].strip():
            return str(schema[key]).strip()
    for key in ("description", "title"):
        text = schema.get(key)
        if isinstance(text, str) and (found := _SCHEMA_UNIT.search(text)) and found[1].strip() in UNIT_SYMBOLS:
            return found[1].strip()
    return None


def _resolve(schema: Any, root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``schema`` with a local ``$ref`` (``#/$defs/X``) followed, and a nullable ``anyOf`` reduced to its object
    or array member; ``None`` when it is not a schema."""
    for _ in range(8):  # bounded: a cyclic $ref ends here
        if not isinstance(schema, Mapping):
            return None
        ref = schema.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/"):
            schema = pointer_target(root, ref)
            continue
        options = schema.get("anyOf") or schema.get("oneOf")
        if isinstance(options, list):
            typed = [o for o in options if isinstance(o, Mapping) and o.get("type") != "null"]
            if len(typed) == 1:
                schema = typed[0]
                continue
        return schema
    return None


def _child(schema: Mapping[str, Any] | None, segment: str | int, root: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """The schema of ``segment`` (a property or a list entry) inside ``schema``."""
    if schema is None:
        return None
    if isinstance(segment, int):
        return _resolve(schema.get("items"), root)
    properties = schema.get("properties")
    return _resolve(properties.get(segment), root) if isinstance(properties, Mapping) else None


def _scalar(
    name: str, key: str | None, value: Any, schema: Mapping[str, Any] | None, limits: SlotLimits
) -> Slot | None:
    if isinstance(value, bool):
        return Slot(name, value, "flag")
    if isinstance(value, int | float):
        if isinstance(value, float) and not math.isfinite(value):
            return None
        unit = unit_of_schema(schema) or (unit_of_key(key) if key else None)
        return Slot(name, value, "number", unit)
    if isinstance(value, str):
        text = value.strip()
        if not text or len(text) > limits.max_text or "\n" in text:
            return None
        moment = read_moment(text)
        if isinstance(moment, datetime):
            return Slot(name, text, "datetime")
        if isinstance(moment, date):
            return Slot(name, text, "date")
        if isinstance(moment, time):
            return Slot(name, text, "time")
        return Slot(name, text, "text")
    return None


def collect_slots(
    calls: Sequence[Mapping[str, Any]],
    output_schemas: Mapping[str, Mapping[str, Any] | None] | None = None,
    limits: SlotLimits = DEFAULT_SLOT_LIMITS,
) -> dict[str, Slot]:
    """The slots of the successful ``calls`` (call records: ``id``, ``tool``, ``status``, ``result``), by name, in
    call and field order. ``output_schemas`` (by tool name) give units where they declare them. A key or a call id
    a placeholder cannot spell (spaces, dots, brackets) is skipped with what lies under it. A free text gets a
    ``quote`` slot while fewer than ``limits.max_quotes`` have one."""
    slots: dict[str, Slot] = {}
    schemas = output_schemas or {}
    quotes = 0
    for call in calls:
        call_id = str(call.get("id", ""))
        if call.get("status") != "ok" or not NAME_SEGMENT.fullmatch(call_id) or call_id.isdigit():
            continue
        raw_schema = schemas.get(str(call.get("tool")))
        root = raw_schema if isinstance(raw_schema, Mapping) else {}
        schema = _resolve(raw_schema, root)
        # MCP wraps a non-object result as {"result": …}; the slot is then the call id alone (walk skips "result").
        result = as_data(call.get("result"))
        if schema is not None and not isinstance(result, Mapping) and "result" in (schema.get("properties") or {}):
            schema = _child(schema, "result", root)
        stack: list[tuple[str, str | None, Any, Mapping[str, Any] | None, int]] = [(call_id, None, result, schema, 0)]
        while stack and len(slots) < limits.max_slots:
            name, key, value, node_schema, depth = stack.pop()
            value = as_data(value)
            if isinstance(value, Mapping):
                if depth >= limits.max_depth:
                    continue
                children = [
                    (f"{name}.{k}", str(k), v, _child(node_schema, str(k), root), depth + 1)
                    for k, v in value.items()
                    if isinstance(k, str) and NAME_SEGMENT.fullmatch(k) and not k.isdigit()
                ]
                stack.extend(reversed(children))  # popped in field order
            elif isinstance(value, list):
                if depth >= limits.max_depth:
                    continue
                item_schema = _child(node_schema, 0, root)
                children = [
                    (f"{name}.{i}", key, v, item_schema, depth + 1) for i, v in enumerate(value[: limits.max_items])
                ]
                stack.extend(reversed(children))
            elif (slot := _scalar(name, key, value, node_schema, limits)) is not None:
                slots[name] = slot
            elif isinstance(value, str) and value.strip() and quotes < limits.max_quotes:
                quotes += 1
                text = value.strip()
                slots[name] = Slot(name, text[: limits.max_quote_chars], "quote", length=len(text))
    return slots
