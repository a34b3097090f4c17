"""Argument validation and repair against real tool schemas (pydantic-generated, as FastMCP sends them)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from planwerk.core.repair import check_arguments
from planwerk.core.tools import ToolError


class Args(BaseModel):
    lat: float
    count: int = 1
    flag: bool = False
    names: list[str] = Field(default_factory=list)
    either: int | float = 0
    label: str = ""


SCHEMA: dict[str, Any] = Args.model_json_schema()


def check(args: dict[str, Any]) -> dict[str, Any]:
    return check_arguments(SCHEMA, args, tool="demo", server="srv")


def test_valid_arguments_pass_unchanged() -> None:
    args = {"lat": 1.5, "count": 2, "flag": True, "names": ["a"], "either": 3, "label": "x"}
    assert check(args) == args


@pytest.mark.parametrize(
    ("given", "repaired"),
    [
        ({"lat": "41.38"}, {"lat": 41.38}),
        ({"lat": 1, "count": "3"}, {"lat": 1, "count": 3}),
        ({"lat": 1, "count": 3.0}, {"lat": 1, "count": 3}),
        ({"lat": 1, "flag": "true"}, {"lat": 1, "flag": True}),
        ({"lat": 1, "flag": "False"}, {"lat": 1, "flag": False}),
        ({"lat": 1, "names": "Rome"}, {"lat": 1, "names": ["Rome"]}),
        ({"lat": 1, "either": " 2.5 "}, {"lat": 1, "either": 2.5}),
        ({"lat": 1, "label": "12"}, {"lat": 1, "label": "12"}),
    ],
)
def test_common_slips_are_repaired(given: dict[str, Any], repaired: dict[str, Any]) -> None:
    assert check(given) == repaired


@pytest.mark.parametrize(
    ("given", "where"),
    [
        ({"count": 1}, "'lat' is a required property"),
        ({"lat": "north"}, "lat: "),
        ({"lat": 1, "count": 2.5}, "count"),
    ],
)
def test_what_cannot_be_repaired_is_an_invalid_arguments_error(given: dict[str, Any], where: str) -> None:
    with pytest.raises(ToolError) as info:
        check(given)
    error = info.value
    assert error.kind == "invalid_arguments" and error.tool == "demo" and error.server == "srv"
    assert where in str(error)
    assert "expected arguments matching" in str(error) and '"lat": {"type": "number"}' in str(error)


UNIONS: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"anyOf": [{"type": "integer"}, {"type": "number"}]},
        "maybe": {"type": ["integer", "null"]},
        "mode": {"anyOf": [{"type": "string", "enum": ["all"]}, {"type": "integer"}]},
        "flag": {"oneOf": [{"type": "boolean"}, {"type": "null"}]},
        "values": {"anyOf": [{"type": "array", "items": {"type": "number"}}, {"type": "null"}]},
        "ref": {"anyOf": [{"$ref": "#/$defs/Count"}, {"type": "null"}]},
        "text": {"anyOf": [{"type": "string"}, {"type": "integer"}]},
    },
    "$defs": {"Count": {"type": "integer", "minimum": 0}},
}


@pytest.mark.parametrize(
    ("given", "repaired"),
    [
        ({"n": "3"}, {"n": 3}),
        ({"n": "2.5"}, {"n": 2.5}),
        ({"maybe": "7"}, {"maybe": 7}),
        ({"maybe": "7.0"}, {"maybe": 7}),
        ({"mode": "3"}, {"mode": 3}),  # the string branch's enum refuses "3", the integer branch takes 3
        ({"mode": "all"}, {"mode": "all"}),
        ({"flag": "true"}, {"flag": True}),
        ({"values": "4"}, {"values": [4]}),
        ({"values": '[1, "2"]'}, {"values": [1, 2]}),
        ({"ref": "5"}, {"ref": 5}),
        ({"text": "5"}, {"text": "5"}),  # a string branch accepts it: nothing to repair
    ],
)
def test_strings_are_coerced_where_one_branch_of_a_union_accepts_the_value(
    given: dict[str, Any], repaired: dict[str, Any]
) -> None:
    assert check_arguments(UNIONS, given, tool="demo", server="srv") == repaired


def test_a_union_no_branch_of_which_accepts_the_value_is_still_an_error() -> None:
    with pytest.raises(ToolError) as error:
        check_arguments(UNIONS, {"ref": "-5"}, tool="demo", server="srv")
    assert error.value.kind == "invalid_arguments"
