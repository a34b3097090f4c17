"""An empty plan is a decision: which loaded tools fit a question that a plan answers without calling any.

A small model shown only the empty plan as a complete JSON object writes it for every question on tools it was not
tuned for (issue 29: 70 of 70 function-calling questions planned nothing). So a plan without calls says why
(``Plan.reason``, or its ``final``), and when tools whose names or descriptions share words with the question are
loaded, the check questions it once, naming those tools. Word overlap, not a model: it is cheap, the same for every
tool set, and only decides whether to ask once more. Pure: no I/O (the analyzer is passed in).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence

from planwerk.core.tools import ToolSpec

MAX_NAMED_TOOLS = 5
"""The feedback names at most this many fitting tools (the most overlapping first)."""

Analyze = Callable[[str], Sequence[str]]
"""Text to comparable terms (lower-cased, stop words out, stemmed): :func:`planwerk.rag.lexical.analyze`."""


def tool_terms(spec: ToolSpec, analyze: Analyze) -> set[str]:
    """The terms of a tool's name (``get_balance`` → get, balance) and description."""
    name = re.sub(r"[_\-.]+|(?<=[a-z])(?=[A-Z])", " ", spec.name)
    return set(analyze(f"{name} {spec.description or ''}"))


def fitting_tools(question: str, specs: Mapping[str, ToolSpec], analyze: Analyze) -> list[str]:
    """The loaded tools that share a term with ``question``, the most shared first (ties by name), at most
    :data:`MAX_NAMED_TOOLS`; empty when none does."""
    asked = set(analyze(question))
    if not asked:
        return []
    shared = {name: len(asked & tool_terms(spec, analyze)) for name, spec in specs.items()}
    ranked = sorted((name for name, count in shared.items() if count), key=lambda name: (-shared[name], name))
    return ranked[:MAX_NAMED_TOOLS]


MAX_SKELETON_ARGUMENTS = 8
"""The skeleton call shows at most this many arguments (the required ones, else the first optional ones)."""


def call_skeleton(spec: ToolSpec, slot: str, description: str = "") -> str:
    """A plan calling ``spec`` once, as JSON text with a slot for each argument's value instead of a value:
    ``slot`` takes ``{type}`` (``"<integer from the question>"``) and stands unquoted, so the text is no plan
    that could be copied and run as it is. The arguments are the required ones, or, where none is required, the
    optional ones. Shown when an empty plan is questioned: a small model that refused although the check named
    the fitting tools kept refusing; a call to complete is a smaller step than a plan to write."""
    schema = spec.input_schema or {}
    properties = schema.get("properties") or {}
    names = [name for name in schema.get("required") or [] if name in properties] or list(properties)
    marks = {name: f"\x00{index}\x00" for index, name in enumerate(names[:MAX_SKELETON_ARGUMENTS])}
    call = {"id": re.sub(r"[^A-Za-z0-9_]", "_", spec.name), "name": spec.name, "arguments": marks}
    plan = {"steps": [{"description": description, "tools": [call]}], "final": None}
    text = json.dumps(plan, ensure_ascii=False)
    for name, mark in marks.items():
        text = text.replace(json.dumps(mark), slot.format(type=_type_name(properties[name])))
    return text


def _type_name(schema: object) -> str:
    """An argument's JSON type for a slot ("integer", "string or null", "value" when it declares none)."""
    kinds = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kinds, list):
        return " or ".join(str(kind) for kind in kinds) or "value"
    return str(kinds) if kinds else "value"
