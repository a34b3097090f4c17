"""The per-language word lists every reader of text shares, read from ``words/<language>.toml`` (data, not code).

Each file holds one language's phrasing of things every domain shares: articles and place prepositions, month names,
unit spellings, the words around dates and ranges, how a follow-up opens. The answer checks' own words (how a failure
is said, how an action is claimed, the problems) are :mod:`planwerk.checks.words`; a domain's words (weather, the
labels of its tools) are profile data (:mod:`planwerk.checks.domain`).
"""

from __future__ import annotations

import tomllib
import unicodedata
from collections.abc import Mapping, Sequence
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

    articles: frozenset[str]
    place_prepositions: frozenset[str]
    common_word_places: frozenset[str]
    common_word_countries: frozenset[str]
    date_fillers: frozenset[str]
    date_openers: tuple[str, ...]
    range_words: tuple[str, ...]
    clause_ends: tuple[str, ...]
    condition_openers: tuple[str, ...]
    """Words that open a clause stating a condition ("when", "wenn"): where a question's premise begins."""
    number_range_words: tuple[str, ...]
    list_joiners: tuple[str, ...]
    """Words between the items of a list, besides commas ("and")."""
    continuations: tuple[str, ...]
    months: dict[str, int]
    """Month names and abbreviations (folded) → month number."""
    units: dict[str, tuple[str, ...]]
    """Canonical unit → its spellings in words ("Grad Celsius")."""


@cache
def read_word_list(package: str, language: str) -> dict[str, Any]:
    """One language's word list of ``package``: its ``words/<language>.toml``, parsed."""
    text = resources.files(package).joinpath("words").joinpath(f"{language}.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


def joined(lists: Sequence[Mapping[str, Any]], key: str) -> tuple[str, ...]:
    """The words under ``key`` in each of ``lists``, case-folded, in order, each once."""
    return tuple(dict.fromkeys(fold_case(w) for d in lists for w in d.get(key, ())))


@cache
def words(languages: tuple[str, ...] = LANGUAGES) -> Words:
    """The word lists of ``languages`` merged (answers and sources are read in any of them)."""
    data = [read_word_list("planwerk.text", language) for language in languages]
    units: dict[str, tuple[str, ...]] = {}
    for d in data:
        for unit, spellings in d.get("units", {}).items():
            units[unit] = (*units.get(unit, ()), *spellings)
    return Words(
        articles=frozenset(joined(data, "articles")),
        place_prepositions=frozenset(joined(data, "place_prepositions")),
        common_word_places=frozenset(joined(data, "common_word_places")),
        common_word_countries=frozenset(joined(data, "common_word_countries")),
        date_fillers=frozenset(joined(data, "date_fillers")),
        date_openers=joined(data, "date_openers"),
        range_words=joined(data, "range_words"),
        clause_ends=joined(data, "clause_ends"),
        condition_openers=joined(data, "condition_openers"),
        number_range_words=joined(data, "number_range_words"),
        list_joiners=joined(data, "list_joiners"),
        continuations=joined(data, "continuations"),
        months={fold_case(name): number for d in data for name, number in d.get("months", {}).items()},
        units=units,
    )
