"""A server planwerk has no examples for (the bank-like test server, real MCP over stdio) with the generic-en
profile and a replay model: the planner is shown examples built from the tools, an empty plan must say why, and an
answer may not claim an action no call did."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import open_tools

BANK = Path(__file__).resolve().parents[1] / "tools" / "bank_server.py"
CONFIG = {"mcpServers": {"bank": {"command": sys.executable, "args": [str(BANK), "stdio"], "timeout": 30}}}


@pytest.fixture
async def bank() -> AsyncIterator[Any]:
    """The bank-like test server over stdio, fresh per test (its state is the process's)."""
    async with open_tools(CONFIG) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools


def agent(model: ReplayChatModel, tools: Any, **context: Any) -> Agent:
    options = {"today": "2026-11-26", "plan_examples": 2, "embedding_model": "none", **context}
    return Agent(
        model=model,
        profile="generic-en",
        tools=tools,
        retriever=False,
        checkpointer=InMemorySaver(),
        context=Context(**options),
    )


def plan(*calls: dict[str, Any], final: str | None = None, **extra: Any) -> str:
    steps = [{"description": "", "tools": [call]} for call in calls]
    return json.dumps({"steps": steps, "final": final, **extra})


async def test_the_planner_sees_examples_built_from_tools_no_library_example_covers(bank: Any) -> None:
    model = ReplayChatModel.of([plan({"id": "b", "name": "get_balance", "arguments": {}}), "Your balance is 1810.0."])
    async with agent(model, bank) as planwerk:
        reply = await planwerk.ask("What is my current account balance?")
    system = str(model.prompts[0][0].content)
    examples = system.split("Examples:\n", 1)[1]
    # Examples of the loaded tools, none of the generic library's (time, files, memory).
    shown = [json.loads(line.removeprefix("Plan: ")) for line in examples.splitlines() if line.startswith("Plan: ")]
    assert shown and all(call["name"] in bank.specs for p in shown for step in p["steps"] for call in step["tools"])
    assert "get_balance" in examples
    # The catalog keeps the argument's meaning although the description mentions "recipient".
    assert "recipient: IBAN of the recipient" in system
    assert "read_file(file_path: string): Reads a file" in system and "fields not described" in system
    assert reply.metadata["tool_calls"] == 1 and "1810" in (reply.answer or "")
