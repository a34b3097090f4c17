"""The plan check collects every problem before anything runs."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from planwerk.core.checking import PlanCheckError, check_plan, echoes_question, ensure_valid
from planwerk.core.plan import Plan
from planwerk.tools.base import FunctionToolSource


class Coordinates(BaseModel):
    lat: float
    lon: float


class Spot(BaseModel):
    name: str


class Spots(BaseModel):
    items: list[Spot]


async def geocode(destination: str) -> Coordinates:
    """Coordinates of a place."""
    return Coordinates(lat=0, lon=0)


async def get_weather(lat: float, lon: float, start_date: str, end_date: str, include_raw: bool = False) -> dict:
    """Daily weather."""
    return {}


async def get_spots(lat: float, lon: float, radius_km: float, activity: str) -> Spots:
    """Spots for an activity."""
    return Spots(items=[])


SPECS = FunctionToolSource([geocode, get_weather, get_spots]).specs


def plan_of(*steps: list[dict[str, Any]], final: str | None = None) -> Plan:
    return Plan.model_validate({"steps": [{"description": "", "tools": list(s)} for s in steps], "final": final})


GEO = {"id": "geo", "name": "geocode", "arguments": {"destination": "Rom"}}
WEATHER = {
    "id": "wx",
    "name": "get_weather",
    "arguments": {
        "lat": {"$ref": "geo.lat"},
        "lon": {"$ref": "geo.lon"},
        "start_date": "2026-01-23",
        "end_date": "2026-01-23",
    },
}


def test_a_good_plan_passes() -> None:
    assert check_plan(plan_of([GEO], [WEATHER]), SPECS) == []


def test_every_problem_is_collected_in_one_message() -> None:
    bad = plan_of(
        [GEO, {"id": "geo", "name": "geocode", "arguments": {"destination": 5}}],
        [
            {"id": "wx", "name": "get_wetter", "arguments": {}},
            {
                "id": "sp",
                "name": "get_spots",
                "arguments": {
                    "lat": {"$ref": "geo.latitude"},
                    "lon": {"$ref": "wx.lon"},
                    "radius_km": "five",
                    "activity": "jog",
                    "colour": "red",
                },
            },
        ],
    )
    problems = check_plan(bad, SPECS)
    text = "\n".join(problems)
    assert "id 'geo' is used twice" in text
    assert "unknown tool 'get_wetter'; available tools: geocode, get_spots, get_weather" in text
    assert "argument destination: 5 is not of type 'string'" in text
    assert "argument radius_km: 'five' is not of type 'number'" in text
    assert "unknown argument(s) 'colour'; expected: lat, lon, radius_km, activity" in text
    assert "the output of 'geo' has no field 'latitude'; fields: lat, lon" in text
    assert "'wx' runs in step 1, not before step 1" in text
    try:
        ensure_valid(bad, SPECS)
    except PlanCheckError as error:
        assert error.problems == problems
        assert str(error).startswith("The plan was rejected:\n- ")
    else:  # pragma: no cover - the assertion above must run
        raise AssertionError("ensure_valid accepted a bad plan")


def test_missing_required_argument_unless_referenced() -> None:
    no_dates = {"id": "wx", "name": "get_weather", "arguments": {"lat": {"$ref": "geo.lat"}, "lon": 1}}
    assert any("'start_date' is a required property" in p for p in check_plan(plan_of([GEO], [no_dates]), SPECS))


def test_references_to_unknown_ids_same_step_and_self() -> None:
    same_step = plan_of([GEO, WEATHER])
    assert any("'geo' runs in step 0, not before step 0" in p for p in check_plan(same_step, SPECS))
    unknown = plan_of([{**WEATHER, "arguments": {**WEATHER["arguments"], "lat": {"$ref": "rome.lat"}}}])
    assert any("unknown id 'rome'; ids in this plan: wx (get_weather)" in p for p in check_plan(unknown, SPECS))
    itself = plan_of([GEO], [{**WEATHER, "arguments": {**WEATHER["arguments"], "lat": {"$ref": "wx.lat"}}}])
    assert any("points at the call itself" in p for p in check_plan(itself, SPECS))


@pytest.mark.parametrize(
    ("ref", "meant"),
    [
        ("Rom.lat", "geo"),  # a value the call was given, used as its id
        ("geocode.lat", "geo"),  # the tool's name
    ],
)
def test_an_unknown_id_that_names_a_call_says_which_id_was_meant(ref: str, meant: str) -> None:
    weather = {**WEATHER, "arguments": {**WEATHER["arguments"], "lat": {"$ref": ref}}}
    problems = check_plan(plan_of([GEO], [weather]), SPECS)
    assert any(f"names the call {meant!r} (geocode)" in p and f'"{meant}.<field' in p for p in problems), problems


@pytest.mark.parametrize(
    ("ref", "written"),
    [
        ("Rom.lat", "geo.lat"),
        ("geocode.lat", "geo.lat"),
        ("$ref:Rom.lat", "geo.lat"),  # the string form too
    ],
)
def test_a_reference_that_names_one_call_is_pointed_at_its_id(ref: str, written: str) -> None:
    from planwerk.core.checking import retarget_named_references
    from planwerk.core.refs import ref_text

    value = ref if ref.startswith("$ref:") else {"$ref": ref}
    weather = {**WEATHER, "arguments": {**WEATHER["arguments"], "lat": value}}
    fixed = retarget_named_references(plan_of([GEO], [weather]))
    assert fixed is not None and check_plan(fixed, SPECS) == []
    lat = next(c for _, c in fixed.calls() if c.id == "wx").arguments["lat"]
    assert lat == {"$ref": written}
    # Nothing to change: no reference names a call, or the name is ambiguous, or an earlier result has that id.
    assert retarget_named_references(plan_of([GEO], [WEATHER])) is None
    unknown = {**WEATHER, "arguments": {**WEATHER["arguments"], "lat": {"$ref": "today.lat"}}}
    assert retarget_named_references(plan_of([GEO], [unknown])) is None
    twice = plan_of([GEO, {**GEO, "id": "geo2"}], [weather])
    assert retarget_named_references(twice) is None
    assert retarget_named_references(plan_of([GEO], [weather]), available=[ref_text(value).split(".")[0]]) is None


@pytest.mark.parametrize(
    ("value", "flagged"),
    [
        ("<ref>:result[0].content", True),  # the 1.5B model's, for write_file's content
        ("{ref}=geo.lat", True),
        ("$ref = geo.lat", True),
        ("Ref: INV-2026-12", False),  # a value that begins with the word
        ("reference letter", False),
        ("$ref:geo.lat", False),  # the protocol's own string form is a reference
    ],
)
def test_a_text_written_like_a_reference_but_in_no_form_the_protocol_has_is_named(value: str, flagged: bool) -> None:
    weather = {**WEATHER, "arguments": {**WEATHER["arguments"], "start_date": value}}
    problems = check_plan(plan_of([GEO], [weather]), SPECS)
    assert any("is written like a reference but is none" in p for p in problems) is flagged


def test_an_unknown_id_that_names_no_call_only_lists_the_ids() -> None:
    weather = {**WEATHER, "arguments": {**WEATHER["arguments"], "lat": {"$ref": "today.lat"}}}
    problems = check_plan(plan_of([GEO], [weather]), SPECS)
    assert any("unknown id 'today'; ids in this plan: geo (geocode), wx (get_weather)" in p for p in problems)
    assert not any("names the call" in p for p in problems)


def test_list_paths_follow_the_output_schema() -> None:
    spots = {
        "id": "sp",
        "name": "get_spots",
        "arguments": {"lat": {"$ref": "geo.lat"}, "lon": {"$ref": "geo.lon"}, "radius_km": 5, "activity": "joggen"},
    }
    good = {"id": "g2", "name": "geocode", "arguments": {"destination": {"$ref": "sp.items.0.name"}}}
    assert check_plan(plan_of([GEO], [spots], [good]), SPECS) == []
    bad = {"id": "g2", "name": "geocode", "arguments": {"destination": {"$ref": "sp.items.name"}}}
    assert any("is a list; use an index" in p for p in check_plan(plan_of([GEO], [spots], [bad]), SPECS))


def test_allow_list_is_enforced_by_the_check() -> None:
    problems = check_plan(plan_of([GEO], [WEATHER]), SPECS, allowed_tools={"geocode"})
    assert problems == ["call 'wx' (get_weather): tool 'get_weather' is not allowed in this profile; allowed: geocode"]


def test_user_fields_and_earlier_results() -> None:
    by_user = {"id": "geo", "name": "geocode", "arguments": {"destination": {"$ref": "user.city"}}}
    assert any("no user field 'city'" in p for p in check_plan(plan_of([by_user]), SPECS))
    assert check_plan(plan_of([by_user]), SPECS, user_fields={"raw", "city"}) == []
    later = plan_of([WEATHER])  # refers to "geo" from an earlier plan of this question
    assert check_plan(later, SPECS, available={"geo"}) == []


def test_empty_plan_and_ask_user() -> None:
    assert check_plan(Plan(), SPECS) == []  # nothing to call: the finalizer answers from the context
    assert check_plan(Plan(ask_user="Wohin?"), SPECS) == []
    assert check_plan(Plan(final="Hallo"), SPECS) == []


@pytest.mark.parametrize(
    ("asked", "question", "echo"),
    [
        ("What is the capital of Australia?", "What is the capital of Australia?", True),
        ("what is the capital of australia", "What is the capital of  Australia?!", True),
        ("Wie wird das Wetter in Barcelona?", "Wie wird das Wetter in Barcelona am 1. Dezember?", False),
        ("Für welche Stadt?", "Wie wird das Wetter?", False),
        ("Which two numbers should I add?", "Add my two numbers.", False),
        ("", "What?", False),
        ("?", "?", False),  # nothing left to compare after punctuation
    ],
)
def test_a_question_asked_back_is_an_echo_only_when_it_is_the_users_own(asked: str, question: str, echo: bool) -> None:
    assert echoes_question(asked, question) is echo
