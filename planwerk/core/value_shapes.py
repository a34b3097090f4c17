"""The form a tool's schema shows for an argument's values, and the plan's text values that are not in it. Pure.

A tool's description often shows how its values are written: quoted examples ("an identifier such as
'<region>/<name>'"), a format hint ("in 24-hour format (HH:MM)"), or the JSON schema's own ``examples``. A small
model writes the value as the question says it instead (a bare name, a time with a word after it), and the call
fails, the same way on every retry (measured on the domain answers set, BENCHMARKS.md §12). :func:`misshapen_values`
finds such values before anything runs, so the check can ask about them once (:mod:`planwerk.graph.nodes.check`).

Only the form is compared, never a vocabulary: every mark (a character that is no letter, digit or space) that all
of an argument's examples hold must be in the value ("/" for time zones, "@" for mail addresses), and a value must
read as its format hint (``HH:MM``, ``YYYY-MM-DD``). Whether a value in the form exists is the tool's to say. A
vocabulary (the IANA time zones) only helps write a value that is out of form (:func:`as_shown_values`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from planwerk.core.tools import ToolSpec

_QUOTED = re.compile(r"""(?<![\w])['"‘“`]([^'"‘’“”`\s]{2,40})['"’”`](?![\w])""")
"""A quoted token in a description: ``'America/New_York'``, ``"user@example.com"`` (no spaces inside)."""

_FORMAT_TOKEN = r"(?:YYYY|YY|MM|DD|HH|hh|mm|SS|ss)"
_FORMAT = re.compile(rf"(?<![\w]){_FORMAT_TOKEN}(?:[-:/.T]{_FORMAT_TOKEN})+(?![\w])")
"""A format hint: date and time fields joined by their separators (``HH:MM``, ``YYYY-MM-DD``, ``DD.MM.YYYY``)."""

MAX_EXAMPLES_SHOWN = 3


@dataclass(frozen=True)
class ValueForm:
    """How an argument's values are written, as its schema shows it."""

    examples: tuple[str, ...] = ()
    """Quoted tokens of its description and its schema's ``examples``."""
    format_hint: str | None = None
    """A format hint of its description (``HH:MM``)."""
    default: str | None = None
    """The schema's default, which fits whatever its form (``"dontcare"`` for "not given")."""

    @property
    def marks(self) -> frozenset[str]:
        """The marks every example holds (none without examples)."""
        if not self.examples:
            return frozenset()
        held = [{c for c in example if not c.isalnum() and not c.isspace()} for example in self.examples]
        return frozenset(set.intersection(*held))

    def fits(self, value: str) -> bool:
        """Whether ``value`` is written in this form (an example or the default as it stands always is)."""
        if value == self.default or value in self.examples:
            return True
        if self.format_hint is not None and not _hint_pattern(self.format_hint).fullmatch(value.strip()):
            return False
        return self.marks <= set(value)

    def shown(self) -> str:
        """The form in words for the planner: the format hint, else the first examples, quoted."""
        if self.format_hint is not None:
            return self.format_hint
        return ", ".join(f"'{example}'" for example in self.examples[:MAX_EXAMPLES_SHOWN])


def _hint_pattern(hint: str) -> re.Pattern[str]:
    """``HH:MM`` as ``\\d{1,2}:\\d{2}``: a four-letter field is four digits, a two-letter one one or two (the hour
    and the day are often written with one), a two-letter field after a separator two."""
    parts = re.split(r"([-:/.T])", hint)
    pattern = []
    for index, part in enumerate(parts):
        if index % 2:
            pattern.append(re.escape(part))
        elif len(part) == 4:
            pattern.append(r"\d{4}")
        else:
            pattern.append(r"\d{1,2}" if index == 0 else r"\d{2}")
    return re.compile("".join(pattern))


def value_form(schema: Mapping[str, Any]) -> ValueForm | None:
    """The form a string parameter's schema shows, or ``None`` when it shows none (or no mark and no hint, which
    would fit any value)."""
    if schema.get("type") not in (None, "string") or "enum" in schema:
        return None  # an enum is checked as a schema rule; other types are no text
    description = str(schema.get("description") or "")
    examples = [m[1] for m in _QUOTED.finditer(description)]
    examples += [str(e) for e in schema.get("examples") or [] if isinstance(e, str) and e.strip()]
    # A quoted operator ("chain commands with '&&'") or a quoted hint is no example of a value.
    hint = _FORMAT.search(description)
    examples = [e for e in examples if any(c.isalnum() for c in e) and not _FORMAT.fullmatch(e)]
    default = schema.get("default")
    form = ValueForm(
        tuple(dict.fromkeys(examples)), hint[0] if hint else None, default if isinstance(default, str) else None
    )
    return form if form.marks or form.format_hint is not None else None


@dataclass(frozen=True)
class MisshapenValue:
    """A text value of a planned call that is not written in its argument's form."""

    call_id: str
    tool: str
    argument: str
    value: str
    form: ValueForm


def misshapen_values(
    plan: Mapping[str, Any], specs: Mapping[str, ToolSpec], failed: Collection[tuple[str, str, str]] = ()
) -> list[MisshapenValue]:
    """The top-level text arguments of ``plan``'s calls (literals, not references) that do not fit the form their
    parameter's schema shows (:func:`value_form`), in plan order; a value in ``failed`` ((tool, argument, value)
    of calls that failed) counts as out of form whatever its marks: the tool has said it is not one of its
    values."""
    found: list[MisshapenValue] = []
    for step in plan.get("steps") or []:
        for call in step.get("tools") or []:
            spec = specs.get(str(call.get("name")))
            properties = (spec.input_schema.get("properties") or {}) if spec is not None else {}
            for argument, value in (call.get("arguments") or {}).items():
                schema = properties.get(argument)
                if not isinstance(value, str) or not isinstance(schema, Mapping):
                    continue
                form = value_form(schema)
                if form is not None and (not form.fits(value) or (str(call.get("name")), argument, value) in failed):
                    found.append(MisshapenValue(str(call.get("id")), str(call.get("name")), argument, value, form))
    return found


PlaceIds = Callable[[str], frozenset[int]]
"""The ids of the place a short text names (empty when it names none): the gazetteer's lookup, passed in."""


def _no_place(text: str) -> frozenset[int]:
    return frozenset()


def _parts(text: str) -> list[str]:
    """The parts of a text between its marks, an identifier's underscores read as spaces ("New_York")."""
    return [part.replace("_", " ").strip() for part in re.split(r"[^\w\s]+", text) if part.strip()]


def _segments(text: str) -> set[str]:
    """The parts of a text between its marks, case and the space-or-underscore spelling ignored ("New York" and
    "New_York" alike)."""
    return {part.casefold().replace(" ", "_") for part in _parts(text)}


def as_shown_values(
    plan: Mapping[str, Any],
    specs: Mapping[str, ToolSpec],
    fixed: frozenset[str] = frozenset(),
    place_ids: PlaceIds = _no_place,
    failed: Collection[tuple[str, str, str]] = (),
    question: str = "",
    vocabularies: Sequence[Collection[str]] = (),
) -> dict[str, Any] | None:
    """``plan`` (as data) with each text value not written in its form (:func:`misshapen_values`) replaced by the one
    stretch of it that reads as the form's format hint ("9:30 am" → "9:30" for ``HH:MM``), else by the one such
    stretch of ``question`` (a date written for ``HH:MM`` → the question's one clock time), or by the one example of
    the form that holds it whole between its marks ("new name" → '<region>/New_Name'), looked up in the argument's
    own examples, else in those of the tool's arguments whose forms share a mark with its form; ``None`` when no
    value has exactly one such example. Where no example holds it as written, the one example with a part that
    names the same place (``place_ids``: another language's name for a city) is taken. A value a call failed with
    (``failed``, :func:`misshapen_values`) is looked up the same way by the places its parts name: an example's
    form with another region before the asked city is the one example naming that city. Calls of the tools in
    ``fixed`` (tools that change something) are left as planned. Each rule came from the domain answers set
    (BENCHMARKS.md §12), where the form was shown and the 0.5B model wrote the same value again; where the
    description itself holds the value's spelling, nothing is guessed. Last, a vocabulary of ``vocabularies``
    (:func:`planwerk.text.vocabularies.known_vocabularies`) that holds one of the argument's examples serves as its
    examples, those of its values in the form: a city name no example holds is the one IANA zone
    '<region>/<city>' that holds it (a time question of that set failed so)."""
    found = [m for m in misshapen_values(plan, specs, failed) if m.tool not in fixed]
    replaced: dict[tuple[str, str], str] = {}
    for misshapen in found:
        hint = misshapen.form.format_hint
        stretch = rf"(?<!\d){_hint_pattern(hint).pattern}(?!\d)" if hint else None
        inside = re.findall(stretch, misshapen.value) if stretch else []
        if len(inside) != 1 and stretch:  # none in the value: the question's one stretch in the form
            inside = sorted(set(re.findall(stretch, question)))
        if len(inside) == 1:  # "15:00 Uhr" for HH:MM: the value in its form, with words around it
            if inside[0] != misshapen.value:
                replaced[(misshapen.call_id, misshapen.argument)] = inside[0]
            continue
        wanted = misshapen.value.strip().casefold().replace(" ", "_")
        properties = specs[misshapen.tool].input_schema.get("properties") or {}
        forms = [value_form(s) for s in properties.values() if isinstance(s, Mapping)]
        alike = [f for f in forms if f is not None and f.marks & misshapen.form.marks]
        places = place_ids(misshapen.value.strip()).union(*map(place_ids, _parts(misshapen.value)))
        known = tuple(
            sorted(value for value in vocabulary if misshapen.form.marks <= set(value))
            for vocabulary in vocabularies
            if any(example in vocabulary for example in misshapen.form.examples)
        )
        for examples in (misshapen.form.examples, tuple(e for f in alike for e in f.examples), *known):
            holding = {example for example in examples if wanted in _segments(example)}
            if not holding and places:
                holding = {e for e in examples if any(places & place_ids(part) for part in _parts(e))}
            holding.discard(misshapen.value)
            if len(holding) == 1:
                replaced[(misshapen.call_id, misshapen.argument)] = holding.pop()
                break
    if not replaced:
        return None
    data = {**plan, "steps": [dict(step) for step in plan.get("steps") or []]}
    for step in data["steps"]:
        step["tools"] = [
            {
                **call,
                "arguments": {
                    name: replaced.get((str(call.get("id")), name), value)
                    for name, value in (call.get("arguments") or {}).items()
                },
            }
            for call in step.get("tools") or []
        ]
    return data
