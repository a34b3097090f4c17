"""Distance, travel time and a transparent heuristic score for spots (pure functions)."""

from __future__ import annotations

import math

from planwerk.tools.servers.travel.models import Spot, WeatherProfile

EARTH_RADIUS_KM = 6371.0


def haversine_km(lat1: float, lon1: float, lat2: float, lon2: float) -> float:
    """Great-circle distance in kilometres."""
    phi1, phi2 = math.radians(lat1), math.radians(lat2)
    dphi, dlambda = math.radians(lat2 - lat1), math.radians(lon2 - lon1)
    a = math.sin(dphi / 2) ** 2 + math.cos(phi1) * math.cos(phi2) * math.sin(dlambda / 2) ** 2
    return 2 * EARTH_RADIUS_KM * math.asin(math.sqrt(a))


def travel_time_min(distance_km: float) -> float:
    """Rough travel time without routing: 15 km/h up to 2 km, 25 up to 10, 45 up to 30, else 60."""
    speed = 15.0 if distance_km <= 2 else 25.0 if distance_km <= 10 else 45.0 if distance_km <= 30 else 60.0
    return distance_km / speed * 60.0


def score_breakdown(distance_km: float, weather: WeatherProfile | None, activity: str) -> dict[str, float]:
    """The terms of the score (base 70, distance, rain, heat, wind, activity bonus); their sum, clamped to
    0..100, is the score."""
    terms = {"base": 70.0, "distance": -min(35.0, distance_km * 1.5)}
    if weather is not None:
        rainy = weather.rainy_days or 0
        terms["rain"] = -min(20.0, rainy * 3.0)
        tmax = weather.temp_max_c
        if tmax is not None:
            terms["temperature"] = -10.0 if tmax >= 33 else 5.0 if 20 <= tmax <= 28 else 0.0
        if weather.wind_max_kmh is not None and weather.wind_max_kmh >= 45 and activity in {"beach", "hiking"}:
            terms["wind"] = -8.0
    if activity == "running":
        terms["activity"] = 2.0
    elif activity == "beach" and weather is not None and (weather.rainy_days or 0) == 0:
        terms["activity"] = 5.0
    return {k: round(v, 3) for k, v in terms.items()}


def rank(lat: float, lon: float, spots: list[Spot], weather: WeatherProfile | None, top_k: int) -> list[Spot]:
    """Spots with distance, travel time and score filled in, best first, at most ``top_k``."""
    scored = []
    for spot in spots:
        distance = haversine_km(lat, lon, spot.lat, spot.lon)
        terms = score_breakdown(distance, weather, spot.activity)
        scored.append(
            spot.model_copy(
                update={
                    "distance_km": round(distance, 3),
                    "travel_time_min": round(travel_time_min(distance), 1),
                    "score": round(max(0.0, min(100.0, sum(terms.values()))), 2),
                    "score_breakdown": terms,
                }
            )
        )
    scored.sort(key=lambda s: (-(s.score or 0.0), s.distance_km or 0.0, s.name))
    return scored[: max(1, top_k)]
