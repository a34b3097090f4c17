"""An answer is never dropped: a second resume of an answered interrupt and a new question on a thread that waits
for an answer are refused, before anything is stored, by the graph itself (so through the LangGraph server and
its SDK as through the Agent and the CLI), and the pending question stays pending (issue 31)."""

from __future__ import annotations

import json

import pytest
from langgraph.types import Command

from planwerk.agent import Agent
from planwerk.graph.builder import PendingInterruptError
from planwerk.tools.base import FunctionToolSource
from tests.helpers import make_agent

ASK = json.dumps({"ask_user": "Welcher Name?"})
DONE = json.dumps({"steps": [], "final": "ok"})


async def echo(name: str) -> dict:
    """Returns the name."""
    return {"name": name}


async def drain(agent: Agent, run_input: object, thread: str) -> None:
    assert agent.graph is not None
    async for _ in agent.graph.astream(run_input, agent._config(thread), context=agent.context):
        pass


async def test_a_second_resume_of_an_answered_interrupt_is_refused() -> None:
    async with make_agent([ASK, DONE, DONE], tools=FunctionToolSource([echo])) as planwerk:
        await planwerk.ask("Such etwas.", thread_id="t")
        await drain(planwerk, Command(resume="Anna"), "t")  # the server's path: the graph alone
        with pytest.raises(PendingInterruptError, match="not waiting for an answer"):
            await drain(planwerk, Command(resume="Berta"), "t")
        state = await planwerk.state("t")
    assert state["user"]["answer"] == "Anna"
    assert [c["answer"] for c in state["clarifications"]] == ["Anna"]


async def test_a_resume_naming_an_interrupt_that_is_no_longer_pending_is_refused() -> None:
    async with make_agent([ASK, ASK, DONE], tools=FunctionToolSource([echo])) as planwerk:
        first = await planwerk.ask("Such etwas.", thread_id="t")
        old_id = first.interrupts[0]["interrupt_id"]
        await drain(planwerk, Command(resume={old_id: "Anna"}), "t")  # answers it; the planner asks again
        assert planwerk.graph is not None
        snapshot = await planwerk.graph.aget_state(planwerk._config("t"))
        assert snapshot.interrupts and snapshot.interrupts[0].id != old_id
        with pytest.raises(PendingInterruptError, match=f"no pending interrupt {old_id}"):
            await drain(planwerk, Command(resume={old_id: "Berta"}), "t")
        reply = await planwerk.resume("Carla", thread_id="t")
        state = await planwerk.state("t")
    assert reply.answer == "ok"
    assert [c["answer"] for c in state["clarifications"]] == ["Anna", "Carla"]


async def test_a_new_question_on_a_waiting_thread_is_refused_and_the_question_stays_pending() -> None:
    async with make_agent([ASK, DONE], tools=FunctionToolSource([echo])) as planwerk:
        await planwerk.ask("Such etwas.", thread_id="t")
        with pytest.raises(PendingInterruptError, match="waiting for an answer to 'Welcher Name\\?'"):
            await planwerk.ask("Etwas ganz anderes?", thread_id="t")
        with pytest.raises(PendingInterruptError, match="waiting for an answer"):
            await drain(planwerk, {"messages": [{"role": "user", "content": "Noch etwas?"}]}, "t")
        state = await planwerk.state("t")
        assert [m.content for m in state["messages"] if m.type == "human"] == ["Such etwas."]  # nothing stored
        reply = await planwerk.resume("Anna", thread_id="t")
    assert reply.answer == "ok"
