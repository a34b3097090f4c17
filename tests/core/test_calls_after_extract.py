"""A corrected plan that extracts a text's fields gets back the call that read them (core.extract)."""

from __future__ import annotations

from typing import Any

import pytest

from planwerk.core.extract import calls_after_extract
from planwerk.core.plan import Plan

READ = {"id": "f", "name": "read_file", "arguments": {"path": "a.txt"}}
UPDATE = {"id": "u", "name": "update", "arguments": {"street": {"$ref": "f.street"}, "city": "$ref:f.result.city"}}


def _extract(fields: dict[str, str], text: str = "f") -> dict[str, Any]:
    return {"id": "x", "name": "extract", "arguments": {"text": {"$ref": text}, "schema": fields}}


def _plan(*steps: list[dict[str, Any]]) -> Plan:
    return Plan.model_validate({"steps": [{"tools": step} for step in steps]})


PREVIOUS = _plan([READ], [UPDATE])
BOTH = {"street": "string", "city": "string"}


def test_the_left_out_call_comes_back_after_the_extract_reading_its_fields() -> None:
    done = calls_after_extract(_plan([READ], [_extract(BOTH)]), PREVIOUS, failed={"u"}, texts={"f"})
    assert done is not None
    assert done["steps"][2]["tools"] == [
        {"id": "u", "name": "update", "arguments": {"street": {"$ref": "x.street"}, "city": {"$ref": "x.city"}}}
    ]


@pytest.mark.parametrize(
    ("plan", "failed", "texts"),
    [
        (_plan([READ], [_extract({"street": "string"})]), {"u"}, {"f"}),  # the extract lacks a field it read
        (_plan([READ], [_extract(BOTH), {**UPDATE, "id": "u2"}]), {"u"}, {"f"}),  # its tool is planned already
        (_plan([READ], [_extract(BOTH)]), set(), {"f"}),  # it did not fail
        (_plan([READ], [_extract(BOTH)]), {"u"}, set()),  # f's result was no text
        (_plan([READ]), {"u"}, {"f"}),  # no extract
    ],
)
def test_nothing_comes_back_unless_the_extract_holds_every_field_and_the_call_is_missing(
    plan: Plan, failed: set[str], texts: set[str]
) -> None:
    assert calls_after_extract(plan, PREVIOUS, failed=failed, texts=texts) is None
