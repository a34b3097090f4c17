"""Nothing a tool or a person sends makes the thread grow without bound: errors are cut like results, an
``ask_user`` answer and an approval's edited arguments over their limits are refused (issue 31)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.types import Command

from planwerk.agent import Agent
from planwerk.core.approval import ApprovalError
from planwerk.core.calls import MAX_ERROR_CHARS
from planwerk.graph.context import Context
from planwerk.graph.nodes.ask_user import MAX_ANSWER_CHARS
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.base import FunctionToolSource

BIG = 5_000_000


def noisy_tools() -> FunctionToolSource:
    async def lookup(name: str) -> dict:
        """Fails with a 5 MB message."""
        raise RuntimeError("x" * BIG)

    async def erase(name: str) -> dict:
        """Deletes a note."""
        return {"erased": name}

    return FunctionToolSource([lookup, erase], destructive=["erase"])


def plan(tool: str) -> str:
    return json.dumps({"steps": [{"tools": [{"id": "a", "name": tool, "arguments": {"name": "n"}}]}], "final": None})


async def test_a_5_mb_tool_error_leaves_small_checkpoints_and_prompts(tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    model = ReplayChatModel.of([plan("lookup")] * 3 + ["Das ging nicht."] * 3)
    async with Agent(
        model=model, tools=noisy_tools(), retriever=False, db=db, context=Context(today="2026-11-22")
    ) as agent:
        reply = await agent.ask("Such n.", thread_id="t")
        state = await agent.state("t")
    errors = [c["error"] for c in state["calls"]]
    assert errors and all(MAX_ERROR_CHARS < len(e) < MAX_ERROR_CHARS + 100 for e in errors)
    assert "5,000,0" in errors[0]  # the note says how long the error was
    assert all(len(e.get("error", "")) < MAX_ERROR_CHARS + 100 for e in reply.events if e["event"] == "tool_error")
    longest_prompt = max(sum(len(str(m.content)) for m in prompt) for prompt in model.prompts)
    assert longest_prompt < 100_000
    assert db.stat().st_size < 2_000_000  # the whole thread, every checkpoint and write


async def test_an_over_long_answer_is_refused_and_asked_again() -> None:
    ask = json.dumps({"ask_user": "Welcher Name?"})
    model = ReplayChatModel.of([ask, json.dumps({"steps": [], "final": "ok"})])
    async with Agent(model=model, tools=noisy_tools(), retriever=False, context=Context(today="2026-11-22")) as agent:
        await agent.ask("Such etwas.", thread_id="t")
        with pytest.raises(ValueError, match=f"at most {MAX_ANSWER_CHARS:,}"):
            await agent.resume("y" * BIG, thread_id="t")
        # The server's path (no Agent in between): the graph asks again, naming the problem, and keeps nothing.
        assert agent.graph is not None
        config = agent._config("t")
        async for _ in agent.graph.astream(Command(resume="y" * BIG), config, context=agent.context):
            pass
        snapshot = await agent.graph.aget_state(config)
        assert [i.value.get("error") for i in snapshot.interrupts] == [
            f"the answer has {BIG:,} characters; at most {MAX_ANSWER_CHARS:,} are accepted"
        ]
        assert len(json.dumps(snapshot.values, default=str)) < 100_000
        reply = await agent.resume("n", thread_id="t")
    assert reply.answer == "ok"


async def test_over_large_edited_arguments_are_refused() -> None:
    model = ReplayChatModel.of([plan("erase"), "fertig"])
    async with Agent(
        model=model, tools=noisy_tools(), retriever=False, context=Context(today="2026-11-22", max_argument_bytes=1000)
    ) as agent:
        first = await agent.ask("Lösch n.", thread_id="t")
        assert first.interrupts and first.interrupts[0]["kind"] == "approval"
        with pytest.raises(ApprovalError, match="over the limit of 1,000"):
            await agent.resume({"action": "edit", "args": {"name": "z" * 5000}}, thread_id="t")
        # Through the graph alone (the server's path): asked again with the error, the arguments not kept.
        assert agent.graph is not None
        config = agent._config("t")
        edit = {"action": "edit", "args": {"name": "z" * BIG}}
        async for _ in agent.graph.astream(Command(resume=edit), config, context=agent.context):
            pass
        snapshot = await agent.graph.aget_state(config)
        assert "over the limit of 1,000" in snapshot.interrupts[0].value["error"]
        reply = await agent.resume({"action": "edit", "args": {"name": "m"}}, thread_id="t")
        state = await agent.state("t")
    assert reply.answer == "fertig"
    assert state["calls"][0]["args"] == {"name": "m"}
