"""Spots for an activity (and parks) from OpenStreetMap through the Overpass API."""

from __future__ import annotations

from typing import Any

from planwerk.tools.servers.failures import ToolFailure
from planwerk.tools.servers.travel.http import HttpJson
from planwerk.tools.servers.travel.models import Spot
from planwerk.tools.servers.travel.scoring import haversine_km, travel_time_min

# Activity -> Overpass selectors; small and explainable on purpose.
SELECTORS: dict[str, tuple[str, ...]] = {
    "hiking": ('node["tourism"="viewpoint"]', 'node["natural"="peak"]', 'way["route"="hiking"]'),
    "running": ('node["leisure"="park"]', 'way["leisure"="park"]', 'way["highway"="pedestrian"]'),
    "beach": ('node["natural"="beach"]', 'way["natural"="beach"]'),
    "sightseeing": ('node["tourism"="attraction"]', 'node["historic"]', 'node["amenity"="museum"]'),
    "parks": ('node["leisure"="park"]', 'way["leisure"="park"]'),
}

# German and English names people (and models) use for the activities.
ACTIVITY_NAMES: dict[str, str] = {
    **{name: "hiking" for name in ("hiking", "hike", "trekking", "wandern", "wanderung", "wanderwege", "bergwandern")},
    **{name: "running" for name in ("running", "run", "jogging", "laufen", "joggen", "rennen")},
    **{name: "beach" for name in ("beach", "beaches", "swimming", "strand", "strände", "baden", "schwimmen")},
    **{
        name: "sightseeing"
        for name in (
            "sightseeing",
            "sights",
            "attractions",
            "culture",
            "museum",
            "museums",
            "kultur",
            "besichtigung",
            "sehenswürdigkeiten",
            "stadtbummel",
        )
    },
    **{name: "parks" for name in ("parks", "park", "picnic", "parken", "grünanlagen", "picknick")},
}

MAX_ELEMENTS = 80


def normalize_activity(activity: str) -> str:
    """The canonical activity (hiking, running, beach, sightseeing, parks) for a German or English name."""
    key = activity.strip().casefold()
    try:
        return ACTIVITY_NAMES[key]
    except KeyError:
        known = ", ".join(sorted(SELECTORS))
        raise ToolFailure(
            f"unknown activity {activity!r}; expected one of {known} (German names such as wandern, laufen, "
            "strand, kultur work too)",
            kind="invalid_arguments",
        ) from None


def overpass_query(activity: str, lat: float, lon: float, radius_km: float, max_elements: int) -> str:
    """The Overpass QL query for ``activity`` within ``radius_km`` (at least 1 km) of ``lat, lon``."""
    radius_m = int(max(1.0, radius_km) * 1000)
    parts = "\n  ".join(f"{sel}(around:{radius_m},{lat},{lon});" for sel in SELECTORS[activity])
    return f"[out:json][timeout:25];\n(\n  {parts}\n);\nout center {max_elements};"


async def get_spots(
    http: HttpJson, lat: float, lon: float, radius_km: float, activity: str, max_elements: int = MAX_ELEMENTS
) -> list[Spot]:
    """Named spots for ``activity`` near ``lat, lon``, deduplicated, with distance and travel time."""
    canonical = normalize_activity(activity)
    query = overpass_query(canonical, lat, lon, radius_km, max_elements)
    data = await http.request("Overpass", "POST", http.settings.overpass_url, data={"data": query})
    return parse_spots(data, canonical, lat, lon)


async def get_parks(http: HttpJson, lat: float, lon: float, radius_km: float, max_elements: int = 5) -> list[Spot]:
    """Parks (OSM leisure=park) near ``lat, lon``, nearest first, at most ``max_elements``."""
    spots = await get_spots(http, lat, lon, radius_km, "parks", max_elements=max_elements)
    return sorted(spots, key=lambda s: s.distance_km or 0.0)[:max_elements]


def parse_spots(data: Any, activity: str, lat: float, lon: float) -> list[Spot]:
    """Overpass elements with a name and a position (node lat/lon or way center), deduplicated by name and
    position."""
    seen: set[tuple[str, float, float]] = set()
    spots = []
    for element in (data or {}).get("elements") or []:
        tags = element.get("tags") or {}
        name = tags.get("name")
        where = element if element.get("lat") is not None else element.get("center") or {}
        if not name or where.get("lat") is None or where.get("lon") is None:
            continue
        slat, slon = float(where["lat"]), float(where["lon"])
        key = (str(name).strip().casefold(), round(slat, 5), round(slon, 5))
        if key in seen:
            continue
        seen.add(key)
        distance = haversine_km(lat, lon, slat, slon)
        spots.append(
            Spot(
                name=str(name),
                lat=slat,
                lon=slon,
                activity=activity,
                tags=tags,
                distance_km=round(distance, 3),
                travel_time_min=round(travel_time_min(distance), 1),
            )
        )
    return spots
