"""Sampling against the real server-everything: a server's ``sampling/createMessage`` during a call is answered by
the run's own model (the planner's replay model here), bounded (tokens capped, a per-run count, a time limit),
and shown in the stream as ``sampling_request`` / ``sampling_result`` events."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest
from langchain_core.language_models.fake_chat_models import FakeListChatModel
from mcp.types import CreateMessageRequestParams, ErrorData, SamplingMessage, TextContent

from planwerk.agent import Agent
from planwerk.core.tools import ToolError
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.client_features import DEFAULT_SAMPLING_POLICY, Sampler, SamplingBudget, SamplingPolicy
from planwerk.tools.mcp import MCPToolSource, open_tools
from tests.graph.tools import plan_json
from tests.third_party import npm_server

SAMPLE = "trigger-sampling-request"


def sampling_call(call_id: str, prompt: str, max_tokens: int = 50) -> dict[str, Any]:
    """A plan call of server-everything's sampling tool."""
    return {"id": call_id, "name": SAMPLE, "arguments": {"prompt": prompt, "maxTokens": max_tokens}}


@pytest.fixture
async def everything() -> AsyncIterator[MCPToolSource]:
    """A tool source on a fresh server-everything over stdio."""
    config = {"mcpServers": {"everything": {"command": npm_server("mcp-server-everything"), "timeout": 30}}}
    async with open_tools(config) as tools:
        assert not tools.unavailable, tools.unavailable
        yield tools


async def test_the_runs_model_answers_and_the_stream_shows_it(everything: MCPToolSource) -> None:
    assert SAMPLE in everything.specs  # offered: planwerk advertises sampling
    model = ReplayChatModel.of([plan_json([sampling_call("s", "Say hello", max_tokens=1000)]), "Hello there", "Done."])
    async with Agent(model=model, tools=everything, retriever=False) as agent:
        reply = await agent.ask("Let the server ask the model.", thread_id="s")
        state = await agent.state("s")
    assert reply.answer == "Done."
    events = [e["event"] for e in reply.events]
    assert events.index("tool_call") < events.index("sampling_request") < events.index("sampling_result")
    assert events.index("sampling_result") < events.index("tool_result")
    request = next(e for e in reply.events if e["event"] == "sampling_request")
    assert (request["id"], request["tool"], request["server"]) == ("s", SAMPLE, "everything")
    assert request["max_tokens"] == DEFAULT_SAMPLING_POLICY.max_tokens  # the server's 1000, capped
    assert request["prompt"] == f"Resource {SAMPLE} context: Say hello"
    result = next(e for e in reply.events if e["event"] == "sampling_result")
    assert result["text"] == "Hello there" and result["stop_reason"] == "endTurn" and "error" not in result
    # The model got the server's system prompt and message; the server got the model's text.
    assert [m.content for m in model.prompts[1]] == ["You are a helpful test server.", request["prompt"]]
    assert '"text": "Hello there"' in str(state["results"]["s"])


async def test_a_run_answers_at_most_its_limit_of_sampling_requests(everything: MCPToolSource) -> None:
    limit = DEFAULT_SAMPLING_POLICY.max_requests_per_run
    calls = [[sampling_call(f"s{i}", f"Request {i}")] for i in range(limit + 1)]  # one per step: one at a time
    model = ReplayChatModel.of([plan_json(*calls), *(f"Answer {i}" for i in range(limit)), "Done."])
    async with Agent(model=model, tools=everything, retriever=False, context=Context(max_plan_attempts=1)) as agent:
        reply = await agent.ask("Sample more often than allowed.", thread_id="b")
        state = await agent.state("b")
    records = {c["id"]: c for c in state["calls"]}
    for i in range(limit):
        assert records[f"s{i}"]["status"] == "ok" and f"Answer {i}" in str(records[f"s{i}"]["result"])
    over = records[f"s{limit}"]
    assert over["status"] == "error" and f"this run has used its {limit} sampling requests" in over["error"]
    results = [e for e in reply.events if e["event"] == "sampling_result"]
    assert [("error" in e) for e in results] == [False] * limit + [True]


async def test_a_call_outside_a_graph_run_is_refused_saying_why(everything: MCPToolSource) -> None:
    with pytest.raises(ToolError, match="did not sample: the call was made outside a planwerk run"):
        await everything.call(SAMPLE, {"prompt": "hi", "maxTokens": 5})


def params(text: str = "hi", max_tokens: int = 10) -> CreateMessageRequestParams:
    """A one-message sampling request."""
    message = SamplingMessage(role="user", content=TextContent(type="text", text=text))
    return CreateMessageRequestParams(messages=[message], maxTokens=max_tokens)


async def test_a_model_that_takes_too_long_gives_the_server_an_error() -> None:
    slow = FakeListChatModel(responses=["late"], sleep=1.0)  # sleeps in a worker thread: the loop stays free
    events: list[dict[str, Any]] = []

    async def model() -> FakeListChatModel:
        return slow

    sampler = Sampler(
        model=model,
        budget=SamplingBudget(3),
        emit=events.append,
        call_id="c",
        tool="t",
        policy=SamplingPolicy(timeout_s=0.05),
    )
    answer = await sampler.sample("srv", params())
    assert isinstance(answer, ErrorData) and "did not answer within 0.05 s" in answer.message
    assert events[-1]["event"] == "sampling_result" and "did not answer" in events[-1]["error"]
    await asyncio.sleep(0)  # nothing else pending


async def test_non_text_content_and_long_prompts_are_refused_before_the_model_runs() -> None:
    model = FakeListChatModel(responses=["never"])

    async def factory() -> FakeListChatModel:
        return model

    sampler = Sampler(
        model=factory, budget=SamplingBudget(3), emit=lambda e: None, call_id="c", tool="t",
        policy=SamplingPolicy(max_prompt_chars=10),
    )  # fmt: skip
    image = SamplingMessage(role="user", content={"type": "image", "data": "AAAA", "mimeType": "image/png"})
    answer = await sampler.sample("srv", CreateMessageRequestParams(messages=[image], maxTokens=5))
    assert isinstance(answer, ErrorData) and "holds image content; planwerk samples text only" in answer.message
    answer = await sampler.sample("srv", params("x" * 11))
    assert isinstance(answer, ErrorData) and "11 characters, over the limit of 10" in answer.message
    assert model.i == 0 and sampler.budget.used == 0  # refused before counting or calling the model
