"""Numbers given as strings are repaired for the math server's union-typed arguments (``int | float``), in the plan
check as at call time: the planner is not asked again for what the call repairs (issue 31, item 8)."""

from __future__ import annotations

import json
from typing import Any

from planwerk.agent import Agent
from planwerk.core.checking import check_plan
from planwerk.core.plan import Plan
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel

PLAN = {"steps": [{"tools": [{"id": "s", "name": "add", "arguments": {"arg_0": "3", "arg_1": "4"}}]}], "final": None}


async def test_the_plan_check_accepts_numbers_as_strings_for_a_union(math_tools: Any) -> None:
    assert "anyOf" in math_tools.specs["add"].input_schema["properties"]["arg_0"]  # the case: a union
    assert check_plan(Plan.model_validate(PLAN), math_tools.specs) == []


async def test_a_plan_with_numbers_as_strings_runs_without_a_second_plan(math_tools: Any) -> None:
    model = ReplayChatModel.of([json.dumps(PLAN), "7"])
    async with Agent(
        model=model, tools=math_tools, retriever=False, profile="math", context=Context(today="2026-11-22")
    ) as agent:
        reply = await agent.ask("Was ist 3 plus 4?", thread_id="t")
        state = await agent.state("t")
    assert not [e for e in reply.events if e["event"] == "replan"]
    assert model.calls == 2  # the plan and the answer: no second plan
    assert state["calls"][0]["status"] == "ok", state["calls"][0]  # the call repaired "3" and "4" itself
    assert json.dumps(state["results"]["s"]) in ("7", "7.0", '{"result": 7}', '{"result": 7.0}')
