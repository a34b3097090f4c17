"""Result fields seen in a real result, for tools that declare no output schema (a probing call's result).

A tool without an output schema leaves the planner guessing paths into its results. Where the profile allows a
probing call (``Profile.probe_results``), one real result is turned into a minimal output schema: the fields of an
object (and of the first item of a list), each with the JSON type its value had, marked :data:`OBSERVED_KEY` so the
catalog says the fields were seen rather than declared, and open (``additionalProperties: true``) so the plan check
does not refuse a field the one result happened to lack. Text results give no schema. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

OBSERVED_KEY = "x-planwerk-observed"
"""Marks an output schema made from a seen result."""
MAX_OBSERVED_FIELDS = 20
"""Fields of one object at most."""
MAX_OBSERVED_DEPTH = 3
"""How deep into nested objects and lists fields are listed."""


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "null"


def _schema_of(value: Any, depth: int) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": _kind(value)}
    if depth >= MAX_OBSERVED_DEPTH:
        return schema
    if isinstance(value, Mapping) and value:
        keys = list(value)[:MAX_OBSERVED_FIELDS]
        schema["properties"] = {str(k): _schema_of(value[k], depth + 1) for k in keys}
        schema["additionalProperties"] = True
    elif isinstance(value, list) and value:
        schema["items"] = _schema_of(value[0], depth + 1)
    return schema


def observed_schema(result: Any) -> dict[str, Any] | None:
    """A minimal output schema of ``result`` (an object's fields, typed as seen), or ``None`` when the result is
    no object with fields (text, a number, an empty object: nothing to show)."""
    if not isinstance(result, Mapping) or not result:
        return None
    return {**_schema_of(result, 0), OBSERVED_KEY: True}
