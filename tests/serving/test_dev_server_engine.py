"""The engine as ``langgraph dev`` shows it, driven with langgraph-sdk: the resolver and one node run per call in
``updates``, a ``messages-tuple`` stream that carries the answer once and no plan JSON."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient

from tests.serving.conftest import DevServer, add, sdk_client, write_math_config, write_replay

pytestmark = pytest.mark.timeout(120)
ANSWER = "Die Summe ist 10."


def two_steps() -> str:
    """Step 0: two independent additions; step 1: their sum (references to both)."""
    total = {"id": "total", "name": "add", "arguments": {"arg_0": {"$ref": "x.result"}, "arg_1": {"$ref": "y.result"}}}
    steps = [
        {"description": "both", "tools": [add("x", 1, 2), add("y", 3, 4)]},
        {"description": "sum", "tools": [total]},
    ]
    return json.dumps({"steps": steps, "final": None})


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    dev = DevServer(tmp_path_factory.mktemp("dev-engine"))
    try:
        yield dev.start()
        assert dev.stop(), dev.tail()
    finally:
        dev.kill()


@pytest.fixture
async def client(server: DevServer) -> AsyncIterator[LangGraphClient]:
    yield sdk_client(server.url, timeout=60)


def context(tmp_path: Path, name: str) -> dict[str, Any]:
    return {
        "model": write_replay(tmp_path / f"{name}.json", [two_steps(), ANSWER]),
        "profile": "math",
        "mcp_config": write_math_config(tmp_path / "mcp.json"),
        "today": "2026-11-22",
    }


async def test_the_drawing_has_the_engines_nodes(client: LangGraphClient) -> None:
    [assistant] = await client.assistants.search(graph_id="planwerk")
    graph = await client.assistants.get_graph(assistant["assistant_id"])
    nodes = {node["id"] for node in graph["nodes"]}
    assert {"plan", "check", "resolve_refs", "call_tool", "verify", "finalize", "ask_user"} <= nodes
    assert "execute" not in nodes
    edges = {(edge["source"], edge["target"]) for edge in graph["edges"]}
    assert {("resolve_refs", "call_tool"), ("call_tool", "resolve_refs"), ("resolve_refs", "verify")} <= edges


async def test_updates_show_the_resolver_and_one_node_run_per_call(client: LangGraphClient, tmp_path: Path) -> None:
    thread = await client.threads.create()
    nodes: list[str] = []
    calls: list[dict[str, Any]] = []
    async for part in client.runs.stream(
        thread["thread_id"], "planwerk", input={"messages": [{"role": "user", "content": "(1+2)+(3+4)?"}]},
        context=context(tmp_path, "updates"), stream_mode="updates",
    ):  # fmt: skip
        if part.event == "updates":
            nodes.extend(part.data)
            calls.extend(
                record for update in part.data.values() if isinstance(update, dict)
                for record in (update.get("calls") or [])
            )  # fmt: skip
    assert nodes.count("planwerk_model_call") == 2  # the durable marker before each model call (plan, answer)
    nodes = [node for node in nodes if node != "planwerk_model_call"]
    assert nodes == ["prepare", "retrieve", "plan", "check", "resolve_refs", "call_tool", "call_tool",
                     "resolve_refs", "call_tool", "resolve_refs", "verify", "finalize"]  # fmt: skip
    assert {(c["id"], c["step"], c["status"]) for c in calls} == {("x", 0, "ok"), ("y", 0, "ok"), ("total", 1, "ok")}
    state = await client.threads.get_state(thread["thread_id"])
    assert state["values"]["results"]["total"] == {"result": 10}


async def test_messages_tuple_carries_the_answer_once_and_no_plan(client: LangGraphClient, tmp_path: Path) -> None:
    thread = await client.threads.create()
    texts: dict[str, str] = {}
    async for part in client.runs.stream(
        thread["thread_id"], "planwerk", input={"messages": [{"role": "user", "content": "(1+2)+(3+4)?"}]},
        context=context(tmp_path, "messages"), stream_mode="messages-tuple",
    ):  # fmt: skip
        if part.event == "messages":
            message, _metadata = part.data
            if message["type"] in ("ai", "AIMessageChunk"):
                texts[message["id"]] = texts.get(message["id"], "") + str(message["content"])
    # The progress text, the plan's message (its tool calls), the answer once; the planner's JSON never appears.
    assert list(texts.values())[-1] == ANSWER and list(texts.values()).count(ANSWER) == 1 and len(texts) == 3
    assert not any("{" in text for text in texts.values())
    state = await client.threads.get_state(thread["thread_id"])
    assert state["values"]["messages"][-1]["id"] == list(texts)[-1]
