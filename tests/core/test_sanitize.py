"""Sanitizing tool data: depth cap with the cut part kept as JSON text, lone surrogates replaced, copy-on-write."""

from __future__ import annotations

import json
from typing import Any

from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from planwerk.core.sanitize import DEPTH_NOTE_KEY, REPLACEMENT, SanitizePolicy, clean_text, sanitize, sanitize_value


def nested(depth: int, leaf: Any = "bottom") -> Any:
    value = leaf
    for _ in range(depth):
        value = {"a": value}
    return value


def test_a_300_deep_value_is_cut_at_64_and_then_checkpoints() -> None:
    value = nested(300)
    serde = JsonPlusSerializer()
    try:
        serde.dumps_typed({"result": value})
        raise AssertionError("expected msgpack to give up on 300 levels (the reason for the cap)")
    except TypeError as error:
        assert "Recursion limit" in str(error)
    done = sanitize(value)
    assert done.cut_subtrees == 1 and done.changed
    serde.dumps_typed({"result": done.value})  # stores now
    marker = done.value
    for _ in range(64):
        marker = marker["a"]
    assert "64 levels" in marker[DEPTH_NOTE_KEY]
    assert json.loads(marker["json"]) == nested(236)  # nothing lost: the rest is its JSON text


def test_lists_and_a_smaller_policy() -> None:
    value: Any = [[[[1]]]]
    assert sanitize_value(value, SanitizePolicy(max_depth=2)) == [
        [{DEPTH_NOTE_KEY: "nested deeper than 2 levels; this part is kept as JSON text", "json": "[[1]]"}]
    ]


def test_deeper_than_the_interpreter_keeps_only_the_note() -> None:
    value = nested(5000)
    marker = sanitize_value(value)
    for _ in range(64):
        marker = marker["a"]
    assert "too deep to keep" in marker[DEPTH_NOTE_KEY]


def test_lone_surrogates_in_strings_and_keys_become_replacement_characters() -> None:
    done = sanitize({"k\ud800": ["a\udfffb", ("\ud83d",)], "ok": "😀"})
    assert done.value == {f"k{REPLACEMENT}": [f"a{REPLACEMENT}b", [REPLACEMENT]], "ok": "😀"}
    assert done.surrogates == 3
    json.dumps(done.value, ensure_ascii=False).encode("utf-8")
    assert clean_text("x\udc80") == f"x{REPLACEMENT}"


def test_a_clean_value_is_the_same_object() -> None:
    value = {"a": [1, {"b": "text"}], "c": None}
    done = sanitize(value)
    assert done.value is value and not done.changed
    text = "clean"
    assert clean_text(text) is text
