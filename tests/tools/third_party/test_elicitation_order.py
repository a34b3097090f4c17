"""The order of a call's interrupts across node re-runs (an approval, then the server's elicitation), and what
happens to a request that cannot be attributed to one call."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator, Mapping
from dataclasses import replace
from typing import Any

import pytest
from mcp.types import ElicitRequestFormParams, ElicitResult

from planwerk.agent import Agent
from planwerk.core.tools import ToolSpec
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.client_features import CURRENT_CALL, CallChannel, ServerFeatures
from planwerk.tools.mcp import MCPToolSource, open_tools
from tests.graph.tools import plan_json
from tests.third_party import npm_server

FORM = {"id": "form", "name": "trigger-elicitation-request", "arguments": {}}


class Destructive:
    """The real server's tools, with ``trigger-elicitation-request`` marked destructive (needs approval first)."""

    def __init__(self, tools: MCPToolSource):
        self._tools = tools
        self._specs = {name: replace(spec, destructive=name == FORM["name"]) for name, spec in tools.specs.items()}

    @property
    def specs(self) -> Mapping[str, ToolSpec]:
        """The tools by name."""
        return self._specs

    async def call(self, name: str, arguments: Mapping[str, Any]) -> Any:
        """The real call."""
        return await self._tools.call(name, arguments)


@pytest.fixture
async def everything() -> AsyncIterator[MCPToolSource]:
    """A tool source on a fresh server-everything over stdio."""
    config = {"mcpServers": {"everything": {"command": npm_server("mcp-server-everything"), "timeout": 30}}}
    async with open_tools(config) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools


async def test_an_approval_then_an_elicitation_each_pause_and_the_answers_keep_their_order(
    everything: MCPToolSource,
) -> None:
    model = ReplayChatModel.of([plan_json([FORM]), "Done."])
    async with Agent(model=model, tools=Destructive(everything), retriever=False) as agent:
        first = await agent.ask("Fill in the form.", thread_id="o")
        assert [i["kind"] for i in first.interrupts] == ["approval"]
        second = await agent.resume("approve", thread_id="o")  # the node runs again: approved, the call is made
        assert [i["kind"] for i in second.interrupts] == ["elicitation"]
        done = await agent.resume({"name": "Ada"}, thread_id="o")  # again: approval and answer by their order
        state = await agent.state("o")
    assert done.answer == "Done." and "Name: Ada" in str(state["results"]["form"])
    assert [c["id"] for c in state["calls"]] == ["form"]  # one recorded call, however often the node ran


def form() -> ElicitRequestFormParams:
    """A one-field form."""
    return ElicitRequestFormParams(message="Name?", requestedSchema={"type": "object", "properties": {}})


async def test_a_request_during_two_calls_to_the_server_is_cancelled_with_a_log_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.WARNING, logger="planwerk.tools.client_features")
    features = ServerFeatures("srv")
    loop = asyncio.get_running_loop()
    first, second = loop.create_future(), loop.create_future()
    for call_id, call in (("a", first), ("b", second)):
        token = CURRENT_CALL.set(CallChannel(call_id=call_id, tool="t"))
        features.track(call)
        CURRENT_CALL.reset(token)
    assert await features.elicit(None, form()) == ElicitResult(action="cancel")  # type: ignore[arg-type]
    assert "while 2 calls to server srv were in flight" in caplog.records[-1].getMessage()
    second.set_result(None)  # one call left: its channel gets the request
    await asyncio.sleep(0)  # the done callback runs
    [channel] = features.in_flight
    asking = asyncio.ensure_future(features.elicit(None, form()))  # type: ignore[arg-type]
    pending = await asyncio.wait_for(channel.elicitations.get(), timeout=5)
    assert pending.request.message == "Name?" and channel.call_id == "a"
    pending.answer.set_result(ElicitResult(action="decline"))
    assert await asyncio.wait_for(asking, timeout=5) == ElicitResult(action="decline")
    first.set_result(None)
