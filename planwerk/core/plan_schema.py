"""The JSON schema of valid plans for a given tool catalog, for constrained decoding and checks.

The schema admits ``{"steps": [...], "final": null|str}`` (with an optional ``"reason"`` why it calls nothing) or
``{"ask_user": str}``. Every call is one of the
loaded tools (``anyOf`` over tools, each with its own argument object), and every argument value may instead be
a reference, ``{"$ref": "<id>.<path>"}`` or ``"$ref:<id>.<path>"``. It stays within the JSON-schema subset that
xgrammar compiles (no ``if``/``then``, only local ``$ref``s into the top-level ``$defs``). Pure: no I/O.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from planwerk.core.tools import ToolSpec

ID_PATTERN = r"^[A-Za-z_][A-Za-z0-9_-]*$"
"""Call ids: short identifiers, so that ``<id>.<path>`` references stay unambiguous."""

REF_OBJECT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"$ref": {"type": "string", "pattern": r"^[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_\[\]-]+)*$"}},
    "required": ["$ref"],
    "additionalProperties": False,
}
"""An argument value that points at an earlier result or a user field: ``{"$ref": "geo.lat"}``."""

REF_STRING_SCHEMA: dict[str, Any] = {
    "type": "string",
    "pattern": r"^\$ref:[A-Za-z_][A-Za-z0-9_-]*(\.[A-Za-z0-9_\[\]-]+)*$",
}
"""The string form of a reference: ``"$ref:geo.lat"``."""


@dataclass(frozen=True)
class PlanSchemaLimits:
    """Bounds that keep a small model from looping inside the grammar (the schema forbids longer plans)."""

    max_steps: int = 8
    max_calls_per_step: int = 8
    # No maxLength/bounded repeats on strings: they cost xgrammar seconds per compile (4.4 s vs 0.3 s measured
    # for the travel tools); runaway strings are cut by the generation's repetition stop instead.


_SAFE_NAME = re.compile(r"[^A-Za-z0-9_.-]")


def plan_json_schema(
    specs: Mapping[str, ToolSpec], limits: PlanSchemaLimits | None = None, *, rounds: bool = False
) -> dict[str, Any]:
    """A JSON schema (draft 2020-12) of the plans that may be written for the tools in ``specs``; with ``rounds``
    a plan may end with ``"next_round": true`` (profiles that plan in rounds).

    Each tool's ``input_schema`` becomes the ``arguments`` object of its call variant; the tool's own ``$defs``
    are hoisted to the top level under a per-tool prefix so that the combined schema stays self-contained.
    With no tools, only plans without calls (a ``final`` answer) or ``ask_user`` are admitted.
    """
    limits = limits or PlanSchemaLimits()
    defs: dict[str, Any] = {}
    variants = [_call_variant(spec, defs) for _, spec in sorted(specs.items())]
    if variants:
        call_schema: dict[str, Any] = variants[0] if len(variants) == 1 else {"anyOf": variants}
        tools_schema: dict[str, Any] = {
            "type": "array",
            "items": call_schema,
            "minItems": 1,
            "maxItems": limits.max_calls_per_step,
        }
        max_steps = limits.max_steps
    else:
        tools_schema = {"type": "array", "maxItems": 0}
        max_steps = 0
    step_schema = {
        "type": "object",
        "properties": {
            "description": {"type": "string"},
            "tools": tools_schema,
        },
        "required": ["description", "tools"],
        "additionalProperties": False,
    }
    plan_schema = {
        "type": "object",
        "properties": {
            "steps": {"type": "array", "items": step_schema, "maxItems": max_steps},
            "final": {"anyOf": [{"type": "null"}, {"type": "string"}]},
            # Why a plan calls nothing (optional: a plan with calls needs none).
            "reason": {"type": "string"},
            **({"next_round": {"type": "boolean"}} if rounds else {}),
        },
        "required": ["steps", "final"],
        "additionalProperties": False,
    }
    ask_schema = {
        "type": "object",
        "properties": {"ask_user": {"type": "string", "minLength": 1}},
        "required": ["ask_user"],
        "additionalProperties": False,
    }
    schema: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "plan",
        "anyOf": [plan_schema, ask_schema],
    }
    if defs:
        schema["$defs"] = defs
    return schema


def _call_variant(spec: ToolSpec, defs: dict[str, Any]) -> dict[str, Any]:
    input_schema = copy.deepcopy(dict(spec.input_schema or {}))
    prefix = _SAFE_NAME.sub("_", spec.name) + "__"
    for def_key in ("$defs", "definitions"):
        for name, sub_schema in (input_schema.pop(def_key, None) or {}).items():
            defs[prefix + name] = _rewrite_refs(sub_schema, prefix)
    input_schema = _rewrite_refs(input_schema, prefix)
    properties = input_schema.get("properties") or {}
    arguments = {
        "type": "object",
        "properties": {name: _value_or_ref(prop) for name, prop in properties.items()},
        "required": [name for name in input_schema.get("required", []) if name in properties],
        "additionalProperties": False,
    }
    return {
        "type": "object",
        "properties": {
            "id": {"type": "string", "pattern": ID_PATTERN},
            "name": {"type": "string", "enum": [spec.name]},
            "arguments": arguments,
        },
        "required": ["id", "name", "arguments"],
        "additionalProperties": False,
    }


def _value_or_ref(prop_schema: Any) -> dict[str, Any]:
    """A property's own schema, or either reference form."""
    if not isinstance(prop_schema, dict) or not prop_schema:
        return {}  # "anything" already admits both reference forms
    return {"anyOf": [prop_schema, REF_OBJECT_SCHEMA, REF_STRING_SCHEMA]}


def _rewrite_refs(node: Any, prefix: str) -> Any:
    """Point local ``#/$defs/X`` (or ``#/definitions/X``) references at the hoisted ``#/$defs/<prefix>X``."""
    if isinstance(node, list):
        return [_rewrite_refs(item, prefix) for item in node]
    if not isinstance(node, dict):
        return node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in ("properties", "patternProperties", "$defs", "definitions") and isinstance(value, dict):
            # maps of name -> schema: names are not keywords (a property may well be called "$ref")
            out[key] = {name: _rewrite_refs(sub, prefix) for name, sub in value.items()}
        elif key == "$ref" and isinstance(value, str):
            for local in ("#/$defs/", "#/definitions/"):
                if value.startswith(local):
                    value = "#/$defs/" + prefix + value[len(local) :]
                    break
            out[key] = value
        else:
            out[key] = _rewrite_refs(value, prefix)
    return out
