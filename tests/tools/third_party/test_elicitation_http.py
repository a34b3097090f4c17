"""Elicitation and sampling over streamable HTTP: server-everything's HTTP transport sends its requests on the
stream of the tool call's POST; they reach the call's node the same way as over stdio."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from planwerk.agent import Agent
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import MCPToolSource, open_tools
from tests.graph.tools import plan_json
from tests.tools.third_party import content_servers


@pytest.fixture
def everything_http(tmp_path: Path) -> Iterator[str]:
    """server-everything over streamable HTTP on a free loopback port; yields its MCP URL; stopped at the end."""
    with content_servers.everything_http(tmp_path) as url:
        yield url


@pytest.fixture
async def tools(everything_http: str) -> AsyncIterator[MCPToolSource]:
    """A tool source on the HTTP server."""
    async with open_tools({"mcpServers": {"everything": {"url": everything_http, "timeout": 30}}}) as source:
        assert not source.unavailable, source.unavailable
        yield source


async def test_elicitation_over_http_pauses_and_the_answer_reaches_the_server(tools: MCPToolSource) -> None:
    form = {"id": "form", "name": "trigger-elicitation-request", "arguments": {}}
    async with Agent(model=ReplayChatModel.of([plan_json([form]), "Done."]), tools=tools, retriever=False) as agent:
        first = await agent.ask("Fill in the form.", thread_id="h")
        [pending] = first.interrupts
        assert pending["kind"] == "elicitation" and pending["schema"]["required"] == ["name"]
        done = await agent.resume({"name": "Grace Hopper"}, thread_id="h")
        state = await agent.state("h")
    assert done.answer == "Done." and "Name: Grace Hopper" in str(state["results"]["form"])


async def test_sampling_over_http_is_answered_by_the_runs_model(tools: MCPToolSource) -> None:
    call = {"id": "s", "name": "trigger-sampling-request", "arguments": {"prompt": "hi", "maxTokens": 20}}
    model = ReplayChatModel.of([plan_json([call]), "Hi from the model", "Done."])
    async with Agent(model=model, tools=tools, retriever=False) as agent:
        reply = await agent.ask("Let the server sample.", thread_id="s")
        state = await agent.state("s")
    assert reply.answer == "Done." and "Hi from the model" in str(state["results"]["s"])
    assert [e["event"] for e in reply.events].count("sampling_result") == 1
