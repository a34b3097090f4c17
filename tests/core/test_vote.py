"""Self-consistency: merging sampled plans into one, and voting on their last results."""

from __future__ import annotations

from typing import Any

from planwerk.core.checking import check_plan
from planwerk.core.plan import Plan
from planwerk.core.vote import merge_candidates, vote
from planwerk.tools.base import FunctionToolSource


def chain(first: str, second: str, a: int = 2, b: int = 3) -> Plan:
    """``x = first(a, b)``, then ``y = second(x, 10)``."""
    return Plan.model_validate(
        {
            "steps": [
                {"tools": [{"id": "x", "name": first, "arguments": {"a": a, "b": b}}]},
                {"tools": [{"id": "y", "name": second, "arguments": {"a": {"$ref": "x.result"}, "b": 10}}]},
            ]
        }
    )


def record(call_id: str, result: Any, status: str = "ok") -> dict[str, Any]:
    return {"id": call_id, "tool": "t", "status": status, "result": {"result": result}, "kind": None, "error": None}


def test_candidates_run_side_by_side_with_their_own_ids_and_references() -> None:
    merged, candidates = merge_candidates(
        [chain("add", "multiply"), chain("multiply", "add"), chain("add", "multiply")]
    )
    assert [c["weight"] for c in candidates] == [2, 1]  # the identical first and third sample run once
    assert [[call.id for call in step.tools] for step in merged.steps] == [["s0_x", "s1_x"], ["s0_y", "s1_y"]]
    second_step = {call.id: call.arguments for call in merged.steps[1].tools}
    assert second_step["s1_y"] == {"a": {"$ref": "s1_x.result"}, "b": 10}
    assert candidates[1] == {"prefix": "s1_", "weight": 1, "last_call": "s1_y", "calls": ["s1_x", "s1_y"]}


def test_the_merged_plan_passes_the_plan_check_and_keeps_user_references() -> None:
    async def add(a: float, b: float) -> dict[str, float]:
        """a + b"""
        return {"result": a + b}

    specs = FunctionToolSource([add]).specs
    short = Plan.model_validate(
        {"steps": [{"tools": [{"id": "x", "name": "add", "arguments": {"a": "$ref:user.n", "b": 1}}]}]}
    )
    merged, candidates = merge_candidates([short, chain("add", "add")])
    assert merged.steps[0].tools[0].arguments == {"a": "$ref:user.n", "b": 1}
    assert candidates[0]["last_call"] == "s0_x"  # a one-step candidate ends in step 0
    assert check_plan(merged, specs, user_fields={"raw", "n"}) == []


def test_the_majority_result_wins_weighted_by_identical_samples() -> None:
    _, candidates = merge_candidates([chain("add", "multiply"), chain("multiply", "add"), chain("add", "multiply")])
    calls = [record("s0_x", 5), record("s0_y", 50), record("s1_x", 6), record("s1_y", 16)]
    outcome = vote(candidates, calls)
    assert outcome.winner is not None and outcome.winner["prefix"] == "s0_"
    assert outcome.value == 50 and outcome.votes == {"50": 2, "16": 1}


def test_distinct_plans_reaching_the_same_result_vote_together() -> None:
    plans = [chain("add", "multiply"), chain("multiply", "add"), chain("subtract", "add", a=9, b=3)]
    _, candidates = merge_candidates(plans)
    calls = [record("s0_x", 5), record("s0_y", 50), record("s1_x", 6), record("s1_y", 16)]
    calls += [record("s2_x", 6), record("s2_y", 16)]
    outcome = vote(candidates, calls)
    assert outcome.value == 16 and outcome.winner is not None and outcome.winner["prefix"] == "s1_"


def test_a_candidate_with_a_failed_call_does_not_vote_and_ties_go_to_the_earliest() -> None:
    _, candidates = merge_candidates([chain("add", "multiply"), chain("multiply", "add"), chain("add", "add")])
    calls = [record("s0_x", 5), record("s0_y", None, status="error")]
    calls += [record("s1_x", 6), record("s1_y", 16), record("s2_x", 5), record("s2_y", 15)]
    outcome = vote(candidates, calls)
    assert outcome.votes == {"16": 1, "15": 1} and outcome.winner is not None and outcome.winner["prefix"] == "s1_"
    assert vote(candidates, [record("s0_x", 5)]).winner is None  # nothing finished cleanly: no winner
