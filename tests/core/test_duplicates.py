"""One call for a call planned twice side by side (planwerk.core.duplicates)."""

from __future__ import annotations

from planwerk.core.duplicates import distinct_ids, merge_identical_calls
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


def test_different_calls_under_one_id_nothing_refers_to_get_ids_of_their_own() -> None:
    reused = plan(
        [call("find", "find_club", club="A"), call("find", "find_club", club="B"), call("find_2", "route", to="A")]
    )
    renamed = distinct_ids(reused)
    assert renamed is not None
    assert [(c.id, c.arguments) for _, c in renamed.calls()] == [
        ("find", {"club": "A"}),
        ("find_3", {"club": "B"}),  # find_2 is taken
        ("find_2", {"to": "A"}),
    ]
    assert distinct_ids(plan([call("a", "area", base=1), call("b", "area", base=2)])) is None


def test_a_reused_id_a_reference_names_stays_for_the_check_to_refuse() -> None:
    # Which of the two calls the reference means is not plain.
    reused = plan([call("f", "find", club="A"), call("f", "find", club="B")], [call("s", "save", v={"$ref": "f.x"})])
    assert distinct_ids(reused) is None
