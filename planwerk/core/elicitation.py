"""Answers to a server's elicitation request (MCP ``elicitation/create``): parsing and checking, no I/O.

A person answers an elicitation through a LangGraph interrupt (see ``planwerk.tools.client_features``). What they
may answer, in any of these forms:

- ``{"action": "accept", "content": {...}}``, ``{"action": "decline"}``, ``{"action": "cancel"}`` (the MCP form);
- ``"decline"`` or ``"cancel"`` (also ``"accept"`` for a URL request, or a form whose fields all have defaults);
- the content alone, ``{"name": "Ada", ...}``: accepted;
- for a form with exactly one field, the value alone (``"Ada"``).

The content is checked against the requested schema (JSON Schema, with formats such as ``email`` and ``date``);
fields the person leaves out take the schema's ``default``; a field the form does not have is an error (a typo
would otherwise be dropped silently). A wrong answer raises :class:`ElicitationAnswerError` naming every problem
and the fields expected.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema import Draft202012Validator, FormatChecker

ElicitationAction = Literal["accept", "decline", "cancel"]
"""What a person did with the request (the MCP ``ElicitResult.action``)."""

_ACTIONS: tuple[ElicitationAction, ...] = ("accept", "decline", "cancel")


class ElicitationAnswerError(ValueError):
    """The answer does not fit the request; the message says what was wrong and what is expected."""


@dataclass(frozen=True)
class ElicitationAnswer:
    """A checked answer: the action and, for ``accept`` of a form, the content the server gets."""

    action: ElicitationAction
    content: Mapping[str, Any] | None = field(default=None)


def describe_form(schema: Mapping[str, Any] | None) -> str:
    """The fields of a requested schema in one line, e.g. ``name (string, required), age (integer)``."""
    if not schema:
        return "no fields (answer accept, decline or cancel)"
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or ())
    parts = []
    for name, spec in properties.items():
        kind = spec.get("type", "any") if isinstance(spec, Mapping) else "any"
        notes = [str(kind)]
        if isinstance(spec, Mapping):
            if "enum" in spec:
                notes.append("one of " + "/".join(map(str, spec["enum"])))
            if "format" in spec:
                notes.append(str(spec["format"]))
        if name in required:
            notes.append("required")
        parts.append(f"{name} ({', '.join(notes)})")
    return ", ".join(parts) or "no fields"


def parse_elicitation_answer(answer: Any, schema: Mapping[str, Any] | None) -> ElicitationAnswer:
    """Check a person's ``answer`` to a request for ``schema`` (None: a URL request, which has no form).

    Raises :class:`ElicitationAnswerError` when it is none of the accepted forms or does not fit the schema.
    """
    expected = (
        'expected {"action": "accept", "content": {...}}, "decline", "cancel" or the content as a JSON object; '
        f"the form has: {describe_form(schema)}"
    )
    if isinstance(answer, str) and answer.lstrip().startswith("{"):
        try:
            answer = json.loads(answer)
        except ValueError:
            raise ElicitationAnswerError(f"the answer looks like JSON but does not parse; {expected}") from None
    if isinstance(answer, str) and answer.strip().lower() in _ACTIONS:
        answer = {"action": answer.strip().lower()}
    if isinstance(answer, Mapping) and "action" in answer:
        action = answer["action"]
        if action not in _ACTIONS:
            raise ElicitationAnswerError(f"unknown action {action!r}; {expected}")
        if unknown := sorted(set(answer) - {"action", "content"}):
            raise ElicitationAnswerError(f"unknown key(s) {', '.join(unknown)} beside action; {expected}")
        if action != "accept":
            return ElicitationAnswer(action)
        content = answer.get("content")
    elif isinstance(answer, Mapping):
        content = answer
    elif schema and len(schema.get("properties") or {}) == 1 and isinstance(answer, str | int | float | bool):
        content = {next(iter(schema["properties"])): answer}
    else:
        raise ElicitationAnswerError(f"unusable answer {answer!r}; {expected}")
    if schema is None:  # a URL request: accepting says the person went there; there is no content
        if content:
            raise ElicitationAnswerError("this request has no form (it names a URL): answer accept, decline or cancel")
        return ElicitationAnswer("accept")
    return ElicitationAnswer("accept", check_content(content or {}, schema, expected))


def check_content(content: Any, schema: Mapping[str, Any], expected: str = "") -> dict[str, Any]:
    """``content`` with the schema's defaults filled in, checked against ``schema``; else the problems, named."""
    if not isinstance(content, Mapping):
        raise ElicitationAnswerError(f"the content must be a JSON object, got {type(content).__name__}; {expected}")
    properties = schema.get("properties") or {}
    if unknown := sorted(set(content) - set(properties)):
        raise ElicitationAnswerError(f"unknown field(s) {', '.join(unknown)}; {expected or describe_form(schema)}")
    filled = dict(content)
    for name, spec in properties.items():
        if name not in filled and isinstance(spec, Mapping) and "default" in spec:
            filled[name] = spec["default"]
    validator = Draft202012Validator(dict(schema), format_checker=FormatChecker())
    problems = sorted(validator.iter_errors(filled), key=lambda e: [str(p) for p in e.absolute_path])
    if problems:
        said = "; ".join(f"{'.'.join(map(str, e.absolute_path)) or 'answer'}: {e.message}" for e in problems)
        raise ElicitationAnswerError(f"the answer does not fit the form: {said}; {expected or describe_form(schema)}")
    return filled
