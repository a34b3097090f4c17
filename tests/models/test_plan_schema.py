"""The plan schema: what it admits and rejects, and that xgrammar compiles and enforces it."""

from __future__ import annotations

import json

import jsonschema
import pytest
import xgrammar as xgr
from pydantic import BaseModel

from planwerk.core.plan_schema import plan_json_schema
from planwerk.core.tools import ToolSpec
from planwerk.models.constrained import GrammarCache
from planwerk.tools.base import FunctionToolSource


class Coordinates(BaseModel):
    lat: float
    lon: float


class Spot(BaseModel):
    name: str
    where: Coordinates


async def geocode(destination: str) -> Coordinates:
    """Coordinates of a destination."""
    return Coordinates(lat=0, lon=0)


async def get_weather(lat: float, lon: float, start_date: str, end_date: str, include_raw: bool = False) -> dict:
    """Daily weather."""
    return {}


async def rank(spots: list[Spot], top_k: int = 3) -> list[Spot]:
    """Rank spots (its input uses nested models, i.e. $defs)."""
    return spots


SPECS = FunctionToolSource([geocode, get_weather, rank]).specs

GOOD_PLAN = {
    "steps": [
        {
            "description": "Koordinaten",
            "tools": [{"id": "geo", "name": "geocode", "arguments": {"destination": "Barcelona"}}],
        },
        {
            "description": "Wetter",
            "tools": [
                {
                    "id": "wx",
                    "name": "get_weather",
                    "arguments": {
                        "lat": {"$ref": "geo.lat"},
                        "lon": "$ref:geo.lon",
                        "start_date": "2026-12-01",
                        "end_date": "2026-12-01",
                    },
                }
            ],
        },
    ],
    "final": None,
}


@pytest.fixture(scope="module")
def schema() -> dict:
    return plan_json_schema(SPECS)


def with_call(call: dict) -> dict:
    return {"steps": [{"description": "x", "tools": [call]}], "final": None}


def test_good_plans_validate(schema):
    jsonschema.validate(GOOD_PLAN, schema)
    jsonschema.validate({"steps": [], "final": "Hallo!"}, schema)
    jsonschema.validate({"ask_user": "Für welches Datum?"}, schema)
    spots = [{"name": "Park", "where": {"lat": 1.0, "lon": 2.0}}]
    jsonschema.validate(with_call({"id": "r", "name": "rank", "arguments": {"spots": spots}}), schema)


@pytest.mark.parametrize(
    ("plan", "why"),
    [
        (with_call({"id": "g", "name": "geocoder", "arguments": {"destination": "Rom"}}), "unknown tool name"),
        (with_call({"id": "g", "name": "geocode", "arguments": {}}), "missing required argument"),
        (with_call({"id": "g", "name": "geocode", "arguments": {"destination": "Rom", "x": 1}}), "extra argument"),
        (
            with_call(
                {
                    "id": "w",
                    "name": "get_weather",
                    "arguments": {"lat": "north", "lon": 1, "start_date": "a", "end_date": "b"},
                }
            ),
            "string for a number",
        ),
        (
            with_call(
                {
                    "id": "w",
                    "name": "get_weather",
                    "arguments": {"lat": {"$ref": "geo lat"}, "lon": 1, "start_date": "a", "end_date": "b"},
                }
            ),
            "malformed $ref",
        ),
        (with_call({"id": "1geo", "name": "geocode", "arguments": {"destination": "Rom"}}), "id not an identifier"),
        (with_call({"id": "r", "name": "rank", "arguments": {"spots": [{"name": "P"}]}}), "nested $defs enforced"),
        ({"steps": [{"description": "x", "tools": []}], "final": None}, "step without calls"),
        ({"steps": []}, "final missing"),
        ({"ask_user": ""}, "empty question"),
    ],
)
def test_bad_plans_are_rejected(schema, plan, why):
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(plan, schema)


def test_no_tools_admits_only_final_or_ask_user():
    schema = plan_json_schema({})
    jsonschema.validate({"steps": [], "final": "ok"}, schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(with_call({"id": "g", "name": "geocode", "arguments": {"destination": "Rom"}}), schema)


def test_tool_defs_are_hoisted_with_a_prefix(schema):
    assert {"rank__Coordinates", "rank__Spot"} <= set(schema["$defs"])
    text = json.dumps(schema)
    assert '"#/$defs/Spot"' not in text and '"#/$defs/rank__Spot"' in text
    jsonschema.Draft202012Validator.check_schema(schema)


def test_a_property_named_ref_is_not_rewritten():
    spec = ToolSpec("odd", input_schema={"type": "object", "properties": {"$ref": {"type": "string"}}})
    schema = plan_json_schema({"odd": spec})
    jsonschema.validate(with_call({"id": "o", "name": "odd", "arguments": {"$ref": "plain text"}}), schema)


def byte_vocab() -> xgr.TokenizerInfo:
    """A tokenizer whose tokens are the single printable characters (plus an end token)."""
    tokens = [chr(c) for c in range(32, 127)] + ["ä", "ü", "ö", "ß", "</s>"]
    return xgr.TokenizerInfo(tokens, stop_token_ids=[len(tokens) - 1])


def test_xgrammar_compiles_and_enforces_the_schema(schema):
    grammar = xgr.GrammarCompiler(byte_vocab()).compile_json_schema(
        json.dumps(schema), any_whitespace=False, separators=(",", ":")
    )
    good = xgr.GrammarMatcher(grammar)
    assert good.accept_string(json.dumps(GOOD_PLAN, separators=(",", ":")))
    assert good.is_completed()
    bad_name = with_call({"id": "g", "name": "geocoder", "arguments": {"destination": "Rom"}})
    assert not xgr.GrammarMatcher(grammar).accept_string(json.dumps(bad_name, separators=(",", ":")))
    # property order is the schema's: "name" must come before "arguments"
    reordered = '{"steps":[{"description":"x","tools":[{"id":"g","arguments":'
    assert not xgr.GrammarMatcher(grammar).accept_string(reordered)


def test_grammar_cache_compiles_once_per_schema(schema, monkeypatch):
    cache = GrammarCache(tokenizer=None, vocab_size=0, stop_token_ids=[])
    monkeypatch.setattr(cache, "_grammar_compiler", lambda: xgr.GrammarCompiler(byte_vocab()))
    first = cache.compiled(schema)
    assert cache.compiled(json.loads(json.dumps(schema))) is first
    assert cache.compiled(plan_json_schema({"geocode": SPECS["geocode"]})) is not first
