"""How a plan fits its question, by word overlap: an empty plan is a decision, and a plan with calls is asked once
about what the question names and the plan leaves out.

A small model shown only the empty plan as a complete JSON object writes it for every question on tools it was not
tuned for (issue 29: 70 of 70 function-calling questions planned nothing). So a plan without calls says why
(``Plan.reason``, or its ``final``), and when tools whose names or descriptions share words with the question are
loaded, the check questions it once, naming those tools (:func:`fitting_tools`). A plan with calls is asked once
about a tool whose name the question spells out but no call uses (:func:`unplanned_named_tools`), an optional
argument the question names that a call leaves out (:func:`unfilled_named_arguments`), or a tool that fits the
question clearly better than its one tool (:func:`better_fitting_tool`); each question shows the plan completed
with slots for the values. A plan none of whose tools shares a word with the question and none of whose values the
question states is asked once whether a tool fits at all (:func:`unanchored_values`). Word overlap, not a model:
it is cheap, the same for every tool set, and only decides whether to ask once more. Pure: no I/O
(the analyzer is passed in).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from planwerk.core.language import detect_language
from planwerk.core.refs import ref_text
from planwerk.core.tools import ToolSpec

MAX_NAMED_TOOLS = 5
"""The feedback names at most this many fitting tools (the most overlapping first)."""

Analyze = Callable[[str], Sequence[str]]
"""Text to comparable terms (lower-cased, stop words out, stemmed): :func:`planwerk.rag.lexical.analyze`."""


def tool_terms(spec: ToolSpec, analyze: Analyze) -> set[str]:
    """The terms of a tool's name (``get_balance`` → get, balance) and description."""
    return name_terms(spec.name, analyze) | set(analyze(spec.description or ""))


def fitting_tools(question: str, specs: Mapping[str, ToolSpec], analyze: Analyze) -> list[str]:
    """The loaded tools that share a term with ``question``, the most shared first (ties by name), at most
    :data:`MAX_NAMED_TOOLS`; empty when none does."""
    asked = set(analyze(question))
    if not asked:
        return []
    shared = {name: len(asked & tool_terms(spec, analyze)) for name, spec in specs.items()}
    ranked = sorted((name for name, count in shared.items() if count), key=lambda name: (-shared[name], name))
    return ranked[:MAX_NAMED_TOOLS]


MIN_OWN_NAME_TERMS = 2
"""A tool the plan leaves out is asked about only when at least this many terms of its name are its own (no planned
tool's name has them), every one of them in the question: one shared word is no request."""


def name_terms(name: str, analyze: Analyze) -> set[str]:
    """The terms of a tool's name alone (``compare_ppg`` → compar, ppg)."""
    return set(analyze(re.sub(r"[_\-.]+|(?<=[a-z])(?=[A-Z])", " ", name)))


def unplanned_named_tools(
    question: str, planned: Collection[str], specs: Mapping[str, ToolSpec], analyze: Analyze
) -> list[str]:
    """The loaded tools no call of a plan uses whose name the question spells out: each has at least
    :data:`MIN_OWN_NAME_TERMS` terms in its name that no planned tool's name has, and the question has every one
    of them ("... Also find the product of the first five prime numbers." for ``product_of_primes`` beside a
    planned ``sum_of_multiples``), sorted by name; empty when the plan calls nothing.

    Measured on a function-calling benchmark's parallel-multiple entries (0.5B model): a question that asks for
    two tools' results was planned with the first tool only. Names, not descriptions: a description shares common
    words with most questions, a name states what the tool is for."""
    if not planned:
        return []
    asked = set(analyze(question))
    taken: set[str] = set().union(*(name_terms(name, analyze) for name in planned))
    found = []
    for name in sorted(specs):
        own = name_terms(name, analyze) - taken
        if name not in planned and len(own) >= MIN_OWN_NAME_TERMS and own <= asked:
            found.append(name)
    return found


MIN_JUDGED_WORDS = 3
"""A question of fewer words says too little to judge whether a tool fits ("Zähle.", "Unicode?"): such a terse
request leans on what the person means, not on its words."""
MAX_UNANCHORED_SHOWN = 6
"""The question about an unanchored plan names at most this many of its values."""

_NUMBER = re.compile(r"-?\d+(?:[.,]\d+)?")


def unanchored_values(
    question: str,
    said: Sequence[str],
    calls: Sequence[tuple[str, Mapping[str, Any]]],
    specs: Mapping[str, ToolSpec],
    analyze: Analyze,
) -> list[str]:
    """The literal values of planned ``calls`` (tool name, arguments), at most :data:`MAX_UNANCHORED_SHOWN`, when
    the plan is anchored in nothing the person said: no planned tool shares a term (of its name and description)
    with ``question``, and no literal value is stated by the question or by ``said`` (the conversation, answers
    the person gave): neither its terms nor, for numbers, the number; ``[]`` otherwise, and when the calls hold no
    literal value or the question has fewer than :data:`MIN_JUDGED_WORDS` words. A question written in another
    language than the planned tools' descriptions is judged by its numbers alone: word overlap across languages says
    nothing (a German question shares no word with the English name and description of the tool that answers it),
    a number is written the same in both. Measured on the travel set (0.5B model, BENCHMARKS.md §12): a German
    request for no tool at all was planned as an addition of two numbers it did not state.

    Measured on a function-calling benchmark's irrelevance entries (0.5B model, no example for the tools): for
    "berapa satu tambah satu" the model looked up a contact named in the tool's description, for "Help work in
    place of Opera" it viewed the profile with id 1; nothing the question says is in such a plan."""
    planned = [specs[name] for name, _ in calls if name in specs]
    if not planned or len(planned) != len(calls) or len(re.findall(r"\w+", question)) < MIN_JUDGED_WORDS:
        return []
    tools_language = detect_language(" ".join(spec.description or "" for spec in planned), "en")
    same_language = detect_language(question, tools_language) == tools_language
    asked = set(analyze(question))
    if same_language and any(asked & tool_terms(spec, analyze) for spec in planned):
        return []
    values = [value for _, arguments in calls for value in _literals(arguments)]
    if not values or not (same_language or all(not isinstance(value, str) for value in values)):
        return []
    spoken = " ".join([question, *said])
    terms = asked | set(analyze(spoken))
    numbers = {float(n.replace(",", ".")) for n in _NUMBER.findall(spoken)}
    lowered = spoken.casefold()
    for value in values:
        if isinstance(value, str):
            if value.strip().casefold() in lowered or terms & set(analyze(value)):
                return []
        elif float(value) in numbers:
            return []
    return [json.dumps(value, ensure_ascii=False) for value in values[:MAX_UNANCHORED_SHOWN]]


def _literals(value: Any) -> list[str | int | float]:
    """The literal strings (not blank) and numbers of an argument value, references left out."""
    if ref_text(value) is not None:
        return []
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, int | float) and not isinstance(value, bool):
        return [value]
    items = value.values() if isinstance(value, Mapping) else value if isinstance(value, list | tuple) else ()
    return [literal for item in items for literal in _literals(item)]


MAX_SKELETON_ARGUMENTS = 8
"""The skeleton call shows at most this many arguments (the required ones, else the first optional ones)."""


def call_skeleton(spec: ToolSpec, slot: str, description: str = "") -> str:
    """A plan calling ``spec`` once, as JSON text with a slot for each argument's value instead of a value:
    ``slot`` takes ``{type}`` (``"<integer from the question>"``) and stands unquoted, so the text is no plan
    that could be copied and run as it is. The arguments are the required ones, or, where none is required, the
    optional ones. Shown when an empty plan is questioned: a small model that refused although the check named
    the fitting tools kept refusing; a call to complete is a smaller step than a plan to write."""
    return calls_skeleton({"steps": [{"description": description, "tools": []}], "final": None}, [spec], slot)


def calls_skeleton(plan: Mapping[str, Any], specs: Sequence[ToolSpec], slot: str) -> str:
    """``plan`` (as data, with at least one step) with a call of each of ``specs`` added to its first step, as
    JSON text with slots for the added calls' values (see :func:`call_skeleton`)."""
    slots: dict[str, str] = {}
    added = []
    for spec in specs:
        properties = (spec.input_schema or {}).get("properties") or {}
        names = [name for name in (spec.input_schema or {}).get("required") or [] if name in properties]
        marks = _marks(names or list(properties), properties, slot, slots)
        added.append({"id": re.sub(r"[^A-Za-z0-9_]", "_", spec.name), "name": spec.name, "arguments": marks})
    steps = [dict(step) for step in plan["steps"]]
    steps[0]["tools"] = [*steps[0].get("tools", []), *added]
    return _with_slots({"steps": steps, "final": plan.get("final")}, slots)


MIN_BETTER_FIT_LEAD = 2
"""A loaded tool fits a question better than a plan's one tool when it shares at least this many more terms with it."""


def better_fitting_tool(
    question: str, planned: Collection[str], specs: Mapping[str, ToolSpec], analyze: Analyze
) -> str | None:
    """The loaded tool that shares at least :data:`MIN_BETTER_FIT_LEAD` more terms (of its name and description)
    with ``question`` than the one tool a plan calls, and more than any other tool; ``None`` when the plan calls no
    tool or several (a question may need two tools, see :func:`unplanned_named_tools`), or when no tool leads so.

    Measured on a function-calling benchmark's multiple entries (0.5B model): "the year over year growth rate for
    company 'Tech Inc' with revenues of $1M in 2019 and $1.2M in 2020" was planned with a return-on-assets tool
    beside ``calculate_YOY_growth_rate``, which shares three terms with the question against one."""
    if len(planned) != 1:
        return None
    asked = set(analyze(question))
    shared = {name: len(asked & tool_terms(spec, analyze)) for name, spec in specs.items()}
    (own,) = planned
    ranked = sorted((name for name in shared if name != own), key=lambda name: (-shared[name], name))
    if not ranked or own not in shared:
        return None
    best, *rest = ranked
    leads = shared[best] - shared[own] >= MIN_BETTER_FIT_LEAD
    return best if leads and (not rest or shared[best] > shared[rest[0]]) else None


def replaced_skeleton(plan: Mapping[str, Any], old: str, spec: ToolSpec, slot: str) -> str:
    """``plan`` (as data) with every call of the tool ``old`` replaced by one call of ``spec`` with slots for its
    values, as JSON text (see :func:`call_skeleton`)."""
    slots: dict[str, str] = {}
    properties = (spec.input_schema or {}).get("properties") or {}
    names = [name for name in (spec.input_schema or {}).get("required") or [] if name in properties]
    call = {"id": re.sub(r"[^A-Za-z0-9_]", "_", spec.name), "name": spec.name, "arguments": {}}
    steps, placed = [], False
    for step in plan["steps"]:
        calls = []
        for planned in step.get("tools") or []:
            if planned.get("name") != old:
                calls.append(planned)
            elif not placed:
                calls.append({**call, "arguments": _marks(names or list(properties), properties, slot, slots)})
                placed = True
        steps.append({**step, "tools": calls})
    return _with_slots({"steps": steps, "final": plan.get("final")}, slots)


def unfilled_named_arguments(
    plan: Mapping[str, Any], question: str, specs: Mapping[str, ToolSpec], analyze: Analyze, fixed: Collection[str] = ()
) -> dict[str, list[str]]:
    """Per call id of ``plan`` (as data): the optional arguments of its tool that the call leaves out and whose
    name the question spells out, every term of it ("directed by Quentin Tarantino" for ``directed_by``, "black as
    their special request" for ``special``); calls of the tools in ``fixed`` (tools that change something) are
    left alone. Measured on a function-calling benchmark's live entries (0.5B model): a call with the required
    arguments only, or none, where the question gave the optional ones."""
    asked = set(analyze(question))
    unfilled: dict[str, list[str]] = {}
    for step in plan.get("steps") or []:
        for call in step.get("tools") or []:
            spec = specs.get(call.get("name", ""))
            if spec is None or spec.name in fixed:
                continue
            schema = spec.input_schema or {}
            required = set(schema.get("required") or [])
            given = call.get("arguments") or {}
            open_names = [name for name in schema.get("properties") or {} if name not in required | set(given)]
            named = [name for name in open_names if (terms := name_terms(name, analyze)) and terms <= asked]
            if named:
                unfilled[str(call.get("id"))] = named
    return unfilled


def arguments_skeleton(
    plan: Mapping[str, Any], unfilled: Mapping[str, Sequence[str]], specs: Mapping[str, ToolSpec], slot: str
) -> str:
    """``plan`` (as data) with a slot for each argument of ``unfilled`` (per call id) in its call, as JSON text
    (see :func:`call_skeleton`)."""
    slots: dict[str, str] = {}
    steps = []
    for step in plan["steps"]:
        calls = []
        for call in step.get("tools") or []:
            if names := unfilled.get(str(call.get("id"))):
                properties = (specs[call["name"]].input_schema or {}).get("properties") or {}
                call = {**call, "arguments": {**call.get("arguments", {}), **_marks(names, properties, slot, slots)}}
            calls.append(call)
        steps.append({**step, "tools": calls})
    return _with_slots({"steps": steps, "final": plan.get("final")}, slots)


def _marks(names: Sequence[str], properties: Mapping[str, Any], slot: str, slots: dict[str, str]) -> dict[str, str]:
    """A mark per argument (at most :data:`MAX_SKELETON_ARGUMENTS`), its slot text recorded in ``slots``."""
    marks = {}
    for name in names[:MAX_SKELETON_ARGUMENTS]:
        marks[name] = mark = f"\x00{len(slots)}\x00"
        slots[json.dumps(mark)] = slot.format(type=_type_name(properties.get(name)))
    return marks


MAX_SHOWN_DESCRIPTION = 80
"""Characters of a step's description a plan shown back to the planner keeps. The 0.5B model had copied a whole
question into a description; shown back whole, its rewrite of three calls ran past the reply's token limit, and with
the description clipped the rewrite finished (one entry of a function-calling benchmark, BENCHMARKS.md §13). A
description is free text; the calls are what the repair is about."""


def shown_plan(plan: Mapping[str, Any]) -> str:
    """``plan`` (as data) as the JSON text a repair request shows, each step's description clipped to
    :data:`MAX_SHOWN_DESCRIPTION` characters (a description is free text; the calls are what is shown)."""
    steps = []
    for step in plan.get("steps") or []:
        description = step.get("description")
        if isinstance(description, str) and len(description) > MAX_SHOWN_DESCRIPTION:
            step = {**step, "description": description[: MAX_SHOWN_DESCRIPTION - 1].rstrip() + "…"}
        steps.append(step)
    return json.dumps({**plan, "steps": steps}, ensure_ascii=False)


def _with_slots(plan: Mapping[str, Any], slots: Mapping[str, str]) -> str:
    text = shown_plan(plan)
    for mark, shown in slots.items():
        text = text.replace(mark, shown)
    return text


def _type_name(schema: object) -> str:
    """An argument's JSON type for a slot ("integer", "string or null", "value" when it declares none)."""
    kinds = schema.get("type") if isinstance(schema, Mapping) else None
    if isinstance(kinds, list):
        return " or ".join(str(kind) for kind in kinds) or "value"
    return str(kinds) if kinds else "value"
