"""Steps as barriers: re-ordering plans whose steps contradict their references, and resolving one step."""

from __future__ import annotations

from typing import Any

import pytest

from planwerk.core.calls import call_record
from planwerk.core.checking import check_plan
from planwerk.core.plan import Plan
from planwerk.core.scheduling import reorder_steps, resolve_step, steps_contradict_references
from planwerk.core.tools import ToolSpec

SPECS = {"t": ToolSpec(name="t", input_schema={"type": "object", "additionalProperties": True})}


def c(call_id: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": "t", "arguments": arguments}


def ref(text: str) -> dict[str, str]:
    return {"$ref": text}


def plan_of(*steps: list[dict[str, Any]]) -> Plan:
    return Plan.model_validate({"steps": [{"description": f"s{i}", "tools": s} for i, s in enumerate(steps)]})


def layout(plan: Plan) -> list[list[str]]:
    return [[call.id for call in step.tools] for step in plan.steps]


def test_a_valid_plan_is_left_as_the_planner_wrote_it() -> None:
    plan = plan_of([c("a"), c("b")], [c("x", v=ref("a.v"))])
    assert not steps_contradict_references(plan)
    assert reorder_steps(plan) is None


def test_everything_in_one_step_becomes_the_chain_its_references_describe() -> None:
    # The 0.5B model's favourite mistake: geocode and weather side by side, the weather referencing geocode.
    plan = plan_of([c("geo"), c("wx", lat=ref("geo.lat")), c("other")])
    reordered = reorder_steps(plan)
    assert reordered is not None
    assert layout(reordered) == [["geo", "other"], ["wx"]]
    assert check_plan(reordered, SPECS) == []
    assert check_plan(plan, SPECS) != []  # the original is still rejected by the check


def test_a_call_referenced_by_an_earlier_step_moves_in_front_of_it() -> None:
    plan = plan_of([c("a", v=ref("b.v"))], [c("b")])
    reordered = reorder_steps(plan)
    assert reordered is not None and layout(reordered) == [["b"], ["a"]]


def test_the_planners_order_is_kept_where_references_allow_it() -> None:
    # write → read has no reference but must stay in order; the misplaced reference is fixed around it, and read
    # stays after everything planned before it.
    plan = plan_of([c("write"), c("geo"), c("wx", lat=ref("geo.lat"))], [c("read")])
    reordered = reorder_steps(plan)
    assert reordered is not None
    assert layout(reordered) == [["write", "geo"], ["wx"], ["read"]]
    # The order constraint that would close a cycle is the one dropped: a (step 0) needs c (step 2).
    plan = plan_of([c("a", v=ref("c.v"))], [c("b")], [c("c")])
    reordered = reorder_steps(plan)
    assert reordered is not None and layout(reordered) == [["c"], ["a"], ["b"]]


def test_descriptions_follow_their_calls() -> None:
    plan = plan_of([c("a"), c("b", v=ref("a.v"))])
    reordered = reorder_steps(plan)
    assert reordered is not None and [s.description for s in reordered.steps] == ["s0", "s0"]


@pytest.mark.parametrize(
    "steps",
    [
        [[c("a", v=ref("b.v")), c("b", v=ref("a.v"))]],  # a cycle
        [[c("a", v=ref("a.v"))]],  # a call referencing itself
        [[c("a"), c("a", v=ref("a.v"))]],  # duplicate ids
    ],
)
def test_plans_that_cannot_be_reordered_are_left_to_the_check(steps: list[list[dict[str, Any]]]) -> None:
    plan = plan_of(*steps)
    assert reorder_steps(plan) is None
    assert check_plan(plan, SPECS) != []


def test_references_to_results_of_an_earlier_plan_need_no_reordering() -> None:
    plan = plan_of([c("wx", lat=ref("geo.lat"))])
    assert reorder_steps(plan, available={"geo"}) is None
    assert check_plan(plan, SPECS, available={"geo"}) == []


def test_resolve_step_resolves_references_and_records_what_cannot_run() -> None:
    plan = plan_of([c("a"), c("b")], [c("x", v=ref("a.v")), c("y", v=ref("b.v")), c("z", v=ref("a.nope"))])
    records = [call_record("a", "t", result={"v": 1}), call_record("b", "t", error="down", kind="unavailable")]
    ready, failed = resolve_step(plan, 1, records=records, results={"a": {"v": 1}}, user={"raw": "q"})
    assert [(r.id, r.args, r.step) for r in ready] == [("x", {"v": 1}, 1)]
    assert [(f["id"], f["kind"], f["status"]) for f in failed] == [("y", "skipped", "skipped"), ("z", "ref", "error")]
    assert "depends on failed call(s) b" in (failed[0]["error"] or "")


def test_a_reference_to_a_field_the_extract_did_not_find_fails_the_call_instead_of_sending_an_empty_value() -> None:
    extract = {"id": "v", "name": "extract", "arguments": {"text": ref("f"), "schema": {"iban": "string"}}}
    plan = plan_of([c("f")], [extract], [c("s", recipient=ref("v.iban"), amount=3, note=ref("f"))])
    ready, failed = resolve_step(plan, 2, records=[], results={"f": "a bill", "v": {"iban": None}}, user={})
    assert ready == [] and [(r["id"], r["kind"]) for r in failed] == [("s", "unclear")]
    assert "extract 'v' found no single 'iban'" in str(failed[0]["error"])
    # A found value is passed on; a null that some other call returned is that call's data, not this rule's.
    ready, failed = resolve_step(plan, 2, records=[], results={"f": "a bill", "v": {"iban": "DE1"}}, user={})
    assert failed == [] and ready[0].args["recipient"] == "DE1"
    ready, failed = resolve_step(plan, 2, records=[], results={"f": None, "v": {"iban": "DE1"}}, user={})
    assert failed == [] and ready[0].args["note"] is None
