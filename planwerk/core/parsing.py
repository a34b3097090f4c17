"""Tolerant parsing of a planner's text into a :class:`~planwerk.core.plan.Plan`.

Models wrap their JSON in chatter, an ``assistant`` prefix or code fences, write Python dicts, single quotes,
unquoted keys, True/False/None, trailing commas, or give arguments as a JSON string. What can be repaired is
repaired (json-repair); what cannot becomes a :class:`PlanParseError` whose message goes back to the model.
Pure: no I/O, never raises anything but :class:`PlanParseError`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from functools import lru_cache
from typing import Any

import json_repair
from pydantic import ValidationError

from planwerk.core.duplicates import call_key
from planwerk.core.plan import Plan
from planwerk.core.sanitize import sanitize_value

MAX_PLAN_TEXT = 200_000
"""Longer model output is not parsed (it is a runaway generation, not a plan)."""
MAX_NESTING = 64

_FENCE = re.compile(r"```(?:json|JSON|javascript|js|python)?\s*\n?(.*?)```", re.DOTALL)
_ROLE_PREFIX = re.compile(r"^\s*(?:<\|?assistant\|?>|assistant)\s*[:\n]", re.IGNORECASE)
# "$ref:geo.lat" written without quotes, as in the notebook's recorded Llama output. Applied outside strings only:
# "Preis: $ref:user.raw" inside a string is text, not a reference.
_BARE_REF = re.compile(r"(?<=[:\[,])(\s*)\$ref:([A-Za-z_][\w\-]*(?:(?:\.[\w\-]+)|(?:\[\d+\]))*)")
_PLAN_KEYS = ("steps", "final", "ask_user")
_CALL_ALIASES = {"tool": "name", "tool_name": "name", "function": "name"}
_ARGS_ALIASES = ("args", "parameters", "params", "input", "arguments_json")
_TOOLS_ALIASES = ("calls", "tool_calls", "actions")


class PlanParseError(ValueError):
    """The model's text holds no usable plan; the message says why and what was expected."""


def parse_plan(text: str) -> Plan:
    """Find, repair and validate the plan in a model's reply."""
    if not isinstance(text, str) or not text.strip():
        raise PlanParseError('the reply is empty; expected one JSON object with "steps" and "final"')
    if len(text) > MAX_PLAN_TEXT:
        raise PlanParseError(f"the reply is {len(text)} characters long; a plan is far shorter")
    body = _ROLE_PREFIX.sub("", text.strip(), count=1)
    errors: list[str] = []
    for candidate in _candidates(body):
        try:
            data = _load(candidate)
        except PlanParseError as error:
            errors.append(str(error))
            continue
        # JSON escapes can spell lone surrogates ("\\ud800"): they could not be sent, printed or stored.
        data = sanitize_value(data)
        if isinstance(data, list) and all(isinstance(item, dict) for item in data):
            data = {"steps": data, "final": None}
        if not isinstance(data, dict) or not any(key in data for key in _PLAN_KEYS):
            continue
        return _validate(_normalise(data))
    if errors:
        raise PlanParseError(errors[0])
    raise PlanParseError(
        'no JSON object with "steps", "final" or "ask_user" found in the reply; answer with exactly one JSON object'
    )


def _candidates(body: str) -> Iterator[str]:
    """JSON-looking spans, best first: fenced blocks, then balanced top-level objects, then the whole text."""
    seen: set[str] = set()
    spans = [m.group(1).strip() for m in _FENCE.finditer(body)]
    spans += list(_balanced_objects(body))
    # Prefer spans that mention a plan key: prose may hold pseudo-JSON fragments before the real plan.
    spans.sort(key=lambda s: not any(f'"{k}"' in s or f"'{k}'" in s or f"{k}:" in s for k in _PLAN_KEYS))
    if "{" in body or "[" in body:
        spans.append(body)
    for span in spans:
        if span and span not in seen:
            seen.add(span)
            yield span


def _structure(text: str) -> Iterator[tuple[int, str]]:
    """``(index, char)`` of every character outside JSON strings (quotes and escapes understood)."""
    quote, escape = False, False
    for index, char in enumerate(text):
        if quote:
            if escape:
                escape = False
            elif char == "\\":
                escape = True
            elif char == '"':
                quote = False
        elif char == '"':
            quote = True
        else:
            yield index, char


def _segments(text: str) -> Iterator[tuple[bool, str]]:
    """``(is_string, chunk)`` pieces of ``text``: quoted strings (quotes included) and what lies between them.

    Double quotes always open a string; a single quote only where a Python-style string can start (after
    ``{``, ``[``, ``,`` or ``:``), so an apostrophe in prose does not swallow the rest of the text.
    """
    start = 0
    quote = ""
    escape = False
    last = ""  # the last non-space character outside strings
    for index, char in enumerate(text):
        if quote:
            if escape:
                escape = False
            elif char == "\\":
                escape = True
            elif char == quote:
                yield True, text[start : index + 1]
                start, quote = index + 1, ""
        elif char == '"' or (char == "'" and last in "{[,:"):
            if index > start:
                yield False, text[start:index]
            start, quote = index, char
        elif not char.isspace():
            last = char
    if start < len(text):
        yield bool(quote), text[start:]


def _rewrite_bare_refs(text: str) -> str:
    """Quote ``$ref:a.b`` written as a bare value, as ``{"$ref": "a.b"}``; text inside strings is left alone."""
    if "$ref:" not in text:
        return text
    out: list[str] = []
    for is_string, chunk in _segments(text):
        # A chunk between strings holds its own ":", "," or "[" before a bare reference (the regex's lookbehind).
        out.append(chunk if is_string else _BARE_REF.sub(lambda m: f'{m.group(1)}{{"$ref": "{m.group(2)}"}}', chunk))
    return "".join(out)


def _balanced_objects(text: str) -> Iterator[str]:
    """Top-level ``{...}`` spans, string-aware; an unclosed one is yielded to the end (it may be repaired).

    Quotes count only inside an object: prose between objects ("it's", a lone quote) must not open a string.
    """
    start = text.find("{")
    while start >= 0:
        depth, end = 0, -1
        for offset, char in _structure(text[start:]):
            if char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    end = start + offset + 1
                    break
        if end < 0:
            yield text[start:]
            return
        yield text[start:end]
        start = text.find("{", end)


def _load(candidate: str) -> Any:
    candidate = _rewrite_bare_refs(candidate)
    if _nesting(candidate) > MAX_NESTING:
        raise PlanParseError(f"the JSON is nested deeper than {MAX_NESTING} levels")
    try:
        return json.loads(candidate, object_pairs_hook=_reject_duplicates)
    except _DuplicateKey as duplicate:
        raise PlanParseError(
            f"the key {duplicate.key!r} appears twice in one object; every key may appear once "
            '(give each its own key, e.g. "from": {"$ref": "a.start"}, "to": {"$ref": "a.end"})'
        ) from None
    except (ValueError, RecursionError):
        pass
    if _is_truncated(candidate):
        salvaged = _until_repeated(candidate)
        if salvaged is None:
            salvaged = _without_cut_member(candidate)
        if salvaged is not None:
            return salvaged
        raise PlanParseError(
            f"the JSON is cut off after {len(candidate)} characters (unclosed brackets); write a shorter plan"
        )
    try:
        repaired = json_repair.loads(candidate)
    except Exception as exc:  # json-repair is best effort; its failure is just "not JSON"
        raise PlanParseError(f"the reply is not valid JSON and could not be repaired ({exc})") from None
    if repaired in ("", None):
        raise PlanParseError("the reply is not valid JSON and could not be repaired")
    return repaired


def _until_repeated(truncated: str) -> dict[str, Any] | None:
    """A plan cut off because the model wrote it again and again: its steps up to the first call that repeats an
    earlier one (same tool, same arguments), or ``None`` when nothing repeats.

    A small model that has written every call a question needs often starts over, call by call or step by step,
    until the token limit cuts it off (measured: three calls and then the same three again; one step five times).
    A repeated call is the evidence that the plan was complete before it: the same call twice never adds anything.
    A cut-off plan without a repeat may lack calls the model meant to write, so it stays an error."""
    try:
        data = json_repair.loads(truncated)
    except Exception:  # best effort, as in _load
        return None
    return _before_repeat(data)


def _without_cut_member(truncated: str) -> dict[str, Any] | None:
    """A plan cut off in a member after its calls (a ``"reason"`` written on and on): the object up to its last
    complete member, when that holds a non-empty ``steps`` list; else ``None``.

    Measured on the domain answers set (0.5B model): after a replan request the model wrote the corrected plan and
    then repeated the request's sentence in ``"reason"`` until the token limit. The calls were complete before the
    cut; a member after them is free text that a plan with calls does not need."""
    boundary = max((index for index, char, depth in _depths(truncated) if char == "," and depth == 1), default=-1)
    if boundary < 0:
        return None
    try:
        data = json.loads(truncated[:boundary] + "}")
    except ValueError:
        return None
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list) or not data["steps"]:
        return None
    return data


def _before_repeat(data: Any) -> dict[str, Any] | None:
    """``data`` (a plan's JSON) with its steps up to the first call that repeats an earlier one, or ``None`` when
    no call repeats another (or ``data`` has no list of steps)."""
    if not isinstance(data, dict) or not isinstance(data.get("steps"), list):
        return None
    seen: set[str] = set()
    kept: list[Any] = []
    for step in data["steps"]:
        key = next((k for k in ("tools", *_TOOLS_ALIASES) if isinstance(step, dict) and k in step), "tools")
        calls = step.get(key) if isinstance(step, dict) else None
        if not isinstance(calls, list):
            return None
        fresh: list[Any] = []
        for call in calls:
            same = call_key(call.get("name"), call.get("arguments")) if isinstance(call, dict) else call_key(call, None)
            if same in seen:
                if fresh:
                    kept.append({**step, key: fresh})
                return {**{k: v for k, v in data.items() if k != "steps"}, "steps": kept} if kept else None
            seen.add(same)
            fresh.append(call)
        kept.append(step)
    return None


def repeats_a_call(text: str) -> bool:
    """Whether a JSON plan being written has just finished a call (or a step) that repeats an earlier call: where
    decoding can stop, since :func:`parse_plan` keeps such a cut-off plan up to that call.

    Measured with the packaged 0.5B model on function-calling entries: once it has written the calls a question
    needs it writes them again under new ids until the token limit, 25-40 s of decoding for nothing. Only a closed
    call or step counts (a call whose arguments are still being written may yet differ), so this reads the text up
    to its last ``}`` and only when that closes a call or a step; asked after every decoded piece (a piece may
    close a call and go on: ``}},`` is one token of the 0.5B model's vocabulary)."""
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end < start:
        return False
    return _closes_a_repeat(text[start : end + 1])


@lru_cache(maxsize=8)
def _closes_a_repeat(text: str) -> bool:
    """:func:`repeats_a_call` for text that starts with ``{`` and ends with ``}``; cached, since every piece decoded
    after a ``}`` asks again about the same text up to it."""
    open_brackets: list[str] = []
    for _, char in _structure(text):
        if char in "{[":
            open_brackets.append(char)
        elif char in "}]" and open_brackets:
            open_brackets.pop()
    # {"steps": [ {"tools": [ {call} ...: a call closes back to depth 4, a step to depth 2
    if len(open_brackets) not in (2, 4):
        return False
    closing = "".join("}" if bracket == "{" else "]" for bracket in reversed(open_brackets))
    try:
        data = json.loads(text + closing)
    except (ValueError, RecursionError):
        return False
    return _before_repeat(data) is not None


class _DuplicateKey(ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKey(key)
        result[key] = value
    return result


def _nesting(text: str) -> int:
    """The deepest bracket nesting outside JSON strings (``"[[["`` inside a string is text, not depth)."""
    depth = deepest = 0
    for _, char in _structure(text):
        if char in "{[":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "}]":
            depth = max(0, depth - 1)
    return deepest


def _depths(text: str) -> Iterator[tuple[int, str, int]]:
    """``(index, char, depth)`` of every character outside JSON strings, with the bracket depth after it."""
    depth = 0
    for index, char in _structure(text):
        if char in "{[":
            depth += 1
        elif char in "}]":
            depth -= 1
        yield index, char, depth


def _is_truncated(text: str) -> bool:
    """Whether brackets are still open at the end of ``text``."""
    depths = [depth for _, _, depth in _depths(text)]
    return bool(depths) and depths[-1] > 0


def _normalise(data: dict[str, Any]) -> dict[str, Any]:
    """Fix the shape slips small models make, without guessing content."""
    steps = data.get("steps") or []
    if isinstance(steps, dict):
        steps = [steps]
    normalised_steps: list[Any] = []
    counter = 0
    for step in steps if isinstance(steps, list) else [steps]:
        if isinstance(step, dict) and "tools" not in step:
            alias = next((a for a in _TOOLS_ALIASES if a in step), None)
            if alias is not None:
                step = {**step, "tools": step[alias]}
            elif "name" in step or "tool" in step:  # a bare call where a step was expected
                step = {"description": "", "tools": [step]}
        if isinstance(step, dict):
            tools = step.get("tools") or []
            if isinstance(tools, dict):
                tools = [tools]
            calls = []
            for call in tools if isinstance(tools, list) else [tools]:
                counter += 1
                calls.append(_normalise_call(call, counter))
            step = {**step, "tools": calls}
            if not isinstance(step.get("description", ""), str):
                step["description"] = str(step["description"])
        normalised_steps.append(step)
    result = {**data, "steps": normalised_steps}
    final = result.get("final")
    if final is not None and not isinstance(final, str):
        result["final"] = json.dumps(final, ensure_ascii=False)
    if isinstance(result.get("final"), str) and result["final"].strip().lower() in ("", "null", "none"):
        result["final"] = None
    ask = result.get("ask_user")
    if ask is not None and not isinstance(ask, str):
        result["ask_user"] = str(ask)
    if isinstance(result.get("ask_user"), str) and not result["ask_user"].strip():
        result["ask_user"] = None
    return result


def _normalise_call(call: Any, counter: int) -> Any:
    if not isinstance(call, dict):
        return call
    call = dict(call)
    for alias, key in _CALL_ALIASES.items():
        if key not in call and isinstance(call.get(alias), str):
            call[key] = call.pop(alias)
    if "arguments" not in call:
        alias = next((a for a in _ARGS_ALIASES if a in call), None)
        if alias is not None:
            call["arguments"] = call.pop(alias)
    arguments = call.get("arguments")
    if isinstance(arguments, str):  # arguments given as a JSON string
        try:
            arguments = json_repair.loads(arguments)
        except Exception:
            arguments = None
        call["arguments"] = arguments if isinstance(arguments, dict) else call["arguments"]
    if arguments is None:
        call["arguments"] = {}
    if not call.get("id") and isinstance(call.get("name"), str):
        call["id"] = f"{call['name']}_{counter}"
    elif "id" in call and not isinstance(call["id"], str):
        call["id"] = str(call["id"])
    return call


def _validate(data: dict[str, Any]) -> Plan:
    try:
        return Plan.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors()[:8]:
            where = _location(item["loc"], data)
            problems.append(f"{where}: {item['msg']}")
        raise PlanParseError("the plan does not have the expected shape: " + "; ".join(problems)) from None


def _location(loc: tuple[Any, ...], data: dict[str, Any]) -> str:
    parts: list[str] = []
    for piece in loc:
        parts.append(f"[{piece}]" if isinstance(piece, int) else (f".{piece}" if parts else str(piece)))
    return "".join(parts) or "plan"
