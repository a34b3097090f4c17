"""Elicitation against the real server-everything: the request pauses the thread (a LangGraph interrupt with the
request's message and schema), the answer is checked against the schema (asked again when it does not fit) and
reaches the server; decline and cancel reach it too. The call is made again on resume, so a thread resumes after
the process (its MCP sessions, its agent) is gone: a new agent on the same thread file finishes it.

The planner is a replay model (the plan is scripted); the tools are the real server over stdio.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from planwerk.agent import Agent
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import MCPToolSource, open_tools
from tests.graph.tools import plan_json
from tests.third_party import npm_server

FORM = {"id": "form", "name": "trigger-elicitation-request", "arguments": {}}
QUESTION = "Fill in the form, please."


def config() -> dict[str, Any]:
    """server-everything over stdio."""
    return {"mcpServers": {"everything": {"command": npm_server("mcp-server-everything"), "timeout": 30}}}


@pytest.fixture
async def everything() -> AsyncIterator[MCPToolSource]:
    """A tool source on a fresh server-everything."""
    async with open_tools(config()) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools


async def test_the_request_pauses_the_thread_and_the_checked_answer_reaches_the_server_after_a_restart(
    tmp_path: Path,
) -> None:
    db = tmp_path / "threads.sqlite"
    async with open_tools(config()) as tools:
        assert "trigger-elicitation-request" in tools.specs  # offered: planwerk advertises elicitation
        model = ReplayChatModel.of([plan_json([FORM])])
        async with Agent(model=model, tools=tools, retriever=False, db=db) as agent:
            first = await agent.ask(QUESTION, thread_id="form")
    assert first.answer is None
    [pending] = first.interrupts
    assert pending["kind"] == "elicitation" and (pending["id"], pending["tool"]) == ("form", FORM["name"])
    assert (
        pending["server"] == "everything" and pending["question"] == "Please provide inputs for the following fields:"
    )
    assert pending["schema"]["required"] == ["name"] and pending["schema"]["properties"]["email"]["format"] == "email"
    assert "name (string, required)" in pending["form"]

    # Everything above is gone: the sessions, the server process, the agent. A new one resumes the thread.
    async with open_tools(config()) as tools:
        model = ReplayChatModel.of(["The form is filled in."])
        async with Agent(model=model, tools=tools, retriever=False, db=db) as agent:
            wrong = await agent.resume({"name": "Ada", "email": "not an address", "colour": "red"}, thread_id="form")
            [again] = wrong.interrupts
            assert again["kind"] == "elicitation" and "unknown field(s) colour" in again["error"]
            wrong = await agent.resume({"name": "Ada", "email": "not an address"}, thread_id="form")
            [again] = wrong.interrupts
            assert "email: 'not an address' is not a 'email'" in again["error"]
            done = await agent.resume(
                {"action": "accept", "content": {"name": "Ada Lovelace", "email": "ada@example.org", "integer": 7}},
                thread_id="form",
            )
            state = await agent.state("form")
    assert done.answer == "The form is filled in."
    result = str(state["results"]["form"])
    assert "User provided the requested information" in result and "Name: Ada Lovelace" in result
    assert "Email: ada@example.org" in result and "Favorite Integer: 7" in result
    assert "It was a dark and stormy night." in result  # a field left out takes the schema's default


@pytest.mark.parametrize(("answer", "said"), [("decline", "User declined"), ({"action": "cancel"}, "User cancelled")])
async def test_decline_and_cancel_reach_the_server(everything: MCPToolSource, answer: Any, said: str) -> None:
    model = ReplayChatModel.of([plan_json([FORM]), "No form."])
    async with Agent(model=model, tools=everything, retriever=False) as agent:
        first = await agent.ask(QUESTION, thread_id="d")
        assert first.interrupts[0]["kind"] == "elicitation"
        done = await agent.resume(answer, thread_id="d")
        state = await agent.state("d")
    assert done.answer == "No form." and said in str(state["results"]["form"])


async def test_a_call_outside_a_graph_run_gets_cancel_with_a_log_line(
    everything: MCPToolSource, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger="planwerk.tools.client_features")
    result = await everything.call(FORM["name"], {})
    assert "User cancelled" in str(result)
    assert any("outside a planwerk run" in r.getMessage() for r in caplog.records)
