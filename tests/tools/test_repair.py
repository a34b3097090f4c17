"""Argument validation and repair against real tool schemas (pydantic-generated, as FastMCP sends them)."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel, Field

from planwerk.tools.base import ToolError
from planwerk.tools.repair import check_arguments


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
