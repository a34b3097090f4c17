"""The plan is validated once, by ``check``; every later node reads the stored plan without validating it again,
and the state keeps it as plain data (:class:`planwerk.core.plan.PlanData`)."""

from __future__ import annotations

from typing import Any

import pytest
from langgraph.config import get_config

from planwerk.core.plan import Plan, PlanData
from planwerk.tools.base import FunctionToolSource
from tests.graph.tools import plan_json
from tests.helpers import make_agent

FIRST = {"id": "a", "name": "number", "arguments": {"n": 1}}
SECOND = {"id": "b", "name": "number", "arguments": {"n": {"$ref": "a.n"}}}


class _Counting:
    """``Plan``'s pydantic validator, noting the graph node of every validation (``model_validate`` and ``Plan(...)``
    alike go through it)."""

    def __init__(self, inner: Any, nodes: list[str]) -> None:
        self.inner, self.nodes = inner, nodes

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self.inner, name)
        if not name.startswith("validate_"):
            return attribute

        def validate(*args: Any, **kwargs: Any) -> Any:
            try:  # a node's worker threads (asyncio.to_thread) carry its config too
                self.nodes.append(get_config()["metadata"]["langgraph_node"])
            except RuntimeError:
                self.nodes.append("(no node)")
            return attribute(*args, **kwargs)

        return validate


async def test_only_check_validates_the_plan_and_the_state_keeps_plain_data(monkeypatch: pytest.MonkeyPatch) -> None:
    async def number(n: int) -> dict:
        """Return the number."""
        return {"n": n}

    nodes: list[str] = []
    monkeypatch.setattr(Plan, "__pydantic_validator__", _Counting(Plan.__pydantic_validator__, nodes))
    async with make_agent([plan_json([FIRST], [SECOND]), "Eins."], tools=FunctionToolSource([number])) as agent:
        result = await agent.ask("Welche Zahl?", thread_id="once")
        state = await agent.state("once")
    assert result.answer == "Eins." and [c["id"] for c in state["calls"]] == ["a", "b"]
    # resolve_refs (three times), verify and the answer nodes read the stored plan unvalidated; the planner
    # validates only the zero-shot examples it writes itself (plans of its own, never the state's).
    assert "check" in nodes and set(nodes) <= {"plan", "check"}, nodes
    plan = state["plan"]
    assert type(plan) is dict and set(plan) == PlanData.__required_keys__ | PlanData.__optional_keys__
    assert plan["steps"][1]["tools"][0] == SECOND
