"""Turning persona, protocol, tools, examples, context and conversation into chat messages.

The system message holds only what is static for a profile and tool set (persona, protocol, tool catalog,
examples), so a model with a prefix cache encodes it once; the date, the context and the question follow.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import replace
from datetime import date
from typing import TYPE_CHECKING, Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, trim_messages

from planwerk.core.expressions import DEFAULT_NOTATION, ExpressionNotation, output_fields, plan_expression
from planwerk.core.json_pointer import pointer_target
from planwerk.core.observed import OBSERVED_KEY
from planwerk.core.tools import ToolSpec
from planwerk.models.replay import estimate_tokens
from planwerk.prompts.examples import Example
from planwerk.prompts.texts import GERMAN, PromptTexts, texts_for
from planwerk.rag.base import Hit
from planwerk.text.dates import find_dates
from planwerk.tools.content import elide_binary

if TYPE_CHECKING:
    from planwerk.core.language import Language
    from planwerk.core.plan import PlanFormat

MAX_RESULT_CHARS_IN_PROMPT = 4_000
"""A tool result longer than this is cut in the prompt, with a note saying so."""
MAX_DESCRIPTION_CHARS = 200
"""A tool's description is cut to this many characters in the catalog (small models have small windows)."""
MAX_ARGUMENT_DESCRIPTION_CHARS = 200
"""An argument's description is cut to this many characters in the catalog, as long as a tool's: it says the value's
form (its format, its unit, the other names it takes), which the planner cannot guess. At 80 characters an
argument's second sentence was lost, there the names it accepts in another language (BENCHMARKS.md §12)."""
MAX_ENUM_VALUES = 8
"""An enum with more values shows the first ones and "…"."""
MAX_OBJECT_FIELDS = 8
"""An object argument shows this many of its fields, then "…"."""
MAX_NESTING = 2
"""Objects inside arguments are spelled out this deep (``array[{name: string, tags?: array[string]}]``); deeper
ones are just ``object``."""


def _clip(text: str, limit: int) -> str:
    """``text`` on one line, cut at a word boundary to at most ``limit`` characters (with "…" when cut)."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    cut = text[: limit - 1]
    if " " in cut:
        cut = cut.rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:.") + "…"


def _sentence(text: str) -> str:
    """``text`` ending with a full stop (or the "…" of a cut)."""
    text = text.strip()
    return text if not text or text.endswith((".", "…", "!", "?")) else text + "."


def _resolve(schema: Mapping[str, Any], root: Mapping[str, Any]) -> Mapping[str, Any]:
    """``schema`` with a local ``$ref`` (``#/$defs/Name``, as pydantic writes enums and models) followed."""
    ref = schema.get("$ref")
    if not (isinstance(ref, str) and ref.startswith("#/")):
        return schema
    target = pointer_target(root, ref)
    if target is None:  # a missing target reads as the empty schema
        return {}
    return target if isinstance(target, Mapping) else schema


def _type_of(schema: Mapping[str, Any], root: Mapping[str, Any] | None = None, depth: int = 0) -> str:
    """A compact type: ``number`` (integer or number), ``string|boolean``, ``"c"|"f"`` (enum), ``array[number]``,
    an object with its fields, optional ones marked ``?`` (``{name: string, tags?: array[string]}``)."""
    root = root if root is not None else schema
    schema = _resolve(schema, root)
    if isinstance(schema.get("enum"), list):
        values = [json.dumps(v, ensure_ascii=False) for v in schema["enum"]]
        return "|".join(values[:MAX_ENUM_VALUES]) + ("|…" if len(values) > MAX_ENUM_VALUES else "")
    if "const" in schema:
        return json.dumps(schema["const"], ensure_ascii=False)
    if "type" in schema:
        kinds = schema["type"] if isinstance(schema["type"], list) else [schema["type"]]
        items = schema.get("items")
        rendered = [
            f"array[{_type_of(items, root, depth)}]"
            if kind == "array" and isinstance(items, Mapping)
            else _object_fields(schema, root, depth)
            if kind == "object"
            else str(kind)
            for kind in kinds
        ]
        return _join_types(rendered)
    options = [
        _type_of(option, root, depth)
        for option in (*schema.get("anyOf", ()), *schema.get("oneOf", ()))
        if isinstance(option, Mapping)
    ]
    return _join_types(options)


def _object_fields(schema: Mapping[str, Any], root: Mapping[str, Any], depth: int) -> str:
    """``{a: string, b?: number}`` for an object schema with properties (a small model cannot guess the fields of an
    ``array[object]``); ``object`` without properties or deeper than :data:`MAX_NESTING`."""
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or not properties or depth >= MAX_NESTING:
        return "object"
    required = set(schema.get("required") or [])
    fields = [
        f"{name}{'' if name in required else '?'}: {_type_of(field, root, depth + 1)}"
        for name, field in list(properties.items())[:MAX_OBJECT_FIELDS]
        if isinstance(field, Mapping)
    ]
    more = ", …" if len(properties) > MAX_OBJECT_FIELDS else ""
    return "{" + ", ".join(fields) + more + "}"


def _join_types(kinds: Sequence[str]) -> str:
    """Alternatives joined with "|", without "null" and without "integer" beside "number" (which includes it)."""
    kept = [kind for kind in kinds if kind != "null" and not (kind == "integer" and "number" in kinds)]
    return "|".join(dict.fromkeys(kept)) or ("null" if "null" in kinds else "any")


def render_tool(
    spec: ToolSpec, texts: PromptTexts = GERMAN, *, all_meanings: bool = True, unknown_results: bool = True
) -> str:
    """One catalog line: name, typed arguments in the schema's order (optional ones with their default, enums as
    their values, arrays with their item type), the description, what each argument means, the output fields.

    Every argument's description is shown (``all_meanings``): a tool description that mentions an argument's name
    ("Sends a message to a recipient") does not say what the argument is ("the recipient's address"), and a planner
    without it invents the value's form. Only a description the tool's description already contains word for word
    is left out. Calculation functions (expression catalogs) pass ``all_meanings=False``: their descriptions are
    formulas over the arguments (``subtract(arg_0, arg_1) = arg_0 - arg_1``) that explain them already, and the
    expression prompt was measured that way (BENCHMARKS.md §2). A tool without an output schema says that its
    result fields are unknown (``unknown_results``), so the planner refers to the result whole instead of guessing
    a path.

    The schema's order is the argument order a tool states (``subtract(arg_0, arg_1)``); descriptions are cut so a
    tool stays one line.
    """
    root = spec.input_schema or {}
    properties = root.get("properties") or {}
    required = set(root.get("required") or [])
    description = _clip(spec.description or "", MAX_DESCRIPTION_CHARS)
    folded = " ".join(description.lower().split())
    arguments, meanings = [], []
    for name, schema in properties.items():
        text = f"{name}: {_type_of(schema, root)}"
        if name not in required:
            text += f" = {json.dumps(schema.get('default'), ensure_ascii=False)}"
        arguments.append(text)
        meaning = _clip(str(schema.get("description") or ""), MAX_ARGUMENT_DESCRIPTION_CHARS).rstrip(".")
        if not meaning or meaning.lower() in folded:
            continue
        if not all_meanings and re.search(rf"\b{re.escape(name)}\b", description):
            continue
        meanings.append(f"{name}: {meaning}")
    # One sentence per part, so the model can tell the tool's description from its arguments' meanings.
    sentences = [_sentence(description)] if description else []
    if meanings:
        sentences.append(_sentence("; ".join(meanings)))
    line = f"- {spec.name}({', '.join(arguments)})"
    if any(sentences):
        line += ": " + " ".join(s for s in sentences if s)
    output = (spec.output_schema or {}).get("properties")
    if output:
        # Fields a probing call saw (planwerk.graph.nodes.probe) are said to be seen, not declared.
        label = texts.result_fields_seen if (spec.output_schema or {}).get(OBSERVED_KEY) else texts.result_fields
        line += f" → {label}: {', '.join(output)}"
    elif unknown_results:
        line += f" → {texts.result_unknown}"
    return line


def render_catalog(specs: Mapping[str, ToolSpec], texts: PromptTexts = GERMAN) -> str:
    """The tool catalog, sorted by name so the prompt prefix is stable."""
    if not specs:
        return texts.no_tools
    return "\n".join(render_tool(specs[name], texts) for name in sorted(specs))


def render_expression_catalog(
    specs: Mapping[str, ToolSpec], texts: PromptTexts = GERMAN, notation: ExpressionNotation = DEFAULT_NOTATION
) -> str:
    """The catalog for expression plans: the operators whose tools are loaded, then the other tools as functions
    (a single output field is the call's value, so it is not listed)."""
    operators = notation.available(specs)
    functions = [name for name in sorted(specs) if name not in operators.values()]
    lines = []
    if operators:
        lines.append(f"{texts.operators_label} " + ", ".join(f"a {symbol} b" for symbol in operators))
    if functions:
        lines.append(texts.functions_label)
        for name in functions:
            spec = specs[name]
            single = len(output_fields(spec)) == 1
            shown = replace(spec, output_schema=None) if single else spec
            lines.append(render_tool(shown, texts, all_meanings=False, unknown_results=False))
    return "\n".join(lines) or texts.no_tools


def render_examples(examples: Sequence[Example], texts: PromptTexts = GERMAN) -> str:
    """Examples as question → plan, with compact JSON."""
    return "\n\n".join(
        f"{texts.question_label} {e.question}\n"
        f"{texts.plan_label} {json.dumps(e.plan, ensure_ascii=False, separators=(',', ':'))}"
        for e in examples
    )


def render_context(hits: Sequence[Hit]) -> str:
    """Retrieved chunks with their sources."""
    return "\n".join(f"[{hit['source']}] {hit['text']}" for hit in hits)


def render_date(today: date, texts: PromptTexts = GERMAN) -> str:
    """``Heute ist Sonntag, 2026-11-22.`` (``Today is Sunday, 2026-11-22.`` in English)."""
    return texts.today_line.format(weekday=texts.weekdays[today.weekday()], day=today.isoformat())


def render_dates(question: str, today: date, texts: PromptTexts = GERMAN) -> str:
    """The ISO date of every date the question names (resolved in code, not by the model), else today's date."""
    mentions = find_dates(question, today)
    if not mentions:
        return render_date(today, texts)
    # Only the named dates: with today's date beside them, the 0.5B model copies today's date (measured).
    named = "; ".join(texts.date_mention.format(text=m.text, day=m.day.isoformat()) for m in mentions)
    return texts.dates_line.format(dates=named)


def trim_history(messages: Sequence[BaseMessage], max_tokens: int) -> list[BaseMessage]:
    """The latest turns that fit ``max_tokens`` (approximate count); the checkpoint keeps everything."""
    return trim_messages(
        list(messages),
        max_tokens=max_tokens,
        token_counter=lambda batch: sum(estimate_tokens(str(m.content)) + 4 for m in batch),
        strategy="last",
        start_on="human",
        include_system=False,
        allow_partial=False,
    )


def example_turns(
    examples: Sequence[Example], texts: PromptTexts, specs: Mapping[str, ToolSpec] | None = None
) -> list[BaseMessage]:
    """Examples as earlier turns of the conversation (the question, then the expression as the assistant's reply),
    the closest example last, next to the question. Expression plans show their examples so: on 60 held-out NESTFUL
    dev questions the 0.5B model solved 5 with the examples as turns and 1 with the same examples in the system
    prompt (BENCHMARKS.md §2). An example that calls nothing has no expression and is left out."""
    turns: list[BaseMessage] = []
    for example in reversed(examples):
        try:
            expression = plan_expression(example.plan, specs)
        except ValueError:
            continue
        turns += [HumanMessage(f"{texts.question_label} {example.question}"), AIMessage(expression)]
    return turns


def build_plan_messages(
    *,
    persona: str,
    specs: Mapping[str, ToolSpec],
    examples: Sequence[Example],
    question: str,
    today: date | None,
    hits: Sequence[Hit] = (),
    history: Sequence[BaseMessage] = (),
    user_fields: Mapping[str, Any] | None = None,
    feedback: Sequence[tuple[str, str]] = (),
    texts: PromptTexts = GERMAN,
    plan_format: PlanFormat = "json",
    rounds: bool = False,
    round_results: str | None = None,
) -> list[BaseMessage]:
    """The planner's prompt. ``feedback`` holds (rejected reply, why) pairs for self-correction.

    ``rounds``: the profile plans in rounds (the protocol says how); ``round_results`` is the summary of the
    earlier rounds' results (:func:`planwerk.core.rounds.summarize_results`), shown before the question.

    ``today`` is ``None`` for profiles without dates (``Profile.uses_dates``): then neither the date rule nor a
    date line appears, and the question's dates are not resolved (numbers of a math question are no dates).
    ``texts`` gives the protocol and the labels in the profile's language; ``plan_format`` whether the planner
    writes JSON plans or expressions (then the catalog lists operators and functions, the examples expressions).
    """
    protocol = texts.plan_protocol(dates=today is not None, plan_format=plan_format, rounds=rounds)
    catalog = render_expression_catalog(specs, texts) if plan_format == "expression" else render_catalog(specs, texts)
    system = f"{persona}\n\n{protocol}\n\n{texts.tools_heading}\n{catalog}"
    shots: list[BaseMessage] = []
    if plan_format == "expression":
        shots = example_turns(examples, texts, specs)
    elif examples:
        system += f"\n\n{texts.examples_heading}\n{render_examples(examples, texts)}"
    parts = [render_dates(question, today, texts)] if today is not None else []
    if hits:
        parts.append(f"{texts.context_heading}\n{render_context(hits)}")
    extra = {k: v for k, v in (user_fields or {}).items() if k != "raw"}
    if extra:
        parts.append(f"{texts.user_fields_label} {json.dumps(extra, ensure_ascii=False)}")
    if round_results:
        parts.append(f"{texts.round_results_heading}\n{round_results}")
    parts.append(f"{texts.question_label} {question}")
    messages: list[BaseMessage] = [SystemMessage(system), *shots, *history, HumanMessage("\n\n".join(parts))]
    for reply, problems in feedback:
        messages.append(AIMessage(reply))
        messages.append(HumanMessage(problems))
    return messages


def render_result(value: Any, texts: PromptTexts = GERMAN) -> str:
    """A result as compact JSON, cut with a note when long; base64 data of images, audio and blobs is replaced by its
    size (a model reads nothing in it, and it would fill a small model's window)."""
    text = json.dumps(elide_binary(value), ensure_ascii=False, default=str, separators=(",", ":"))
    if len(text) > MAX_RESULT_CHARS_IN_PROMPT:
        return text[:MAX_RESULT_CHARS_IN_PROMPT] + texts.cut_note.format(total=len(text))
    return text


def render_calls(calls: Sequence[Mapping[str, Any]], texts: PromptTexts = GERMAN) -> str:
    """The call log for the finalizer and for the planner's feedback."""
    lines = []
    for call in calls:
        if call.get("status") == "ok":
            arguments, result = render_result(call.get("args"), texts), render_result(call["result"], texts)
            lines.append(f"- {call['id']} = {call['tool']}({arguments}) → {result}")
        else:
            lines.append(f"- {call['id']} = {call['tool']}: {texts.call_error}: {call.get('error')}")
    return "\n".join(lines)


def build_answer_messages(
    *,
    persona: str,
    question: str,
    today: date | None,
    calls: Sequence[Mapping[str, Any]],
    hits: Sequence[Hit] = (),
    history: Sequence[BaseMessage] = (),
    texts: PromptTexts = GERMAN,
    language: Language | None = None,
    result: str | None = None,
    findings: Sequence[str] | None = None,
    key: tuple[str, str] | None = None,
) -> list[BaseMessage]:
    """The finalizer's prompt: the question, what the tools returned, and the retrieved context.

    ``texts`` are the profile's (labels, instructions); ``language`` is the question's
    (:func:`planwerk.core.language.detect_language`): the prompt ends asking for an answer in it, because a small
    model answers in the prompt's language otherwise. ``today`` is ``None`` for profiles without dates. ``result``
    is the value the answer must state, for profiles whose answer is the last call's result. ``findings`` are the
    results in words, one line per call (:func:`planwerk.prompts.grounding.findings`), shown instead of the JSON
    call log when given. The instructions name
    the first chunk's source and the failed tools only when there are such (:meth:`PromptTexts.answer_request`);
    ``key`` (source, sentence) is the best chunk's key sentence when the answer must come from the context.
    """
    parts = [render_date(today, texts)] if today is not None else []
    parts.append(f"{texts.question_label} {question}")
    if findings:
        parts.append(texts.tool_results_heading + "".join(f"\n- {line}" for line in findings))
    elif calls:
        parts.append(f"{texts.tool_results_heading}\n{render_calls(calls, texts)}")
    if hits:
        parts.append(f"{texts.context_heading}\n{render_context(hits)}")
    failed = [str(call.get("tool")) for call in calls if call.get("status") not in ("ok", "skipped")]
    parts.append(
        texts.answer_request(source=hits[0]["source"] if hits else None, failed_tools=failed, result=result, key=key)
    )
    if language is not None:
        parts.append(texts_for(language).answer_language)
    return [SystemMessage(persona), *history, HumanMessage("\n\n".join(parts))]
