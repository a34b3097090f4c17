"""The answer checks' per-language word lists, read from ``words/<language>.toml`` (data, not code).

Each file holds one language's phrasing of things every domain shares: how a failure is said, how an action is
claimed, articles and place prepositions, month names, unit spellings, how a follow-up opens. A domain's words
(weather, the labels of its tools) are profile data instead (:mod:`planwerk.checks.domain`).
"""

from __future__ import annotations

import tomllib
import unicodedata
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

LANGUAGES = ("de", "en")
"""The languages there are word lists for."""


def fold_case(text: str) -> str:
    """``text`` case-folded, accents kept (NFC): folding them would make the hedge "würde" the report "wurde"."""
    return unicodedata.normalize("NFC", text.casefold())


@dataclass(frozen=True)
class Words:
    """One or more languages' word lists, merged (every list compared case-folded)."""

    failure: tuple[str, ...]
    action_done: tuple[str, ...]
    action_agents: tuple[str, ...]
    action_hedges: tuple[str, ...]
    articles: frozenset[str]
    place_prepositions: frozenset[str]
    common_word_places: frozenset[str]
    common_word_countries: frozenset[str]
    date_fillers: frozenset[str]
    date_openers: tuple[str, ...]
    range_words: tuple[str, ...]
    clause_ends: tuple[str, ...]
    number_range_words: tuple[str, ...]
    continuations: tuple[str, ...]
    months: dict[str, int]
    """Month names and abbreviations (folded) → month number."""
    units: dict[str, tuple[str, ...]]
    """Canonical unit → its spellings in words ("Grad Celsius")."""


@cache
def _read(language: str) -> dict[str, Any]:
    text = resources.files("planwerk.text").joinpath("words").joinpath(f"{language}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@cache
def words(languages: tuple[str, ...] = LANGUAGES) -> Words:
    """The word lists of ``languages`` merged (the checks read answers in any of them)."""
    data = [_read(language) for language in languages]

    def joined(key: str) -> tuple[str, ...]:
        return tuple(dict.fromkeys(fold_case(w) for d in data for w in d.get(key, ())))

    units: dict[str, tuple[str, ...]] = {}
    for d in data:
        for unit, spellings in d.get("units", {}).items():
            units[unit] = (*units.get(unit, ()), *spellings)
    return Words(
        failure=joined("failure"),
        action_done=joined("action_done"),
        action_agents=joined("action_agents"),
        action_hedges=joined("action_hedges"),
        articles=frozenset(joined("articles")),
        place_prepositions=frozenset(joined("place_prepositions")),
        common_word_places=frozenset(joined("common_word_places")),
        common_word_countries=frozenset(joined("common_word_countries")),
        date_fillers=frozenset(joined("date_fillers")),
        date_openers=joined("date_openers"),
        range_words=joined("range_words"),
        clause_ends=joined("clause_ends"),
        number_range_words=joined("number_range_words"),
        continuations=joined("continuations"),
        months={fold_case(name): number for d in data for name, number in d.get("months", {}).items()},
        units=units,
    )


@cache
def problem_texts(language: str) -> dict[str, str]:
    """The answer checks' problems in words, one template per kind (fields ``claim``, ``tool``, ``failure``,
    ``source``, ``facts``, ``place``), in ``language`` (English for a language there is no file for)."""
    return dict(_read(language if language in LANGUAGES else "en")["problems"])
