"""In-process tools for graph tests about planwerk's own logic (the MCP tests use real servers)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel

from planwerk.agent import Agent
from planwerk.core.tools import ToolError
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.base import FunctionToolSource
from tests.helpers import make_agent


class Coordinates(BaseModel):
    lat: float
    lon: float
    name: str


class DailyWeather(BaseModel):
    date: str
    temperature_max: float


class Weather(BaseModel):
    lat: float
    lon: float
    days: list[DailyWeather]


def travel_tools(log: list[tuple[str, dict]] | None = None) -> FunctionToolSource:
    """geocode and get_weather with the travel server's shapes; every call is appended to ``log``."""
    calls = log if log is not None else []

    async def geocode(destination: str) -> Coordinates:
        """Coordinates of a place."""
        calls.append(("geocode", {"destination": destination}))
        known = {"Barcelona": (41.3825802, 2.177073), "Rom": (41.8933203, 12.4829321)}
        if destination not in known:
            raise ToolError(f"geocode: place {destination!r} not found", tool="geocode", kind="not_found")
        lat, lon = known[destination]
        return Coordinates(lat=lat, lon=lon, name=destination)

    async def get_weather(lat: float, lon: float, start_date: str, end_date: str, include_raw: bool = False) -> Weather:
        """Daily weather for a place and dates."""
        calls.append(("get_weather", {"lat": lat, "lon": lon, "start_date": start_date, "end_date": end_date}))
        return Weather(lat=lat, lon=lon, days=[DailyWeather(date=start_date, temperature_max=17.2)])

    return FunctionToolSource([geocode, get_weather])


GEO = {"id": "geo", "name": "geocode", "arguments": {"destination": "Barcelona"}}
"""The notebook's first call: Barcelona's coordinates."""


def weather_call(day: str = "2026-11-22") -> dict:
    """get_weather for ``day`` at the coordinates of :data:`GEO` (passed through ``$ref``)."""
    return {
        "id": "wx",
        "name": "get_weather",
        "arguments": {"lat": {"$ref": "geo.lat"}, "lon": {"$ref": "geo.lon"}, "start_date": day, "end_date": day},
    }


WEATHER = weather_call()
"""get_weather for the tests' today (2026-11-22)."""


def plan_json(*steps: list[dict], final: str | None = None) -> str:
    """A plan as the model writes it: each argument is one step, a list of calls."""
    return json.dumps({"steps": [{"description": "", "tools": list(s)} for s in steps], "final": final})


def replay_agent(model: ReplayChatModel, **context: Any) -> Agent:
    """An agent on :func:`travel_tools`, no retrieval, an in-memory checkpointer and today 2026-11-22 (``context``
    adds or overrides ``Context`` fields)."""
    return make_agent(model, tools=travel_tools(), **{"today": "2026-11-22", **context})
