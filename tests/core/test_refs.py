"""Reference resolution: dict keys and list indices only, with errors that say what is there."""

from __future__ import annotations

import pytest

from planwerk.core.refs import RefError, dependencies, parse_ref, resolve_arguments, user_fields

RESULTS = {
    "geo": {"lat": 41.38, "lon": 2.17, "source": "nominatim"},
    "spots": {"items": [{"name": "Parc de la Ciutadella", "tags": {"leisure": "park"}}, {"name": "Montjuïc"}]},
    "text_json": '{"result": 12}',
    "plain_list": [3, 5, 8],
    "text": "Street: 12 Harbour Road",
}
USER = {"raw": "Wie ist das Wetter?", "answer": "Barcelona"}


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ({"$ref": "geo.lat"}, 41.38),
        ("$ref:geo.lon", 2.17),
        ({"$ref": "spots.items.0.name"}, "Parc de la Ciutadella"),
        ({"$ref": "spots.items[1].name"}, "Montjuïc"),
        ({"$ref": "spots.items.0.tags.leisure"}, "park"),
        ({"$ref": "text_json.result"}, 12),
        ({"$ref": "plain_list.-1"}, 8),
        ({"$ref": "geo.result.lat"}, 41.38),
        ({"$ref": "text.result"}, "Street: 12 Harbour Road"),  # a text result is its own root, as an object's is
        ({"$ref": "geo"}, RESULTS["geo"]),
        ({"$ref": "user.raw"}, "Wie ist das Wetter?"),
        ({"$ref": "user.answer"}, "Barcelona"),
    ],
)
def test_resolves(value: object, expected: object) -> None:
    assert resolve_arguments({"x": value}, RESULTS, USER) == {"x": expected}


def test_nested_values_resolve_inside_lists_and_objects() -> None:
    args = {"points": [{"lat": {"$ref": "geo.lat"}}, "$ref:plain_list.0"], "n": 3}
    assert resolve_arguments(args, RESULTS, USER) == {"points": [{"lat": 41.38}, 3], "n": 3}


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("geo.latitude", "no key 'latitude' in geo, which is an object with keys 'lat', 'lon', 'source'"),
        ("spots.items.5", "index 5 out of range: spots.items is a list of 2 items"),
        ("spots.items.first", "expected an index, got 'first'"),
        ("nowhere.lat", "no result for call id 'nowhere' (results available: geo, plain_list, spots, text, text_json)"),
        ("geo.lat.x", "cannot take 'x' of geo.lat, which is a float value"),
        ("text.result.street", "cannot take 'street' of text, which is a str value"),
        ("user.city", "no key 'city' in user"),
        ("geo.__class__", "no key '__class__' in geo"),
        ("", "empty reference"),
    ],
)
def test_errors_name_the_reference_and_what_is_there(ref: str, message: str) -> None:
    with pytest.raises(RefError) as error:
        resolve_arguments({"x": {"$ref": ref}}, RESULTS, USER)
    assert message in str(error.value)
    assert ref in str(error.value)


def test_paths_never_reach_attributes() -> None:
    class Sneaky(dict):
        secret = "attribute"

    with pytest.raises(RefError):
        resolve_arguments({"x": {"$ref": "obj.secret"}}, {"obj": Sneaky(a=1)}, USER)


def test_parse_and_dependencies() -> None:
    assert parse_ref("spots.items[0].name").path == ("items", 0, "name")
    assert dependencies({"a": {"$ref": "geo.lat"}, "b": ["$ref:spots.items.0"], "c": {"$ref": "user.raw"}}) == {
        "geo",
        "spots",
    }


def test_a_call_is_about_its_own_texts_and_those_of_the_calls_it_takes_from() -> None:
    from planwerk.core.refs import call_subjects

    plan = {
        "steps": [
            {
                "tools": [
                    {"id": "geo", "name": "geocode", "arguments": {"destination": "Barcelona"}},
                    {"id": "long", "name": "search", "arguments": {"query": "a whole question of many more words?"}},
                ]
            },
            {
                "tools": [
                    {
                        "id": "wx",
                        "name": "get_weather",
                        "arguments": {"lat": {"$ref": "geo.lat"}, "start": "2026-01-20", "end": "2026-01-20"},
                    }
                ]
            },
            {"tools": [{"id": "rank", "name": "rank", "arguments": {"days": "$ref:wx.daily", "mode": "beach"}}]},
            {"tools": [{"id": "self", "name": "x", "arguments": {"a": {"$ref": "self.result"}}}]},
        ]
    }
    subjects = call_subjects(plan)
    assert subjects["geo"] == ("Barcelona",)
    assert subjects["wx"] == ("Barcelona", "2026-01-20")  # along the reference; the same day once
    assert subjects["rank"] == ("Barcelona", "2026-01-20", "beach")  # transitively, string references too
    assert subjects["long"] == ()  # more than six words is a question, not a subject
    assert subjects["self"] == ()  # a self-reference ends (the checker rejects such plans)
    assert call_subjects(None) == {}  # a stored plan was validated when stored: no broken one to read


def test_user_fields_add_the_question_as_raw_over_any_stored_copy() -> None:
    assert user_fields({"answer": "Barcelona", "raw": "older question"}, "Wie ist das Wetter?") == USER
