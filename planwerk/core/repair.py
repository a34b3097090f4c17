"""Argument checking against a tool's input schema, with repair of common model slips.

Order: strict validation (``jsonschema``); if that fails, repair (numbers and booleans given as strings,
whole floats where an integer is expected, a single value or a JSON array's text where a list is expected) and
validate again; if it still fails, :class:`ToolError` with ``kind="invalid_arguments"`` that shows the expected
schema. A value is coerced only when the coerced value is valid under the schema or under one branch of a union
(``anyOf``/``oneOf``, a list of types): ``"3"`` becomes ``3`` for ``int | float``, and stays ``"3"`` where a string
branch accepts it. The plan check (:mod:`planwerk.core.checking`) applies the same repair (:func:`repair_arguments`)
before it judges literal arguments, so a plan is never sent back for what the call would repair.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import best_match

from planwerk.core.tools import ToolError


def check_arguments(
    schema: Mapping[str, Any], arguments: Mapping[str, Any], *, tool: str, server: str | None
) -> dict[str, Any]:
    """``arguments`` as valid for ``schema`` (repaired if needed), or a ToolError saying what is wrong."""
    validator = Draft202012Validator(schema)
    args = dict(arguments)
    if validator.is_valid(args):
        return args
    repaired = repair_arguments(schema, args)
    errors = list(validator.iter_errors(repaired))
    if not errors:
        return repaired
    error = best_match(errors)
    where = "/".join(str(p) for p in error.absolute_path) or "(arguments)"
    raise ToolError(
        f"invalid arguments for {tool}"
        + (f" on server {server}" if server else "")
        + f": {where}: {error.message}; expected arguments matching {json.dumps(_compact(schema))}",
        tool=tool,
        server=server,
        kind="invalid_arguments",
    )


def repair_arguments(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> dict[str, Any]:
    """``arguments`` with the model slips repaired that ``schema`` allows repairing (unchanged where valid)."""
    args = dict(arguments)
    if Draft202012Validator(schema).is_valid(args):
        return args
    repaired = _repair(args, schema, schema)
    return repaired if isinstance(repaired, dict) else args


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node: Any = root
        for part in ref[2:].split("/"):
            node = node.get(part, {}) if isinstance(node, Mapping) else {}
        return node if isinstance(node, Mapping) else {}
    return schema


def _types(schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The alternatives a value may take (anyOf/oneOf flattened, $refs resolved)."""
    schema = _resolve(schema, root)
    alternatives = schema.get("anyOf") or schema.get("oneOf")
    if alternatives:
        return [t for alt in alternatives for t in _types(alt, root)]
    return [schema]


def _type_names(schema: Mapping[str, Any], root: Mapping[str, Any]) -> set[str]:
    names: set[str] = set()
    for alt in _types(schema, root):
        kind = alt.get("type")
        names.update(kind if isinstance(kind, list) else [kind] if kind else [])
    return names


def _repair(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> Any:
    kinds = _type_names(schema, root)
    if isinstance(value, dict):
        props: dict[str, Any] = {}
        for alt in _types(schema, root):
            props.update(alt.get("properties") or {})
        return {k: _repair(v, props[k], root) if k in props else v for k, v in value.items()}
    if isinstance(value, list):
        if "array" in kinds:
            items = next((alt.get("items") for alt in _types(schema, root) if alt.get("items")), None)
            return [_repair(v, items, root) for v in value] if isinstance(items, Mapping) else value
        return value
    if not kinds or (_fits(value, kinds) and _valid(value, schema, root)):
        return value
    # The first coercion the schema (or one branch of its union) accepts; none: unchanged, validation says why.
    for candidate in _coercions(value, kinds, schema, root):
        if _valid(candidate, schema, root):
            return candidate
    return value


def _coercions(value: Any, kinds: set[str], schema: Mapping[str, Any], root: Mapping[str, Any]) -> list[Any]:
    """What ``value`` might have meant, most specific first."""
    candidates: list[Any] = []
    if isinstance(value, str):
        text = value.strip()
        if text.lower() in ("true", "false"):
            candidates.append(text.lower() == "true")
        number = _number(text)
        if number is not None:
            candidates.append(number)
            if isinstance(number, float) and number.is_integer():
                candidates.append(int(number))
        if "array" in kinds and text.startswith("["):
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            if isinstance(parsed, list):
                candidates.append(_repair(parsed, schema, root))
    if isinstance(value, float) and not isinstance(value, bool) and value.is_integer():
        candidates.append(int(value))
    if "array" in kinds:
        items = next((alt.get("items") for alt in _types(schema, root) if alt.get("items")), None)
        candidates.append([_repair(value, items, root) if isinstance(items, Mapping) else value])
    return candidates


def _valid(value: Any, schema: Mapping[str, Any], root: Mapping[str, Any]) -> bool:
    """Whether ``value`` is valid under ``schema``, a part of ``root`` (whose local ``$defs`` it may reference)."""
    whole = dict(schema)
    for key in ("$defs", "definitions"):
        if key in root and key not in whole:
            whole[key] = root[key]
    try:
        return Draft202012Validator(whole).is_valid(value)
    except Exception:  # a schema part jsonschema cannot use (a broken $ref): no claim, keep the value
        return False


def _fits(value: Any, kinds: set[str]) -> bool:
    if isinstance(value, bool):
        return "boolean" in kinds
    if isinstance(value, int):
        return bool(kinds & {"integer", "number"})
    if isinstance(value, float):
        return "number" in kinds
    if isinstance(value, str):
        return "string" in kinds
    if value is None:
        return "null" in kinds
    return False


def _number(text: str) -> int | float | None:
    try:
        return int(text)
    except ValueError:
        pass
    try:
        number = float(text)
    except ValueError:
        return None
    return number if number == number and abs(number) != float("inf") else None


def _compact(schema: Mapping[str, Any]) -> dict[str, Any]:
    """The schema without titles, so the message stays short."""

    def strip(node: Any) -> Any:
        if isinstance(node, dict):
            return {k: strip(v) for k, v in node.items() if k != "title"}
        if isinstance(node, list):
            return [strip(v) for v in node]
        return node

    return strip(dict(schema))
