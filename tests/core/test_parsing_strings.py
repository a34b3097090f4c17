"""What sits inside a JSON string stays text: no ``$ref:`` rewriting, no nesting depth, no lone surrogates."""

from __future__ import annotations

import json
from typing import Any

from planwerk.core.parsing import parse_plan


def reply(arguments: dict[str, Any]) -> str:
    return json.dumps(
        {"steps": [{"description": "", "tools": [{"id": "a", "name": "echo", "arguments": arguments}]}], "final": None}
    )


def arguments_of(text: str) -> dict[str, Any]:
    return parse_plan(text).steps[0].tools[0].arguments


def test_a_ref_shorthand_inside_longer_text_is_not_rewritten() -> None:
    assert arguments_of(reply({"text": "Preis: $ref:user.raw"})) == {"text": "Preis: $ref:user.raw"}
    assert arguments_of(reply({"text": "a, $ref:geo.lat"})) == {"text": "a, $ref:geo.lat"}
    single = "{'steps': [{'tools': [{'id': 'a', 'name': 'echo', 'arguments': {'text': 'Preis: $ref:user.raw'}}]}]}"
    assert arguments_of(single) == {"text": "Preis: $ref:user.raw"}


def test_the_bare_shorthand_as_a_whole_value_is_still_a_reference() -> None:
    text = (
        '{"steps": [{"tools": [{"id": "b", "name": "echo", "arguments": {"lat": $ref:geo.lat, "l": [$ref:geo.lon]}}]}]}'
    )
    assert arguments_of(text) == {"lat": {"$ref": "geo.lat"}, "l": [{"$ref": "geo.lon"}]}
    assert arguments_of(reply({"text": "$ref:user.raw"})) == {"text": "$ref:user.raw"}  # the string form, kept


def test_brackets_inside_a_string_are_no_nesting() -> None:
    text = "[" * 60 + " {" * 10 + " ]]"
    assert arguments_of(reply({"text": text})) == {"text": text}


def test_an_escaped_lone_surrogate_becomes_a_replacement_character() -> None:
    text = '{"steps": [{"tools": [{"id": "a", "name": "echo", "arguments": {"text": "x\\ud800y"}}]}], "final": null}'
    assert arguments_of(text) == {"text": "x\ufffdy"}
