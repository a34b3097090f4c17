"""One call for a call planned twice side by side (planwerk.core.duplicates)."""

from __future__ import annotations

from planwerk.core.duplicates import merge_identical_calls
from planwerk.core.plan import Plan


def plan(*steps: list[dict]) -> Plan:
    return Plan.model_validate({"steps": [{"description": "", "tools": list(step)} for step in steps]})


def call(ident: str, name: str, **arguments: object) -> dict:
    return {"id": ident, "name": name, "arguments": arguments}


def test_a_call_repeated_in_its_step_is_planned_once_and_references_to_it_follow() -> None:
    repeated = plan(
        [call("a_1", "area", base=10, height=5), call("a_2", "area", height=5, base=10)],
        [call("s", "save", value={"$ref": "a_2.area"})],
    )
    merged = merge_identical_calls(repeated)
    assert merged is not None
    assert [c.id for _, c in merged.calls()] == ["a_1", "s"]
    assert merged.steps[1].tools[0].arguments == {"value": {"$ref": "a_1.area"}}


def test_calls_that_differ_or_sit_in_different_steps_stay() -> None:
    assert merge_identical_calls(plan([call("a", "area", base=10), call("b", "area", base=7)])) is None
    assert merge_identical_calls(plan([call("a", "area", base=10), call("b", "volume", base=10)])) is None
    assert merge_identical_calls(plan([call("a", "read", path="x")], [call("b", "read", path="x")])) is None
    assert merge_identical_calls(plan()) is None
