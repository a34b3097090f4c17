"""The math profile's own packaged model (Qwen2.5-Coder-1.5B), really loaded, through the real graph and the real
math MCP server: what ``planwerk ask --profile math`` runs when the user names no model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks.nestful import MATH_ONLY_CONFIG
from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.graph.deps import NoTools
from planwerk.graph.runtime import open_deps
from planwerk.models.specs import PACKAGED_MATH_MODEL, load_chat_model

pytestmark = pytest.mark.slow


async def test_the_math_profile_plans_with_its_packaged_1_5b_model(tmp_path: Path) -> None:
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps(MATH_ONLY_CONFIG), encoding="utf-8")
    context = Context(profile="math", today="2026-01-15", max_plan_attempts=2)
    assert context.model == "profile"  # the user names no model
    async with open_deps(context, tools=NoTools(), retriever=None) as deps:
        assert deps.chat_model is load_chat_model(PACKAGED_MATH_MODEL)  # the process cache: one object per spec
    async with Agent(mcp_config=config, retriever=False, context=context) as agent:
        reply = await agent.ask(
            "A crate holds 12 boxes of 8 pencils each, and 5 loose pencils lie beside it. "
            "How many pencils are there in all?"
        )
    results = [e for e in reply.events if e["event"] == "tool_result"]
    assert {e["tool"] for e in results} == {"multiply", "add"}, reply.events
    assert results[-1]["result"] == {"result": 101}
    assert reply.answer is not None and "101" in reply.answer
