"""Vocabularies the standard library holds: every value of a form that many tools share, so a value written as
people say it can be written in the form the tool takes (a city's name → the zone '<region>/<city>').

A tool's description shows a form by a few examples (two or three zone names); a question names a place the
examples do not. Where an argument's examples belong to a vocabulary listed here, the whole vocabulary serves as
its examples (:func:`planwerk.core.value_shapes.as_shown_values`). Data, not word lists: each vocabulary is read from
a maintained database at run time.
"""

from __future__ import annotations

import zoneinfo
from functools import cache


@cache
def known_vocabularies() -> tuple[frozenset[str], ...]:
    """The vocabularies known on this machine: the IANA time zone names (the system's database, or the ``tzdata``
    package); none where neither is installed."""
    zones = frozenset(zoneinfo.available_timezones())
    return (zones,) if zones else ()
