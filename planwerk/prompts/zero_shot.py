"""Examples built from the loaded tools themselves, for tool sets no example library covers.

A small model copies the shape of the example it is shown; without one it answered ``{"steps": [], "final": null}``
for every question on a server it had no examples for (issue 29: 32 of 32 runs on a bank-like server). So when the
profile's library has nothing for the loaded tools, planwerk writes examples from the catalog: one call per tool,
and two-call chains where a field of one tool's declared output has the name of another tool's argument. Arguments
get sample values the example's question states (an enum's first value, a schema's example, an
"e.g." value from the argument's description, else a typed sample), so each example shows values taken from the
question; a chain passes the first result on with ``{"$ref": ...}``. The question is the tool's description in a
frame of the profile's language (:class:`~planwerk.prompts.texts.PromptTexts`). Every example goes through the
plan check (:func:`planwerk.core.checking.check_plan`) like any plan, and is left out when it fails.

General by construction: nothing here knows a tool, a server or a domain. Pure: no I/O.
"""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterable, Iterator, Mapping
from typing import Any

from planwerk.core.checking import check_plan
from planwerk.core.extract import EXTRACT_TOOL, FIELD_TYPES, returns_text
from planwerk.core.json_pointer import pointer_target
from planwerk.core.plan import Plan
from planwerk.core.tools import ToolSpec
from planwerk.prompts.examples import Example, load_user_examples, rank_examples, select_examples
from planwerk.prompts.texts import PromptTexts

MAX_TOOL_EXAMPLES = 40
"""One-call examples at most (the tools sorted by name): the examples are ranked by similarity to the question
and only ``Context.plan_examples`` of them are shown, but ranking embeds each once."""
MAX_CHAINS = 12
"""Two-call chains at most."""
MAX_EXTRACT_CHAINS = 12
"""Read-extract-act chains at most (each tool that acts with each reader, in turns)."""
MAX_PARALLEL = 6
"""Examples of one tool called twice in one step, at most (the tools sorted by name)."""
MAX_SIDE_BY_SIDE = 10
"""Examples of two different tools called side by side in one step, at most (pairs in the tools' name order)."""
MAX_TASK_CHARS = 120
"""A tool description's first sentence is cut to this many characters in an example's question."""
MAX_FIELD_DEPTH = 3
"""How deep into a declared output schema a chain looks for a field named like an argument."""

_EXAMPLE_VALUE = re.compile(r"""(?:e\.g\.|for example|z\. ?B\.|such as)[,:]?\s*['"`]([^'"`]{1,40})['"`]""", re.I)
_ISO_DATE = re.compile(r"YYYY-MM-DD|ISO[ -]?8601", re.I)
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-ZÄÖÜ])")
"""A sentence ends where the next begins with a capital ("e.g. a file" goes on)."""
_FORMAT_SAMPLES = {
    "date": "2026-03-14",
    "date-time": "2026-03-14T09:30:00Z",
    "time": "09:30:00",
    "email": "ada@example.org",
    "uri": "https://example.org",
    "url": "https://example.org",
}
"""Sample strings for JSON-schema formats (RFC 2606 domains; a date in a year the examples name nowhere else)."""
_NUMBERS = (12, 3, 7, 40, 5, 9)
"""Sample numbers, one per numeric argument in order, distinct so a chain's question tells them apart."""


def tool_examples(specs: Mapping[str, ToolSpec], texts: PromptTexts) -> tuple[Example, ...]:
    """Examples for ``specs``: one call per tool, then chains; each passed the plan check."""
    names = sorted(specs)[:MAX_TOOL_EXAMPLES]
    candidates = [_one_call(specs[name], texts) for name in names]
    candidates += list(_chains(specs, texts))[:MAX_CHAINS]
    candidates += list(_extract_chains(specs, texts))[:MAX_EXTRACT_CHAINS]
    candidates += list(_parallel_calls(specs, texts))[:MAX_PARALLEL]
    candidates += list(_side_by_side(specs, texts))[:MAX_SIDE_BY_SIDE]
    return tuple(
        example
        for example in candidates
        if example is not None and not check_plan(Plan.model_validate(example.plan), specs)
    )


def task_text(spec: ToolSpec) -> str:
    """What a tool does, as the frame of a question: its description's first sentence (without the full stop),
    cut to :data:`MAX_TASK_CHARS`, or its name with spaces when it has no description."""
    text = " ".join((spec.description or "").split())
    text = _SENTENCE_END.split(text, maxsplit=1)[0].rstrip(" .:;") if text else ""
    if not text:
        text = re.sub(r"[_\-]+", " ", spec.name).strip()
    if len(text) > MAX_TASK_CHARS:
        text = text[: MAX_TASK_CHARS - 1].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"
    return text


def _one_call(spec: ToolSpec, texts: PromptTexts) -> Example | None:
    arguments = _sample_arguments(spec, skip=())
    if arguments is None:
        return None
    task = task_text(spec)
    question = _question(texts, task, arguments)
    call = {"id": _call_id(spec.name), "name": spec.name, "arguments": arguments}
    plan = {"steps": [{"description": task, "tools": [call]}], "final": None}
    return Example(question, plan)


def _parallel_calls(specs: Mapping[str, ToolSpec], texts: PromptTexts) -> Iterator[Example]:
    """One tool called twice in one step with two sets of values the question states ("…, once with city "A" and
    once with city "B""): without such an example a small model asked the same thing for two values planned one
    call (BFCL's parallel entries, issue 29). Tools whose arguments take no literal value are left out."""
    for name in sorted(specs):
        spec = specs[name]
        first = _sample_arguments(spec, skip=())
        if not first or all(isinstance(v, Mapping) for v in first.values()):
            continue
        second = _sample_arguments(spec, skip=(), start=len(first))
        if second is None or second == first:
            continue
        ident = _call_id(spec.name)
        calls = [
            {"id": f"{ident}_1", "name": spec.name, "arguments": first},
            {"id": f"{ident}_2", "name": spec.name, "arguments": second},
        ]
        task = task_text(spec)
        question = texts.zero_shot_parallel.format(frame=task, first=_values(first), second=_values(second))
        yield Example(question, {"steps": [{"description": task, "tools": calls}], "final": None})


def _side_by_side(specs: Mapping[str, ToolSpec], texts: PromptTexts) -> Iterator[Example]:
    """Two different tools called side by side in one step, each with the values its part of the question states
    ("…, with a 12; and …, with b 3."): the examples otherwise showed one tool a question, or one tool twice, and a
    small model asked for two things by two tools planned only one of them (BFCL's parallel-multiple entries,
    issue 29). The built-in ``extract`` is left out: it reads an earlier result, never a question's values."""
    names = [name for name in sorted(specs) if name != EXTRACT_TOOL]
    for index, left in enumerate(names):
        for right in names[index + 1 :]:
            first = _sample_arguments(specs[left], skip=())
            second = _sample_arguments(specs[right], skip=(), start=len(first or {}))
            if not first or not second:
                continue
            calls = [
                {"id": _call_id(left), "name": left, "arguments": first},
                {"id": _call_id(right), "name": right, "arguments": second},
            ]
            parts = [_question(texts, task_text(specs[n]), a).rstrip(".") for n, a in ((left, first), (right, second))]
            question = texts.zero_shot_both.format(first=parts[0], second=_lower_first(parts[1]))
            task = f"{task_text(specs[left])}; {_lower_first(task_text(specs[right]))}"
            yield Example(question, {"steps": [{"description": task, "tools": calls}], "final": None})


def _chains(specs: Mapping[str, ToolSpec], texts: PromptTexts) -> Iterator[Example]:
    """``first`` then ``second`` where one field of ``first``'s declared output is named like one required argument
    of ``second`` (case, ``_`` and ``-`` aside), which takes the field by ``$ref``; ``first`` does not act (a read
    that feeds a later call). A second tool taking several fields at once is copying a record, which teaches
    nothing about choosing the value that matters, so such pairs are left out."""
    for first_name in sorted(specs):
        first = specs[first_name]
        if first.destructive:
            continue
        fields: dict[str, str] = {}
        for key, path in _output_paths(first.output_schema or {}):
            fields.setdefault(key, path)  # the nearest field of a name
        if not fields:
            continue
        for second_name in sorted(specs):
            second = specs[second_name]
            if second_name == first_name:
                continue
            schema = second.input_schema or {}
            properties = schema.get("properties") or {}
            required = [name for name in schema.get("required") or [] if name in properties]
            linked = {name: fields[_key(name)] for name in required if _key(name) in fields}
            first_args = _sample_arguments(first, skip=())
            if len(linked) != 1 or first_args is None:
                continue
            rest = _sample_arguments(second, skip=tuple(linked), start=len(first_args))
            if rest is None:
                continue
            first_id, second_id = _call_id(first.name), _call_id(second.name)
            second_args = {**rest, **{name: {"$ref": f"{first_id}.{path}"} for name, path in linked.items()}}
            second_args = {name: second_args[name] for name in properties if name in second_args}
            first_task, second_task = task_text(first), task_text(second)
            frame = texts.zero_shot_chain.format(first=first_task, second=_lower_first(second_task))
            question = _question(texts, frame, {**first_args, **rest})
            first_call = {"id": first_id, "name": first.name, "arguments": first_args}
            second_call = {"id": second_id, "name": second.name, "arguments": second_args}
            plan = {
                "steps": [
                    {"description": first_task, "tools": [first_call]},
                    {"description": second_task, "tools": [second_call]},
                ],
                "final": None,
            }
            yield Example(question, plan)
            break  # one chain per first tool: variety over the whole catalog


def _extract_chains(specs: Mapping[str, ToolSpec], texts: PromptTexts) -> Iterator[Example]:
    """Where the built-in ``extract`` step is offered: a tool that reads and returns text (no output schema), then
    ``extract`` of the values a tool that acts needs, then that tool taking them by ``$ref`` (read-then-act without
    the planner reading the text)."""
    if EXTRACT_TOOL not in specs:
        return
    readers = [s for n, s in sorted(specs.items()) if n != EXTRACT_TOOL and returns_text(s)]
    actors = [s for n, s in sorted(specs.items()) if n != EXTRACT_TOOL and s.acts]
    if not readers:
        return
    # Every tool that acts once with a reader first, then with the other readers in turn: the question's
    # similarity picks the pair to show, so a pair that is never built is never shown (measured: "Pay the bill in
    # the file …" was shown the file reader with a tool that updates a schedule, never with the one that pays).
    pairs = [
        (actor, readers[(index + turn) % len(readers)])
        for turn in range(len(readers))
        for index, actor in enumerate(actors)
    ]
    for actor, reader in pairs:
        schema = actor.input_schema or {}
        properties = schema.get("properties") or {}
        required = [name for name in schema.get("required") or [] if name in properties] or list(properties)
        wanted = {
            name: kind
            for name in required[:3]
            if (kind := _resolve(properties[name], schema).get("type")) in FIELD_TYPES
        }
        read_args = _sample_arguments(reader, skip=())
        if not wanted or read_args is None:
            continue
        rest = _sample_arguments(actor, skip=tuple(wanted), start=len(read_args))
        if rest is None:
            continue
        read_id, act_id = _call_id(reader.name), _call_id(actor.name)
        act_args = {**rest, **{name: {"$ref": f"values.{name}"} for name in wanted}}
        calls = [
            {"id": read_id, "name": reader.name, "arguments": read_args},
            {"id": "values", "name": EXTRACT_TOOL, "arguments": {"text": {"$ref": read_id}, "schema": wanted}},
            {"id": act_id, "name": actor.name, "arguments": {n: act_args[n] for n in properties if n in act_args}},
        ]
        frame = texts.zero_shot_chain.format(first=task_text(reader), second=_lower_first(task_text(actor)))
        steps = [{"description": task_text(specs[c["name"]]), "tools": [c]} for c in calls]
        yield Example(_question(texts, frame, {**read_args, **rest}), {"steps": steps, "final": None})


def _question(texts: PromptTexts, frame: str, arguments: Mapping[str, Any]) -> str:
    values = _values(arguments)
    return texts.zero_shot_with_values.format(frame=frame, values=values) if values else f"{frame}."


def copied_placeholders(plan: Plan, question: str) -> list[tuple[str, str, str]]:
    """``(call id, argument, value)`` for each string argument (or string in a list argument) that is the typed
    sample :func:`sample_value` writes for an argument of that name ("cell shape A" for ``cell_shape``) and that
    ``question`` does not contain: a value copied from an example built from the tools, not taken from the
    question (seen on a function-calling leaderboard's irrelevance entries, issue 29)."""
    asked = question.casefold()
    found = []
    for _, call in plan.calls():
        for name, value in call.arguments.items():
            for item in value if isinstance(value, list) else [value]:
                if isinstance(item, str) and _is_sample(name, item) and item.casefold() not in asked:
                    found.append((call.id, name, item))
    return found


def copied_sample_numbers(plan: Plan, question: str) -> list[tuple[str, str, float]]:
    """``(call id, argument, value)`` for each number argument that is one of the sample numbers the examples built
    from the tools show (:data:`_NUMBERS`) and that ``question`` does not contain: a value copied from such an
    example (seen: ``weight 12, height 3`` planned for a question about a triangle's base 10 and height 5). Only
    meaningful where the examples were built from the tools (:func:`uses_built_examples`)."""
    stated = _stated_numbers(question)
    found = []
    for _, call in plan.calls():
        for name, value in call.arguments.items():
            for item in value if isinstance(value, list) else [value]:
                number = isinstance(item, int | float) and not isinstance(item, bool)
                if number and item in _NUMBERS and float(item) not in stated:
                    found.append((call.id, name, item))
    return found


def copied_sample_calls(plan: Plan, question: str) -> list[tuple[str, str, str]]:
    """``(call id, arguments, values)`` for each call with two or more number arguments that are all sample numbers
    of the examples built from the tools (:func:`copied_sample_numbers`) and none stated in ``question``: a call
    copied whole from an example, not one whose numbers were chosen (BFCL irrelevance_150: ``red 12, green 3, blue
    7`` and ``red 40, green 5, blue 9``, the samples in order, for a question that gave no colour). A single number
    ("steps 3") may be a choice, so it is not judged here."""
    copied: dict[str, list[tuple[str, float]]] = {}
    for call_id, name, value in copied_sample_numbers(plan, question):
        copied.setdefault(call_id, []).append((name, value))
    found = []
    for _, call in plan.calls():
        numbers = [v for v in call.arguments.values() if isinstance(v, int | float) and not isinstance(v, bool)]
        if len(numbers) >= 2 and len(copied.get(call.id, [])) == len(numbers):
            names = ", ".join(name for name, _ in copied[call.id])
            values = ", ".join(f"{value:g}" for _, value in copied[call.id])
            found.append((call.id, names, values))
    return found


def copied_example_calls(plan: Plan, question: str, examples: Iterable[Example]) -> tuple[str, ...]:
    """Ids of the calls ``plan`` copied whole from an example of two or more calls, beside calls of its own: every
    call of such an example is in the plan with the example's tool and arguments, one of their values is not in
    ``question``, and the plan has other calls too. Seen with the 0.5B model (BENCHMARKS.md §13, session 9): its
    own call of a tool, then the built example's two calls of that tool with the sample numbers, one of which the
    question does not state. A plan that is nothing but the copy is left to :func:`copied_sample_calls` and
    :func:`copied_placeholders`, which send it back; nothing here knows a tool."""
    stated = _stated_numbers(question)
    asked = question.casefold()
    planned = [(call.id, call.name, call.arguments) for _, call in plan.calls()]
    copied: list[str] = []
    for example in examples:
        calls = [(call.name, call.arguments) for _, call in Plan.model_validate(example.plan).calls()]
        if len(calls) < 2:
            continue
        matches = [next((i for i, n, a in planned if (n, a) == call and i not in copied), None) for call in calls]
        if None in matches or all(_is_stated(v, stated, asked) for _, a in calls for v in a.values()):
            continue
        copied += [m for m in matches if m is not None]
    return tuple(copied) if 0 < len(copied) < len(planned) else ()


def _stated_numbers(question: str) -> set[float]:
    return {float(n) for n in re.findall(r"(?<![\w.])\d+(?:\.\d+)?", question.replace(",", ""))}


def _is_stated(value: Any, numbers: set[float], asked: str) -> bool:
    """Whether ``question`` (its numbers and casefolded text given) states ``value``; a truth value or a reference
    is stated by no question, so it counts as stated (it tells nothing about where a call came from)."""
    if isinstance(value, list):
        return all(_is_stated(item, numbers, asked) for item in value)
    if isinstance(value, bool | Mapping):
        return True
    if isinstance(value, int | float):
        return float(value) in numbers
    return str(value).casefold() in asked


def uses_built_examples(tool_names: Collection[str], library_examples: Iterable[Example]) -> bool:
    """Whether the planner is shown examples built from the tools: no example of the library (or saved) calls
    only loaded tools (the condition :func:`examples_for_question` decides by)."""
    loaded = set(tool_names)
    return bool(loaded) and not any(e.tools and e.tools <= loaded for e in (*library_examples, *load_user_examples()))


def _is_sample(name: str, value: str) -> bool:
    return re.fullmatch(rf"{re.escape(name.replace('_', ' '))} [A-Z]", value) is not None


def _values(arguments: Mapping[str, Any]) -> str:
    """The literal arguments as "name value" pairs: argument names and JSON values read the same in every
    language."""
    literal = {name: value for name, value in arguments.items() if not isinstance(value, Mapping)}
    return ", ".join(f"{name} {json.dumps(value, ensure_ascii=False)}" for name, value in literal.items())


def _sample_arguments(spec: ToolSpec, *, skip: tuple[str, ...], start: int = 0) -> dict[str, Any] | None:
    """A sample value for every required argument not in ``skip``; a tool with no required argument gets its
    optional ones that have no default of their own (an update whose fields are all optional would otherwise be
    shown called with nothing). ``None`` when one has no value that can be written (an object without
    properties, say)."""
    root = spec.input_schema or {}
    properties = root.get("properties") or {}
    names = [name for name in root.get("required") or [] if name in properties]
    if not names:
        names = [name for name, schema in properties.items() if _resolve(schema, root).get("default") is None]
    arguments: dict[str, Any] = {}
    for position, name in enumerate((n for n in names if n not in skip), start=start):
        value = sample_value(properties[name], root, name, position)
        if value is None:
            return None
        arguments[name] = value
    return arguments


def sample_value(schema: Mapping[str, Any], root: Mapping[str, Any], name: str, position: int = 0) -> Any:
    """A value that fits ``schema``, for an example: its ``examples``/``const``/first ``enum`` value,
    an "e.g." value from its description, a format's sample, else a typed sample (``None``: none can be written).
    """
    schema = _resolve(schema, root)
    for key in ("examples",):
        if isinstance(schema.get(key), list) and schema[key]:
            return schema[key][0]
    if "const" in schema:
        return schema["const"]
    if isinstance(schema.get("enum"), list) and schema["enum"]:
        return schema["enum"][0]
    options = [o for o in (*schema.get("anyOf", ()), *schema.get("oneOf", ())) if isinstance(o, Mapping)]
    kinds = schema.get("type")
    kinds = kinds if isinstance(kinds, list) else [kinds] if kinds else []
    if not kinds and options:
        usable = [o for o in options if _resolve(o, root).get("type") != "null"]
        return sample_value(usable[0], root, name, position) if usable else None
    if "string" in kinds:
        if match := _EXAMPLE_VALUE.search(str(schema.get("description") or "")):
            return match.group(1)
        if fmt := _FORMAT_SAMPLES.get(str(schema.get("format") or "")):
            return fmt
        if _ISO_DATE.search(str(schema.get("description") or "")):
            return _FORMAT_SAMPLES["date"]
        return f"{name.replace('_', ' ')} {chr(ord('A') + position % 26)}"
    if "integer" in kinds or "number" in kinds:
        return _NUMBERS[position % len(_NUMBERS)]
    if "boolean" in kinds:
        return True
    if "array" in kinds:
        items = schema.get("items")
        item = sample_value(items, root, name, position) if isinstance(items, Mapping) else None
        return [item] if item is not None else None
    if "object" in kinds:
        properties = schema.get("properties") or {}
        required = [key for key in schema.get("required") or [] if key in properties]
        if not properties:
            return None
        values = {key: sample_value(properties[key], root, key, position) for key in required}
        return None if any(v is None for v in values.values()) else values
    return None


def _output_paths(
    schema: Mapping[str, Any], root: Mapping[str, Any] | None = None, prefix: str = "", depth: int = 0
) -> Iterator[tuple[str, str]]:
    """``(folded field name, path)`` for each field of a declared output, walking objects and the first item of
    arrays (``transactions.0.id``), nearest fields first."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    if depth >= MAX_FIELD_DEPTH:
        return
    properties = schema.get("properties")
    if isinstance(properties, Mapping):
        for name in properties:
            yield _key(name), f"{prefix}{name}"
        for name, field in properties.items():
            if isinstance(field, Mapping):
                yield from _output_paths(field, root, f"{prefix}{name}.", depth + 1)
    elif schema.get("type") == "array" and isinstance(schema.get("items"), Mapping):
        yield from _output_paths(schema["items"], root, f"{prefix}0.", depth + 1)


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    ref = schema.get("$ref")
    if not (isinstance(ref, str) and ref.startswith("#/")):
        return schema
    target = pointer_target(root, ref)
    if target is None:  # a missing target reads as the empty schema
        return {}
    return target if isinstance(target, Mapping) else schema


def _key(name: str) -> str:
    return re.sub(r"[_\-\s]", "", name).lower()


def _call_id(name: str) -> str:
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name).strip("_") or "call"
    return ident if not ident[0].isdigit() else f"t_{ident}"


def _lower_first(text: str) -> str:
    return text[:1].lower() + text[1:] if text[1:2].islower() else text


def examples_for_question(
    question: str,
    specs: Mapping[str, ToolSpec],
    texts: PromptTexts,
    library_examples: tuple[Example, ...],
    *,
    k: int,
    retry: int = 0,
    **ranking: Any,
) -> list[Example]:
    """The ``k`` examples for ``question``: the library's (a profile's own file among them) when any of its
    examples with calls fits the loaded tools, else examples built from the tools (:func:`tool_examples`), ranked
    the same way. ``ranking`` goes to :func:`planwerk.prompts.examples.select_examples` (``gazetteer``, …)."""
    if k <= 0:
        return []
    fitting = [e for e in rank_examples(question, specs, library_examples, **ranking) if e.tools]
    if fitting or not specs:
        return select_examples(question, specs, k, library_examples, retry=retry, **ranking)
    built = tool_examples(specs, texts)
    return select_examples(question, specs, k, built, retry=retry, include_saved=False, **ranking)
