"""Daily weather from Open-Meteo: forecast, archive, or for far-future dates an estimate from past years."""

from __future__ import annotations

import asyncio
from collections import Counter
from datetime import date, timedelta
from statistics import mean
from typing import Any, Literal

from planwerk.tools.servers.failures import ToolFailure
from planwerk.tools.servers.travel.http import HttpJson, ServiceUnreachable
from planwerk.tools.servers.travel.models import WeatherDay, WeatherProfile

FORECAST_HORIZON_DAYS = 16
"""Open-Meteo forecasts reach about 16 days ahead; later ranges get the historical estimate."""
ESTIMATE_YEARS = 10
ESTIMATE_MIN_YEARS = 3
DAILY_FIELDS = "temperature_2m_max,temperature_2m_min,precipitation_sum,windspeed_10m_max,weathercode"

Mode = Literal["forecast", "archive", "historical_fallback"]


def choose_mode(start: date, end: date, today: date) -> Mode:
    """Archive for ranges wholly in the past, forecast within the horizon, else the historical estimate."""
    if end < today:
        return "archive"
    if end <= today + timedelta(days=FORECAST_HORIZON_DAYS):
        return "forecast"
    return "historical_fallback"


async def get_weather(
    http: HttpJson, lat: float, lon: float, start: date, end: date, *, today: date, include_raw: bool = False
) -> WeatherProfile:
    """The weather profile for ``start..end`` (inclusive) at ``lat, lon``."""
    if end < start:
        raise ToolFailure(f"end_date ({end}) must not be before start_date ({start})", kind="invalid_arguments")
    mode = choose_mode(start, end, today)
    if mode == "historical_fallback":
        return await _estimate(http, lat, lon, start, end, today=today)
    url = http.settings.forecast_url if mode == "forecast" else http.settings.archive_url
    data = await _daily(http, url, mode, lat, lon, start, end)
    return profile(parse_days(data), start, end, source=mode, raw=data if include_raw else {})


async def _daily(http: HttpJson, url: str, mode: str, lat: float, lon: float, start: date, end: date) -> Any:
    params = {
        "latitude": lat,
        "longitude": lon,
        "start_date": start.isoformat(),
        "end_date": end.isoformat(),
        "daily": DAILY_FIELDS,
        "timezone": "auto",
    }
    return await http.request(f"Open-Meteo {mode}", "GET", url, params=params)


async def _estimate(http: HttpJson, lat: float, lon: float, start: date, end: date, *, today: date) -> WeatherProfile:
    years = [today.year - i for i in range(1, ESTIMATE_YEARS + 1)]

    async def fetch(year: int) -> list[WeatherDay]:
        data = await _daily(
            http, http.settings.archive_url, "archive", lat, lon, same_day(start, year), same_day(end, year)
        )
        return parse_days(data)

    # The years are independent: fetch them together, so a slow archive costs one timeout, not ten.
    outcomes = await asyncio.gather(*(fetch(year) for year in years), return_exceptions=True)
    by_year: dict[int, list[WeatherDay]] = {}
    unreachable: list[ServiceUnreachable] = []
    for year, outcome in zip(years, outcomes, strict=True):
        if isinstance(outcome, ServiceUnreachable):
            unreachable.append(outcome)
        elif isinstance(outcome, ValueError):  # a year without archive data is skipped, as in the original
            continue
        elif isinstance(outcome, BaseException):
            raise outcome
        else:
            by_year[year] = outcome
    if len(by_year) < ESTIMATE_MIN_YEARS:
        if unreachable and not by_year:
            raise unreachable[0]
        message = (
            f"Open-Meteo archive: only {len(by_year)} of {len(years)} past years could be fetched for the "
            f"estimate, at least {ESTIMATE_MIN_YEARS} are needed"
        )
        if unreachable:
            raise ServiceUnreachable(f"{message} ({unreachable[0]})")
        raise ValueError(message)
    return profile(
        average_days(list(by_year.values()), start, end),
        start,
        end,
        source="historical_fallback",
        reference_years=sorted(by_year),
    )


def parse_days(data: Any) -> list[WeatherDay]:
    """Open-Meteo's ``daily`` arrays as a list of days (missing values stay None)."""
    daily = (data or {}).get("daily") or {}

    def at(key: str, i: int) -> Any:
        values = daily.get(key) or []
        return values[i] if i < len(values) else None

    days = []
    for i, stamp in enumerate(daily.get("time") or []):
        code = at("weathercode", i)
        days.append(
            WeatherDay(
                date=date.fromisoformat(stamp),
                temp_min_c=at("temperature_2m_min", i),
                temp_max_c=at("temperature_2m_max", i),
                precipitation_mm=at("precipitation_sum", i),
                wind_max_kmh=at("windspeed_10m_max", i),
                weather_code=None if code is None else int(code),
            )
        )
    return days


def average_days(years: list[list[WeatherDay]], start: date, end: date) -> list[WeatherDay]:
    """Day i of the result averages day i of every year; the weather code is the most frequent one."""
    out = []
    for i in range((end - start).days + 1):
        same = [days[i] for days in years if i < len(days)]

        def avg(attr: str, same: list[WeatherDay] = same) -> float | None:
            values = [getattr(d, attr) for d in same if getattr(d, attr) is not None]
            return round(mean(values), 2) if values else None

        codes = Counter(d.weather_code for d in same if d.weather_code is not None)
        # Most frequent code; ties go to the smaller (milder) code, deterministically.
        code = min(codes, key=lambda c: (-codes[c], c)) if codes else None
        out.append(
            WeatherDay(
                date=start + timedelta(days=i),
                temp_min_c=avg("temp_min_c"),
                temp_max_c=avg("temp_max_c"),
                precipitation_mm=avg("precipitation_mm"),
                wind_max_kmh=avg("wind_max_kmh"),
                weather_code=code,
            )
        )
    return out


def profile(
    days: list[WeatherDay],
    start: date,
    end: date,
    *,
    source: Mode,
    reference_years: list[int] | None = None,
    raw: dict[str, Any] | None = None,
) -> WeatherProfile:
    """A profile with aggregates (min, max, total, rainy days at >= 1 mm, max wind) over ``days``."""

    def values(attr: str) -> list[float]:
        return [getattr(d, attr) for d in days if getattr(d, attr) is not None]

    mins, maxs, precs, winds = (
        values("temp_min_c"),
        values("temp_max_c"),
        values("precipitation_mm"),
        values("wind_max_kmh"),
    )
    return WeatherProfile(
        start_date=start,
        end_date=end,
        days=days,
        temp_min_c=min(mins) if mins else None,
        temp_max_c=max(maxs) if maxs else None,
        precip_total_mm=round(sum(precs), 2) if precs else None,
        rainy_days=sum(1 for p in precs if p >= 1.0) if precs else None,
        wind_max_kmh=max(winds) if winds else None,
        source=source,
        is_estimate=source == "historical_fallback",
        reference_years=reference_years or [],
        raw=raw or {},
    )


def same_day(day: date, year: int) -> date:
    """``day`` moved to ``year``; 29 February becomes 28 February in common years."""
    try:
        return day.replace(year=year)
    except ValueError:
        return date(year, 2, 28)
