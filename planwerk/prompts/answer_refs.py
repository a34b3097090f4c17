"""Texts and prompt of an answer by reference (:mod:`planwerk.core.answers`), per language.

The answer model is shown the results as placeholders with their values (``{wx.temp_max_c} = 18,5 °C``) and asked
to write placeholders instead of copying numbers, dates and times; :class:`ReferenceTexts` holds those words, and
:class:`~planwerk.core.answers.render.ValueStyle` how values are written (:mod:`planwerk.prompts.value_styles`),
German and English. The rest of the prompt (date line, question, context, instructions,
answer language) is the finalizer's usual one (:mod:`planwerk.prompts.render`, :mod:`planwerk.prompts.texts`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from typing import TYPE_CHECKING, Any

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from planwerk.core.answers.render import ValueStyle, render_value
from planwerk.core.answers.slots import Slot
from planwerk.prompts.fallback import fallback_texts, values_only
from planwerk.prompts.render import render_context, render_date, render_result
from planwerk.prompts.texts import PromptTexts, texts_for
from planwerk.prompts.value_styles import ENGLISH_STYLE, GERMAN_STYLE
from planwerk.rag.base import Hit

if TYPE_CHECKING:
    from planwerk.core.language import Language


@dataclass(frozen=True)
class ReferenceTexts:
    """The words of an answer by reference in one language."""

    values_heading: str
    """Above the placeholders and their values."""
    rules: str
    """How to write placeholders; takes ``{example}`` (a placeholder of this run) and ``{value}`` (its value)."""
    style: ValueStyle
    quote_value: str
    """What a quotable free text is shown as instead of its text (its length would be a number the model
    states: measured, "The file contains 154 characters of text")."""
    quote_rule: str
    """When and how to quote a free text; takes ``{example}`` (a quote's placeholder)."""


GERMAN = ReferenceTexts(
    values_heading="Tool-Ergebnisse (Platzhalter = Wert):",
    rules=(
        "Zahlen, Daten und Uhrzeiten aus den Tool-Ergebnissen schreibst du nie selbst ab: setze ihren Platzhalter "
        "in geschweiften Klammern genau wie oben ein, z. B. {example} für {value}; planwerk schreibt den Wert mit "
        "Einheit hinein. Von einem Zeitpunkt nur die Uhrzeit: {{…|time}}, nur das Datum: {{…|date}}. Andere "
        "Ziffern darfst du nur schreiben, wenn sie in der Frage oder im Kontext stehen."
    ),
    style=GERMAN_STYLE,
    quote_value="ein Text, dir nicht gezeigt; planwerk setzt ihn dort ein, wo du den Platzhalter schreibst",
    quote_rule=(
        'Fragt die Frage, was ein Text sagt, antworte mit seinem Platzhalter, z. B. "Darin steht: {example}". '
        "Nach einem Wert gefragt, zitierst du nicht den ganzen Text."
    ),
)

ENGLISH = ReferenceTexts(
    values_heading="Tool results (placeholder = value):",
    rules=(
        "Never copy numbers, dates or times from the tool results yourself: write their placeholder in curly "
        "braces exactly as above, e.g. {example} for {value}; planwerk writes in the value with its unit. Only the "
        "clock time of a moment: {{…|time}}, only its date: {{…|date}}. Write other digits only where the question "
        "or the context has them."
    ),
    style=ENGLISH_STYLE,
    quote_value="a text not shown to you; planwerk inserts it where you write the placeholder",
    quote_rule=(
        'When the question asks what a text says, answer with its placeholder, e.g. "It says: {example}". Asked '
        "for a value, do not quote the whole text."
    ),
)

REFERENCE_TEXTS: Mapping[Language, ReferenceTexts] = {"de": GERMAN, "en": ENGLISH}


def reference_texts(language: Language) -> ReferenceTexts:
    """The texts of ``language`` (German for a language without its own)."""
    return REFERENCE_TEXTS.get(language, GERMAN)


def _example(slots: Mapping[str, Slot]) -> Slot | None:
    """The placeholder the rules show: a number with a unit where there is one, else any number, else any slot."""
    numbers = [slot for slot in slots.values() if slot.kind == "number"]
    with_unit = [slot for slot in numbers if slot.unit]
    values = [slot for slot in slots.values() if slot.kind != "quote"]
    return next(iter(with_unit or numbers or values), None)


QUOTE_RULES: tuple[str, ...] = tuple(words.quote_rule.format(example="") for words in REFERENCE_TEXTS.values())
"""The quoting rule in every language: an answer repeating it is an echo of the prompt (measured: "The file says
'planwerk inserts the text.'" when the rule said so), which the answer check rejects."""


def quoted_placeholders(slots: Mapping[str, Slot]) -> dict[str, str]:
    """The quotable free texts of ``slots``, each (clipped) text → its placeholder ``{name}``: what
    :func:`planwerk.prompts.fallback.result_lines` shows instead of the text."""
    return {str(slot.value): f"{{{slot.name}}}" for slot in slots.values() if slot.kind == "quote"}


def quote_rule(slots: Mapping[str, Slot], language: Language) -> str | None:
    """The rule for quoting, with the first quotable text's placeholder as its example; ``None`` without one."""
    quotes = [slot for slot in slots.values() if slot.kind == "quote"]
    if not quotes:
        return None
    words = reference_texts(language)
    return words.quote_rule.format(example=f"{{{quotes[0].name}}}")


def render_values(
    calls: Sequence[Mapping[str, Any]], slots: Mapping[str, Slot], texts: PromptTexts, words: ReferenceTexts
) -> str:
    """Per call its head (``wx = get_weather({…})``) and its slots with their values rendered in ``words``' style
    (a quote as its length); a successful call without slots (only long texts) shows its result with each free
    text as its length, a failed call its error."""
    lines = []
    for call in calls:
        call_id = str(call.get("id"))
        if call.get("status") != "ok":
            lines.append(f"- {call_id} = {call.get('tool')}: {texts.call_error}: {call.get('error')}")
            continue
        head = f"- {call_id} = {call.get('tool')}({render_result(call.get('args'), texts)})"
        own = [slot for name, slot in slots.items() if name == call_id or name.startswith(call_id + ".")]
        if not own:
            # Only long texts: shown as their length, never raw (a third party's text is data, not instructions).
            withheld = values_only(call.get("result"), fallback_texts(texts.language))
            lines.append(f"{head} → {render_result(withheld, texts)}")
            continue
        lines.append(f"{head}:")
        lines.extend(f"  {_shown(slot, words)}" for slot in own)
    return "\n".join(lines)


def _shown(slot: Slot, words: ReferenceTexts) -> str:
    """A slot as the answer model reads it: its placeholder and value, a quote's length instead of its text."""
    if slot.kind == "quote":
        return f"{{{slot.name}}} = ({words.quote_value})"
    return f"{{{slot.name}}} = {render_value(slot, None, words.style)}"


def build_reference_messages(
    *,
    persona: str,
    question: str,
    today: date | None,
    calls: Sequence[Mapping[str, Any]],
    slots: Mapping[str, Slot],
    hits: Sequence[Hit] = (),
    history: Sequence[BaseMessage] = (),
    texts: PromptTexts,
    language: Language,
    result_slot: str | None = None,
    key: tuple[str, str] | None = None,
) -> list[BaseMessage]:
    """The finalizer's prompt for an answer by reference: as
    :func:`planwerk.prompts.render.build_answer_messages`, with the results as placeholders and their values and
    the placeholder rules before the answer language. ``result_slot`` names the slot that answers the question
    (profiles whose answer is the last call's result): the instructions show its placeholder as the result; ``key``
    (source, sentence) the best chunk's key sentence when the answer must come from the context."""
    words = reference_texts(language)
    parts = [render_date(today, texts)] if today is not None else []
    parts.append(f"{texts.question_label} {question}")
    if calls:
        parts.append(f"{words.values_heading}\n{render_values(calls, slots, texts, words)}")
    if hits:
        parts.append(f"{texts.context_heading}\n{render_context(hits)}")
    failed = [str(call.get("tool")) for call in calls if call.get("status") not in ("ok", "skipped")]
    result = f"{{{result_slot}}}" if result_slot is not None else None
    parts.append(
        texts.answer_request(source=hits[0]["source"] if hits else None, failed_tools=failed, result=result, key=key)
    )
    if (example := _example(slots)) is not None:
        parts.append(words.rules.format(example=f"{{{example.name}}}", value=render_value(example, None, words.style)))
    if (rule := quote_rule(slots, language)) is not None:
        parts.append(rule)
    parts.append(texts_for(language).answer_language)
    return [SystemMessage(persona), *history, HumanMessage("\n\n".join(parts))]
