"""The plan's stored form: :class:`PlanData` mirrors :class:`Plan`, and reading it back validates nothing again."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import BaseModel

from planwerk.core.plan import CallData, Plan, PlanData, PlannedCall, Step, StepData, planned_calls

PLAN = {
    "steps": [
        {"description": "look up", "tools": [{"id": "geo", "name": "geocode", "arguments": {"q": "Graz"}}]},
        {"tools": [{"id": "wx", "name": "weather", "arguments": {"lat": {"$ref": "geo.lat"}, "n": 2**70}}]},
    ],
    "final": None,
    "reason": "  ",
    "next_round": True,
}


def _keys(typed: Any) -> frozenset[str]:
    return typed.__required_keys__ | typed.__optional_keys__


@pytest.mark.parametrize(("typed", "model"), [(PlanData, Plan), (StepData, Step), (CallData, PlannedCall)])
def test_the_stored_form_names_every_field_of_the_model(typed: Any, model: type[BaseModel]) -> None:
    assert _keys(typed) == frozenset(model.model_fields)


def test_stored_data_is_plain_and_reads_back_as_the_validated_plan() -> None:
    plan = Plan.model_validate(PLAN)
    data = plan.stored()
    assert type(data) is dict and set(data) == _keys(PlanData)  # what a checkpoint stores: no pydantic object
    assert type(data["steps"][0]) is dict and type(data["steps"][0]["tools"][0]) is dict
    assert data["steps"][1]["tools"][0]["arguments"]["n"] == float(2**70)  # validated once, when stored
    assert Plan.from_stored(data) == plan
    assert [(index, call.id) for index, call in planned_calls(data)] == [(0, "geo"), (1, "wx")]
    assert all(isinstance(call, PlannedCall) for _, call in planned_calls(data))
    assert list(planned_calls(None)) == []


def test_reading_a_stored_plan_validates_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    data = Plan.model_validate(PLAN).stored()

    def refuse(*_: Any, **__: Any) -> None:
        raise AssertionError("a stored plan was validated again")

    monkeypatch.setattr(Plan, "model_validate", refuse)
    monkeypatch.setattr(PlannedCall, "model_validate", refuse)
    view = Plan.from_stored(data)
    assert view.next_round and view.call_count == 2
    assert [call.name for _, call in planned_calls(data)] == ["geocode", "weather"]


def test_a_plan_stored_before_reason_and_next_round_reads_with_their_defaults() -> None:
    old: PlanData = {"steps": [{"description": "", "tools": [{"id": "a", "name": "x", "arguments": {}}]}],
                     "final": None, "ask_user": None}  # fmt: skip
    view = Plan.from_stored(old)
    assert view.reason is None and view.next_round is False and view.call_count == 1
    assert view == Plan.model_validate(old)
