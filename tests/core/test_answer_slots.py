"""Slots name every scalar of a run's successful results as ``$ref`` names it, with units from schemas or keys."""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from planwerk.core.answers.slots import SlotLimits, collect_slots, read_moment, unit_of_key, unit_of_schema
from planwerk.core.refs import parse_ref, walk


class Leg(BaseModel):
    to: str
    length: float = Field(description="How far (km)")
    arrival: str


class Route(BaseModel):
    legs: list[Leg]
    total: float = Field(json_schema_extra={"x-unit": "km"})
    fare_eur: float


ROUTE = {
    "legs": [{"to": "Girona", "length": 101.5, "arrival": "2026-11-27T16:00:00+01:00"}],
    "total": 101.5,
    "fare_eur": 12,
}
CALLS = [
    {"id": "route", "tool": "plan_route", "status": "ok", "args": {}, "result": ROUTE},
    {"id": "sum", "tool": "add", "status": "ok", "args": {}, "result": 42},
    {"id": "clock", "tool": "now", "status": "ok", "args": {}, "result": json.dumps({"time": "16:05", "ok": True})},
    {"id": "down", "tool": "broken", "status": "error", "args": {}, "error": "unreachable", "result": {"x": 1}},
]


def test_every_slot_name_is_a_reference_to_its_value() -> None:
    slots = collect_slots(CALLS)
    results = {call["id"]: call["result"] for call in CALLS}
    assert slots, "no slots"
    for name, slot in slots.items():
        ref = parse_ref(name)
        assert walk(ref, results[ref.root]) == slot.value, name


def test_kinds_and_names() -> None:
    slots = collect_slots(CALLS)
    assert set(slots) == {
        "route.legs.0.to",
        "route.legs.0.length",
        "route.legs.0.arrival",
        "route.total",
        "route.fare_eur",
        "sum",
        "clock.time",
        "clock.ok",
    }
    assert slots["route.legs.0.arrival"].kind == "datetime"
    assert slots["clock.time"].kind == "time" and slots["clock.ok"].kind == "flag"
    assert slots["route.legs.0.to"].kind == "text" and slots["sum"].kind == "number"
    assert not any(name.startswith("down") for name in slots)  # a failed call delivered nothing


def test_units_come_from_the_output_schema_and_generic_key_suffixes() -> None:
    slots = collect_slots(CALLS, {"plan_route": Route.model_json_schema()})
    assert slots["route.legs.0.length"].unit == "km"  # description "(km)", behind a $defs reference
    assert slots["route.total"].unit == "km"  # x-unit
    assert slots["route.fare_eur"].unit == "€"  # key suffix
    assert collect_slots(CALLS)["route.total"].unit is None  # without the schema nothing says so


def test_unit_rules() -> None:
    assert unit_of_key("temp_max_c") == "°C" and unit_of_key("wind_kmh") == "km/h" and unit_of_key("rain_mm") == "mm"
    assert unit_of_key("humidity_percent") == "%" and unit_of_key("c") is None and unit_of_key("name") is None
    assert unit_of_schema({"description": "Great-circle distance"}) is None
    assert unit_of_schema({"title": "Height (m)"}) == "m"
    assert unit_of_schema({"description": "The ID (abc)"}) is None  # not a unit symbol


def test_limits_bound_lists_texts_and_the_total() -> None:
    calls = [{"id": "s", "tool": "t", "status": "ok", "result": {"items": list(range(20)), "prose": "x" * 500}}]
    slots = collect_slots(calls, limits=SlotLimits(max_items=3))
    assert set(slots) == {"s.items.0", "s.items.1", "s.items.2"}
    assert len(collect_slots(calls, limits=SlotLimits(max_slots=2))) == 2


def test_keys_a_placeholder_cannot_spell_are_skipped() -> None:
    calls = [{"id": "s", "tool": "t", "status": "ok", "result": {"a b": 1, "a.b": 2, "{x}": 3, "ok": 4}}]
    assert set(collect_slots(calls)) == {"s.ok"}


def test_read_moment_reads_iso_forms_only() -> None:
    assert str(read_moment("2026-11-27")) == "2026-11-27"
    assert read_moment("2026-11-27T00:00:00+09:00").hour == 0  # type: ignore[union-attr]
    assert read_moment("2026-13-45") is None and read_moment("27. November") is None
