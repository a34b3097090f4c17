"""After an extract found no clear value and the person was asked, the argument is read from their answer
(core.extract.values_from_answer)."""

from __future__ import annotations

from typing import Any

from planwerk.core.calls import call_record
from planwerk.core.extract import values_from_answer
from planwerk.core.plan import Plan

READ = {"id": "f", "name": "read_file", "arguments": {"path": "bill.txt"}}
UNCLEAR = call_record("pay", "send_money", args={"recipient": None, "amount": 98.7}, error="unclear", kind="unclear")


def _plan(text: str) -> Plan:
    values = {"id": "v", "name": "extract", "arguments": {"text": {"$ref": text}, "schema": {"recipient": "string"}}}
    pay = {"id": "pay", "name": "send_money", "arguments": {"recipient": {"$ref": "v.recipient"}, "amount": 98.7}}
    return Plan.model_validate({"steps": [{"tools": [READ]}, {"tools": [values]}, {"tools": [pay]}]})


def _calls(data: Any) -> dict[str, dict[str, Any]]:
    return {call.id: call.arguments for _, call in Plan.model_validate(data).calls()}


def test_an_argument_asked_about_is_read_from_the_persons_answer() -> None:
    calls = _calls(values_from_answer(_plan("f.content"), [UNCLEAR]))
    assert calls["answer_values"] == {"text": {"$ref": "user.answer"}, "schema": {"recipient": "string"}}
    assert calls["pay"]["recipient"] == {"$ref": "answer_values.recipient"}


def test_a_plan_reading_the_answer_itself_or_nothing_asked_about_is_left_as_planned() -> None:
    assert values_from_answer(_plan("user.answer"), [UNCLEAR]) is None
    assert values_from_answer(_plan("f.content"), []) is None
