"""An argument whose allowed values (its schema's ``enum``, or the values its description quotes by example) the
question states, left out by a call; and a call's choice among listed values that the question makes otherwise.
Pure.

A schema that lists an argument's values names the argument as well as its name does: "we would like to attend a
Concert or a Sports event" gives ``event_type: ["Concert", "Sports"]`` where ``event_type`` allows Concert, Sports,
Exhibition and Festival. The 0.5B model left such optional arguments out (a function-calling benchmark's
parallel-multiple entry); the question asked about arguments named in so many words
(:func:`planwerk.core.question_fit.unfilled_named_arguments`) does not see "event type" in that question. The plan
is completed in code (:func:`stated_enum_values`) and checked like any plan.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Iterator, Mapping
from typing import Any

from planwerk.core.plan import Plan, PlanData
from planwerk.core.tools import ToolSpec


def _enum(schema: Any) -> tuple[list[str], bool] | None:
    """An argument's allowed text values and whether it takes a list of them; ``None`` when it lists none."""
    if not isinstance(schema, Mapping):
        return None
    for key in ("anyOf", "oneOf"):  # "list[...] | None" as pydantic and FastMCP write it
        branches = [b for b in schema.get(key) or [] if isinstance(b, Mapping) and b.get("type") != "null"]
        if len(branches) == 1:
            return _enum(branches[0])
    items = schema.get("items")
    if schema.get("type") == "array" and isinstance(items, Mapping) and isinstance(items.get("enum"), list):
        return [v for v in items["enum"] if isinstance(v, str)], True
    if isinstance(schema.get("enum"), list):
        return [v for v in schema["enum"] if isinstance(v, str)], False
    description = schema.get("description")
    if schema.get("type") == "string" and isinstance(description, str) and _SHOWS_VALUES.search(description):
        quoted = _QUOTED.findall(description)
        return (quoted, False) if quoted else None
    return None


_SHOWS_VALUES = re.compile(r"\be\.g\.|\bfor example\b|\bsuch as\b|\bz\. ?B\.|\bzum Beispiel\b", re.I)
"""A description that shows values by example: its quoted values count as the argument's values."""
_QUOTED = re.compile(r"""['"`]([^'"`\n]{1,40})['"`]""")


def _stated(values: list[str], question: str) -> list[str]:
    """The ``values`` the question writes as words of their own (case ignored), in the enum's order."""
    return [v for v in values if v.strip() and re.search(rf"(?<!\w){re.escape(v.strip())}(?!\w)", question, re.I)]


_LIST_SEPARATOR = re.compile(r"[,;:()]|\s(?:or|oder|and|und)\s", re.I)
_NAME = re.compile(r"[^\W\d_][\w-]*(?: [^\W\d_][\w-]*)?")
LISTED_VALUES_MIN = 3
"""Names of one or two words a description must list, between commas, colons, brackets and "or", for them to
count as the argument's values ("red, green, blue or grey (German names work too: rot, grün)")."""


def listed_values(schema: Any) -> list[str]:
    """An argument's allowed text values: its ``enum`` or the values its description quotes by example
    (:func:`_enum`), else the names of one or two words its description lists (:data:`LISTED_VALUES_MIN` at
    least); empty when it shows none."""
    if (found := _enum(schema)) is not None:
        return found[0]
    if not isinstance(schema, Mapping) or schema.get("type") not in (None, "string"):
        return []
    description = schema.get("description")
    if not isinstance(description, str):
        return []
    items = [item.strip(" .") for item in _LIST_SEPARATOR.split(description)]
    names = [item for item in items if _NAME.fullmatch(item)]
    return names if len(names) >= LISTED_VALUES_MIN else []


def stated_choices(
    plan: Plan, question: str, specs: Mapping[str, ToolSpec], fixed: Collection[str] = ()
) -> PlanData | None:
    """``plan`` with each text value that is one of its argument's allowed values (:func:`listed_values`) and that
    the question does not state replaced by the one other allowed value the question states: the question made the
    choice, the plan took another value of the list (measured on the travel set with the 0.5B model, BENCHMARKS.md
    §12). Not when the question states several of them, nor when another argument of the
    tool allows the stated one; calls of the tools in ``fixed`` (tools that change something) are left as planned.
    ``None`` when nothing changes."""
    data = plan.stored()
    changed = False
    for call, schema in _open_calls(data, specs, fixed):
        allowed = {name: listed_values(prop) for name, prop in (schema.get("properties") or {}).items()}
        for name, value in call["arguments"].items():
            values = allowed.get(name) or []
            if not isinstance(value, str) or value.casefold() not in {v.casefold() for v in values}:
                continue
            if _stated([value], question):
                continue
            stated = {v.casefold(): v for v in _stated(values, question)}
            others = {v.casefold() for other, vs in allowed.items() if other != name for v in vs}
            if len(stated) != 1 or next(iter(stated)) in others:
                continue
            call["arguments"][name] = next(iter(stated.values()))
            changed = True
    return data if changed else None


def _open_calls(
    data: PlanData, specs: Mapping[str, ToolSpec], fixed: Collection[str]
) -> Iterator[tuple[dict[str, Any], Mapping[str, Any]]]:
    """Each call of ``data`` whose tool is loaded and not in ``fixed``, with the tool's input schema."""
    for step in data["steps"]:
        for call in step["tools"]:
            spec = specs.get(call["name"])
            if spec is not None and spec.name not in fixed:
                yield call, spec.input_schema or {}


def stated_enum_values(
    plan: Plan, question: str, specs: Mapping[str, ToolSpec], fixed: Collection[str] = ()
) -> PlanData | None:
    """``plan`` with each optional argument a call leaves out set to the allowed values the question states: the
    list of them where the argument takes a list, the one where it takes one value (not when the question states
    several). Only where no other argument of the tool allows any of those values (then which argument they belong
    to is not said); calls of the tools in ``fixed`` (tools that change something) are left as planned. ``None``
    when nothing changes."""
    data = plan.stored()
    changed = False
    for call, schema in _open_calls(data, specs, fixed):
        properties = schema.get("properties") or {}
        required = set(schema.get("required") or [])
        enums = {name: found for name, prop in properties.items() if (found := _enum(prop)) is not None}
        for name, (values, many) in enums.items():
            if name in required or name in call["arguments"]:
                continue
            stated = _stated(values, question)
            others = {v.casefold() for other, (vs, _) in enums.items() if other != name for v in vs}
            if not stated or any(v.casefold() in others for v in stated) or (len(stated) > 1 and not many):
                continue
            call["arguments"][name] = stated if many else stated[0]
            changed = True
    return data if changed else None
