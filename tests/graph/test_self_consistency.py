"""Self-consistency through the graph: sampled plans run side by side on the real math MCP server, the majority
of their last results is the answer (replay model scripts the samples)."""

from __future__ import annotations

import json
from typing import Any

from planwerk.models.replay import ReplayChatModel
from tests.helpers import make_agent

QUESTION = "Add 2 and 3, then multiply the sum by 10."


def chain(first: str, second: str) -> str:
    """``x = first(2, 3)``, then ``y = second(x, 10)``, as the planner writes it."""
    return json.dumps(
        {
            "steps": [
                {"description": "", "tools": [{"id": "x", "name": first, "arguments": {"arg_0": 2, "arg_1": 3}}]},
                {
                    "description": "",
                    "tools": [{"id": "y", "name": second, "arguments": {"arg_0": {"$ref": "x.result"}, "arg_1": 10}}],
                },
            ],
            "final": None,
        }
    )


async def test_the_result_most_samples_reach_is_the_answer(math_tools: Any) -> None:
    right, wrong = chain("add", "multiply"), chain("multiply", "add")  # 50 and 16
    model = ReplayChatModel.of([wrong, right, right, "The result is 50."])
    async with make_agent(model, tools=math_tools, profile="math", plan_samples=3, today=None) as planwerk:
        reply = await planwerk.ask(QUESTION)
    assert reply.answer == "The result is 50."
    assert reply.metadata["votes"] == {"16": 1, "50": 2}
    assert reply.metadata["llm_calls"] == 4  # three samples (a replay model cannot batch) and the answer
    assert [options.get("temperature") for options in model.call_options[:3]] == [0.7, 0.7, 0.7]
    state = await planwerk.state(reply.thread_id)
    assert sorted(call["id"] for call in state["calls"]) == ["s0_x", "s0_y", "s1_x", "s1_y"]  # each ran once
    assert "The result is 50" in reply.answer and "16" not in str(model.prompts[3][-1].content)


async def test_without_samples_the_first_plan_runs_greedily(math_tools: Any) -> None:
    model = ReplayChatModel.of([chain("multiply", "add"), "The result is 16."])
    async with make_agent(model, tools=math_tools, profile="math", plan_samples=1, today=None) as planwerk:
        reply = await planwerk.ask(QUESTION)
    assert reply.answer == "The result is 16." and reply.metadata["votes"] is None
    assert model.call_options[0].get("temperature") in (None, 0, 0.0)


async def test_a_failed_sample_is_outvoted_not_repaired(math_tools: Any) -> None:
    broken = chain("divide", "add").replace('"arg_1": 3', '"arg_1": 0')  # 2 / 0 fails on the server
    model = ReplayChatModel.of([broken, chain("add", "multiply"), "The result is 50."])
    async with make_agent(model, tools=math_tools, profile="math", plan_samples=2, today=None) as planwerk:
        reply = await planwerk.ask(QUESTION)
    assert reply.answer == "The result is 50." and reply.metadata["votes"] == {"50": 1}
    assert not [e for e in reply.events if e["event"] == "replan"]  # no repair of the failed sample
