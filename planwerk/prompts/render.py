"""Turning persona, protocol, tools, examples, context and conversation into chat messages.

The system message holds only what is static for a profile and tool set (persona, protocol, tool catalog,
examples), so a model with a prefix cache encodes it once; the date, the context and the question follow.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import date
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, trim_messages

from planwerk.core.dates import find_dates
from planwerk.models.replay import estimate_tokens
from planwerk.prompts.examples import Example
from planwerk.prompts.protocol import ANSWER_INSTRUCTIONS, PLAN_PROTOCOL
from planwerk.rag.base import Hit
from planwerk.tools.base import ToolSpec

MAX_RESULT_CHARS_IN_PROMPT = 4_000
"""A tool result longer than this is cut in the prompt, with a note saying so."""
WEEKDAYS = ("Montag", "Dienstag", "Mittwoch", "Donnerstag", "Freitag", "Samstag", "Sonntag")


def _type_of(schema: Mapping[str, Any]) -> str:
    if "type" in schema:
        kind = schema["type"]
        return "|".join(kind) if isinstance(kind, list) else str(kind)
    options = [_type_of(option) for option in schema.get("anyOf", []) if isinstance(option, Mapping)]
    return "|".join(o for o in options if o != "null") or "any"


def render_tool(spec: ToolSpec) -> str:
    """One catalog line: name, typed arguments (optional ones with their default), description, output fields."""
    properties = (spec.input_schema or {}).get("properties") or {}
    required = set((spec.input_schema or {}).get("required") or [])
    arguments = []
    for name, schema in properties.items():
        text = f"{name}: {_type_of(schema)}"
        if name not in required:
            text += f" = {json.dumps(schema.get('default'), ensure_ascii=False)}"
        arguments.append(text)
    line = f"- {spec.name}({', '.join(arguments)})"
    description = " ".join((spec.description or "").split())
    if description:
        line += f": {description[:300]}"
    output = (spec.output_schema or {}).get("properties")
    if output:
        line += f" → Ergebnis-Felder: {', '.join(output)}"
    return line


def render_catalog(specs: Mapping[str, ToolSpec]) -> str:
    """The tool catalog, sorted by name so the prompt prefix is stable."""
    if not specs:
        return '(keine Tools verfügbar: antworte mit "final")'
    return "\n".join(render_tool(specs[name]) for name in sorted(specs))


def render_examples(examples: Sequence[Example]) -> str:
    """Examples as question → plan, with compact JSON."""
    return "\n\n".join(
        f"Frage: {e.question}\nPlan: {json.dumps(e.plan, ensure_ascii=False, separators=(',', ':'))}" for e in examples
    )


def render_context(hits: Sequence[Hit]) -> str:
    """Retrieved chunks with their sources."""
    return "\n".join(f"[{hit['source']}] {hit['text']}" for hit in hits)


def render_date(today: date) -> str:
    """``Heute ist Sonntag, 2026-11-22.``"""
    return f"Heute ist {WEEKDAYS[today.weekday()]}, {today.isoformat()}."


def render_dates(question: str, today: date) -> str:
    """The ISO date of every date the question names (resolved in code, not by the model), else today's date."""
    mentions = find_dates(question, today)
    if not mentions:
        return render_date(today)
    # Only the named dates: with today's date beside them, the 0.5B model copies today's date (measured).
    named = "; ".join(f"„{m.text}“ = {m.day.isoformat()}" for m in mentions)
    return f"Daten in der Frage: {named}."


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


def build_plan_messages(
    *,
    persona: str,
    specs: Mapping[str, ToolSpec],
    examples: Sequence[Example],
    question: str,
    today: date,
    hits: Sequence[Hit] = (),
    history: Sequence[BaseMessage] = (),
    user_fields: Mapping[str, Any] | None = None,
    feedback: Sequence[tuple[str, str]] = (),
) -> list[BaseMessage]:
    """The planner's prompt. ``feedback`` holds (rejected reply, why) pairs for self-correction."""
    system = f"{persona}\n\n{PLAN_PROTOCOL}\n\nTools:\n{render_catalog(specs)}"
    if examples:
        system += f"\n\nBeispiele:\n{render_examples(examples)}"
    parts = [render_dates(question, today)]
    if hits:
        parts.append(f"Kontext (aus Retrieval):\n{render_context(hits)}")
    extra = {k: v for k, v in (user_fields or {}).items() if k != "raw"}
    if extra:
        parts.append(f"Angaben des Nutzers (user.<Feld>): {json.dumps(extra, ensure_ascii=False)}")
    parts.append(f"Frage: {question}")
    messages: list[BaseMessage] = [SystemMessage(system), *history, HumanMessage("\n\n".join(parts))]
    for reply, problems in feedback:
        messages.append(AIMessage(reply))
        messages.append(HumanMessage(problems))
    return messages


def render_result(value: Any) -> str:
    """A result as compact JSON, cut with a note when long."""
    text = json.dumps(value, ensure_ascii=False, default=str, separators=(",", ":"))
    if len(text) > MAX_RESULT_CHARS_IN_PROMPT:
        return text[:MAX_RESULT_CHARS_IN_PROMPT] + f" …[gekürzt, {len(text)} Zeichen insgesamt]"
    return text


def render_calls(calls: Sequence[Mapping[str, Any]]) -> str:
    """The call log for the finalizer and for the planner's feedback."""
    lines = []
    for call in calls:
        if call.get("status") == "ok":
            arguments, result = render_result(call.get("args")), render_result(call["result"])
            lines.append(f"- {call['id']} = {call['tool']}({arguments}) → {result}")
        else:
            lines.append(f"- {call['id']} = {call['tool']}: FEHLER: {call.get('error')}")
    return "\n".join(lines)


def build_answer_messages(
    *,
    persona: str,
    question: str,
    today: date,
    calls: Sequence[Mapping[str, Any]],
    hits: Sequence[Hit] = (),
    history: Sequence[BaseMessage] = (),
) -> list[BaseMessage]:
    """The finalizer's prompt: the question, what the tools returned, and the retrieved context."""
    parts = [render_date(today), f"Frage: {question}"]
    if calls:
        parts.append(f"Tool-Ergebnisse:\n{render_calls(calls)}")
    if hits:
        parts.append(f"Kontext (aus Retrieval):\n{render_context(hits)}")
    parts.append(ANSWER_INSTRUCTIONS)
    return [SystemMessage(persona), *history, HumanMessage("\n\n".join(parts))]
