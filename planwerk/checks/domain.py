"""A domain's knowledge for the answer checks: profile data (a profile file's ``[answers]`` table), not code.

Generic checks know numbers, dates, places and failures; what a weather service delivers, which words describe its
weather or which labels name a tool in an answer belongs to the profile that loads those tools. The travel profile
reads ``planwerk/data/profiles/travel-answers.toml``; any TOML profile file may hold the same table.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict


class AnswerDomain(BaseModel):
    """The ``[answers]`` table of a profile file (every key optional; unknown keys are errors)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool_labels: dict[str, list[str]] = {}
    """Words that name a tool's service in an answer besides its name (``get_weather = ["Wetter", "forecast"]``),
    matched as parts of words: "Der Wetterdienst ist nicht erreichbar" names get_weather."""
    tool_fields: dict[str, list[str]] = {}
    """Result fields a tool delivers when its server gives no output schema (what a failed call withholds)."""
    field_units: dict[str, str] = {}
    """Parts of result field names that imply a unit (``temp = "°C"``, ``wind = "km/h"``), besides the generic
    suffixes (``_c``, ``_kmh``, ``_mm``, …)."""
    condition_fields: list[str] = []
    """Result fields that describe conditions in words or codes (``weather_code``): a tool that delivers one and
    failed withholds :attr:`condition_words`."""
    condition_words: list[str] = []
    """Word beginnings (any language) a failed condition tool would have delivered ("sonnig", "rain"); an answer
    states none of them unless the user said it."""
    estimate_fields: list[str] = []
    """Boolean result fields that, when true, mark the values beside them as an estimate (``is_estimate``)."""
    estimate_words: list[str] = []
    """Word parts (any language) that say a value is an estimate ("schätz", "average"), when one is flagged."""
    field_labels: dict[str, dict[str, str]] = {}
    """Result fields in words per language (``[answers.field_labels.de] temp_max_c = "höchste Temperatur {value} °C"``)
    for the deterministic answer."""
    true_labels: dict[str, dict[str, str]] = {}
    """Boolean result fields shown only when true, per language."""
    coded_fields: dict[str, dict[str, dict[str, str]]] = {}
    """Result fields whose values are codes, per language: field → code → words (a WMO weather code 95 is
    "Gewitter")."""


@dataclass(frozen=True)
class Domain:
    """A profile's :class:`AnswerDomain` in the shape the checks read (words folded)."""

    tool_labels: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    tool_fields: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    field_units: Mapping[str, str] = field(default_factory=dict)
    condition_fields: frozenset[str] = frozenset()
    condition_words: tuple[str, ...] = ()
    estimate_fields: frozenset[str] = frozenset()
    estimate_words: tuple[str, ...] = ()
    field_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    true_labels: Mapping[str, Mapping[str, str]] = field(default_factory=dict)
    coded_fields: Mapping[str, Mapping[str, Mapping[int, str]]] = field(default_factory=dict)

    @classmethod
    def parse(cls, data: Mapping[str, Any] | AnswerDomain) -> Domain:
        """From an ``[answers]`` table (``ValidationError`` naming the key on bad input)."""
        table = data if isinstance(data, AnswerDomain) else AnswerDomain.model_validate(data)
        return cls(
            tool_labels={tool: tuple(labels) for tool, labels in table.tool_labels.items()},
            tool_fields={tool: tuple(fields) for tool, fields in table.tool_fields.items()},
            field_units={part.lower(): unit for part, unit in table.field_units.items()},
            condition_fields=frozenset(f.lower() for f in table.condition_fields),
            condition_words=tuple(w.casefold() for w in table.condition_words),
            estimate_fields=frozenset(table.estimate_fields),
            estimate_words=tuple(w.casefold() for w in table.estimate_words),
            field_labels=table.field_labels,
            true_labels=table.true_labels,
            coded_fields={
                language: {name: {int(code): words for code, words in codes.items()} for name, codes in fields.items()}
                for language, fields in table.coded_fields.items()
            },
        )


NO_DOMAIN = Domain()
"""A profile without domain knowledge (the generic and math profiles)."""
