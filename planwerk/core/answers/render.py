"""Placeholders in an answer, rendered: ``{wx.temp_max_c}`` becomes ``18,5 °C``, ``{conv.datetime|time}`` ``00:00``.

A placeholder is ``{<slot name>}`` or ``{<slot name>|<formatter>}`` (:data:`FORMATTERS`). Numbers are written as
the result holds them (never rounded: the answer states the delivered value) with the question's decimal separator
and the slot's unit; dates and times in the words of a :class:`ValueStyle` (the question's language; the styles
themselves are data in :mod:`planwerk.prompts.answer_refs`). A ``quote`` slot (a result's free text) is written as
a fenced quotation (:func:`format_quote`): markdown inside it is not rendered, so a link or an image a third party
planted in a file cannot act in a chat; :func:`without_quotes` takes quotations out again for what is read by a
model or the answer check. A placeholder that names no slot stays as written: rendering any model's answer is
harmless, and a replayed answer with placeholders reads like a decoded one. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from datetime import date, datetime, time
from decimal import Decimal
from typing import Literal, get_args

from planwerk.core.answers.slots import Slot, read_moment

Formatter = Literal["date", "time", "weekday", "raw"]
"""``date``: only the calendar day of a date or a date and time; ``time``: only the clock time; ``weekday``: the
day with its weekday; ``raw``: the value exactly as the result holds it (no unit, no words)."""
FORMATTERS: tuple[Formatter, ...] = get_args(Formatter)

FORMATTERS_BY_KIND: Mapping[str, tuple[Formatter, ...]] = {
    "number": ("raw",),
    "date": ("date", "weekday", "raw"),
    "datetime": ("date", "time", "weekday", "raw"),
    "time": ("time", "raw"),
    "text": (),
    "flag": (),
    "quote": (),
}
"""The formatters a slot of each kind takes (the grammar offers only these)."""

PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_-]*(?:\.(?:[A-Za-z_][A-Za-z0-9_-]*|\d+))*)(?:\|([a-z]+))?\}")
"""``{name}`` or ``{name|formatter}``; the name is spelled as :data:`planwerk.core.answers.slots.NAME_SEGMENT`."""


@dataclass(frozen=True)
class ValueStyle:
    """How values are written in one language."""

    decimal_separator: str
    months: tuple[str, ...]
    """January first, twelve names."""
    weekdays: tuple[str, ...]
    """Monday first, seven names."""
    date_format: str
    """Takes ``{day}``, ``{month}`` (the name) and ``{year}``."""
    weekday_format: str
    """Takes ``{weekday}`` and ``{date}``."""
    datetime_format: str
    """Takes ``{date}`` and ``{time}``."""
    yes: str
    no: str
    clipped: str = "[… +{chars}]"
    """The last line of a clipped quotation; takes ``{chars}`` (the characters left out)."""


@dataclass(frozen=True)
class RenderedAnswer:
    """An answer with its placeholders written out."""

    text: str
    used: tuple[str, ...]
    """The slot names that were written, in order of first use."""
    unknown: tuple[str, ...]
    """Placeholders that name no slot (left as written)."""


def format_number(value: int | float, style: ValueStyle) -> str:
    """``value`` as the result holds it (``18.0`` is ``18``), with the style's decimal separator."""
    if isinstance(value, float):
        text = repr(value)
        if "e" in text or "E" in text:
            text = format(Decimal(text), "f")  # positional: "1e-07" is no number a reader (or the check) reads
        elif text.endswith(".0"):
            text = text[:-2]
    else:
        text = str(value)
    return text.replace(".", style.decimal_separator)


def format_date(day: date, style: ValueStyle) -> str:
    """``27. November 2026`` / ``27 November 2026``."""
    return style.date_format.format(day=day.day, month=style.months[day.month - 1], year=day.year)


def format_time(moment: time | datetime) -> str:
    """``16:00``: hours and minutes (the seconds of a result's time say nothing in an answer)."""
    return f"{moment.hour:02d}:{moment.minute:02d}"


QUOTE_INFO = "quote"
"""The info string of a quotation's fence: what :func:`without_quotes` recognises."""

_QUOTATION = re.compile(rf"\n*(?P<fence>`{{3,}}){QUOTE_INFO}\n(?P<body>.*?)\n(?P=fence)(?:\n+|$)", re.DOTALL)


def format_quote(text: str, length: int | None, style: ValueStyle) -> str:
    """``text`` as a fenced quotation on lines of its own, its last line saying how much was clipped when
    ``length`` is longer. The fence is longer than any run of backticks inside, so the text cannot close it."""
    runs = [len(run) for run in re.findall(r"`+", text)]
    fence = "`" * max(3, max(runs, default=0) + 1)
    lines = [text.rstrip()]
    if length is not None and length > len(text):
        lines.append(style.clipped.format(chars=length - len(text)))
    body = "\n".join(lines)
    return f"\n\n{fence}{QUOTE_INFO}\n{body}\n{fence}\n\n"


QUOTE_WITHHELD = "\n\n[…]\n\n"
"""What a quotation becomes in the conversation a later model call reads."""


def without_quotes(text: str, replacement: str = " ", quoted: Collection[str] | None = None) -> str:
    """``text`` with each quotation :func:`format_quote` wrote replaced by ``replacement``: a quotation is a
    result's text, copied by code, so the answer check does not read it as the answer's claims, and no model reads
    a third party's text in the conversation either. With ``quoted`` (the run's quote slot values), only a
    quotation of one of them: a block a model wrote itself in the same form is no quotation, and the check reads
    it."""

    def replace(match: re.Match[str]) -> str:
        body = match["body"]
        if quoted is None or any(body == q.rstrip() or body.startswith(q.rstrip() + "\n") for q in quoted):
            return replacement
        return match[0]

    return _QUOTATION.sub(replace, text).strip()


def render_value(slot: Slot, formatter: str | None, style: ValueStyle) -> str:
    """One slot's value in words; a formatter the slot's kind does not take is ignored."""
    if slot.kind == "quote":
        return format_quote(str(slot.value), slot.length, style)
    if formatter == "raw":
        return str(slot.value)
    if formatter not in FORMATTERS_BY_KIND.get(slot.kind, ()):
        formatter = None
    if slot.kind == "flag":
        return style.yes if slot.value else style.no
    if slot.kind == "number" and isinstance(slot.value, int | float):
        number = format_number(slot.value, style)
        return f"{number} {slot.unit}" if slot.unit else number
    moment = read_moment(str(slot.value)) if slot.kind in ("date", "datetime", "time") else None
    if isinstance(moment, datetime):
        if formatter == "time":
            return format_time(moment)
        day = format_date(moment.date(), style)
        if formatter == "weekday":
            return style.weekday_format.format(weekday=style.weekdays[moment.weekday()], date=day)
        return day if formatter == "date" else style.datetime_format.format(date=day, time=format_time(moment))
    if isinstance(moment, date):
        day = format_date(moment, style)
        if formatter == "weekday":
            return style.weekday_format.format(weekday=style.weekdays[moment.weekday()], date=day)
        return day
    if isinstance(moment, time):
        return format_time(moment)
    return str(slot.value)


def render_answer(text: str, slots: Mapping[str, Slot], style: ValueStyle) -> RenderedAnswer:
    """``text`` with each placeholder that names a slot replaced by its rendered value. A unit the model wrote
    after a number's placeholder is not written twice (``{route.distance} km`` is ``41,7 km``, not ``41,7 km km``:
    the prompt shows the value with its unit, and the 0.5B model copies the unit after the placeholder)."""
    used: dict[str, None] = {}
    unknown: dict[str, None] = {}
    parts: list[str] = []
    position = 0
    for match in PLACEHOLDER.finditer(text):
        parts.append(text[position : match.start()])
        position = match.end()
        name, formatter = match[1], match[2]
        slot = slots.get(name)
        if slot is None:
            unknown[match[0]] = None
            parts.append(match[0])
            continue
        used[name] = None
        value = render_value(slot, formatter, style)
        if slot.kind == "quote":
            parts[-1] = parts[-1].rstrip()
        parts.append(value)
        if slot.kind == "number" and slot.unit and formatter != "raw":
            repeated = re.match(rf"[ \u00a0]?{re.escape(slot.unit)}(?!\w)", text[position:])
            if repeated:
                position += repeated.end()
        elif slot.kind == "quote":
            # The quotation stands on lines of its own: a stop the model wrote after it would start a line alone.
            position += len(re.match(r"[ \t]*[.,;:!]?[ \t]*\n*", text[position:])[0])  # type: ignore[index]
    parts.append(text[position:])
    rendered = "".join(parts)
    if any(slots[name].kind == "quote" for name in used):
        rendered = rendered.strip("\n")  # a quotation that opens or ends the answer leaves no blank lines
    return RenderedAnswer(rendered, tuple(used), tuple(unknown))


def settled_text(text: str, slots: Mapping[str, Slot]) -> str:
    """The longest prefix of a partly decoded answer ``text`` whose rendering no later text can change, so that
    rendering it while the answer is decoded shows a growing prefix of the final rendering. It ends before an
    unclosed ``{`` (a placeholder still being written) and, right after the placeholder of a number with a unit,
    before text that may still turn out to be that unit (:func:`render_answer` drops a repeated unit)."""
    opening = text.rfind("{")
    if opening > text.rfind("}"):
        text = text[:opening]
    last = next(reversed(list(PLACEHOLDER.finditer(text))), None)
    if last is not None and last[2] != "raw":
        slot = slots.get(last[1])
        # The repeated unit is "[ ]unit" followed by no word character: decidable once that many characters follow.
        if slot is not None and slot.kind == "number" and slot.unit and len(text) - last.end() < len(slot.unit) + 2:
            text = text[: last.end()]
    return text
