"""What a chat UI gets from the real ``langgraph dev`` through langgraph-sdk (issue 32): the progress text, the plan
as an AI message with ``tool_calls``, a ``ToolMessage`` per call and the answer in the ``messages-tuple`` stream; a
question asked back drawn in LangChain's HITL schema and answered with a decision, as agent-chat-ui sends it; and
a stream that disconnects with ``on_disconnect="cancel"`` stops its run (no further tool calls)."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient

from tests.serving.conftest import DevServer, add, plan, sdk_client, write_math_config, write_replay
from tests.serving.slow_tool_server import TICK_SECONDS

pytestmark = pytest.mark.timeout(300)
ASK = json.dumps({"ask_user": "Welche zwei Zahlen soll ich addieren?"})
ANSWER = "7 + 8 = 15."


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    dev = DevServer(tmp_path_factory.mktemp("dev-chat-ui"))
    try:
        yield dev.start()
    finally:
        dev.kill()


async def messages_of(client: LangGraphClient, thread: str, context: dict[str, Any], **kwargs: Any) -> list[dict]:
    """The messages of a run's ``messages-tuple`` stream, in order (each message once, by id; a streamed one's
    chunks joined, their number in ``chunks``)."""
    seen: dict[str, dict] = {}
    started = time.monotonic()
    async for part in client.runs.stream(thread, "planwerk", context=context, stream_mode="messages-tuple", **kwargs):
        assert part.event != "error", part.data
        if part.event == "messages":
            message, _ = part.data
            if not seen:  # time to the first message, for the report (not asserted: a busy machine varies)
                print(f"first message after {time.monotonic() - started:.2f} s: {message['content']!r}")
            if message["id"] in seen and message["type"] == "AIMessageChunk":
                joined = seen[message["id"]]
                joined["content"] += message["content"]
                joined["chunks"] += 1
            else:
                seen.setdefault(message["id"], {**message, "chunks": 1})
    return list(seen.values())


async def test_a_chat_sees_the_plan_tool_results_and_answers_a_question_asked_back(
    server: DevServer, tmp_path: Path
) -> None:
    client = sdk_client(server.url, timeout=120)
    context = {
        "model": write_replay(tmp_path / "asking.json", [ASK]),
        "profile": "math",
        "mcp_config": write_math_config(tmp_path / "mcp.json"),
        "today": "2026-11-22",
    }
    thread = (await client.threads.create())["thread_id"]
    first = await messages_of(client, thread, context, input={"messages": [{"role": "user", "content": "Rechne."}]})
    # The progress text at once, then the question as an AI message (agent-chat-ui draws the interrupt under it).
    assert [(m["type"], m["content"]) for m in first if m["type"] == "ai"] == [
        ("ai", "One moment, planning the steps …"),  # the math profile speaks English
        ("ai", "Welche zwei Zahlen soll ich addieren?"),
    ]
    state = await client.threads.get_state(thread)
    value = state["tasks"][0]["interrupts"][0]["value"]
    assert value["action_requests"] == [
        {"name": "ask_user", "args": {"answer": ""}, "description": "Welche zwei Zahlen soll ich addieren?"}
    ]
    assert value["review_configs"] == [{"action_name": "ask_user", "allowed_decisions": ["edit"]}]
    assert state["values"]["messages"][-1]["content"] == "Welche zwei Zahlen soll ich addieren?"

    # agent-chat-ui's answer: the edited "answer" field as a decision; the run resumes.
    context = {**context, "model": write_replay(tmp_path / "answering.json", [plan(add("a", 7, 8)), ANSWER])}
    decision = {"type": "edit", "edited_action": {"name": "ask_user", "args": {"answer": "7 und 8"}}}
    second = await messages_of(client, thread, context, command={"resume": {"decisions": [decision]}})
    [planned] = [m for m in second if m["type"] == "ai" and m.get("tool_calls")]
    assert [(c["name"], c["args"]) for c in planned["tool_calls"]] == [("add", {"arg_0": 7, "arg_1": 8})]
    [result] = [m for m in second if m["type"] == "tool"]
    assert result["tool_call_id"] == planned["tool_calls"][0]["id"] and result["status"] == "success"
    assert "15" in result["content"]
    # The answer streamed as it was decoded (the replay model yields it word by word), under its stored id.
    [answer] = [m for m in second if m["type"] == "AIMessageChunk"]
    assert answer["content"] == ANSWER and answer["chunks"] > 1
    values = (await client.threads.get_state(thread))["values"]
    assert values["clarifications"] == [{"question": "Welche zwei Zahlen soll ich addieren?", "answer": "7 und 8"}]
    assert [m["type"] for m in values["messages"]] == ["human", "ai", "ai", "human", "ai", "tool", "ai"]
    assert (values["messages"][-1]["id"], values["messages"][-1]["content"]) == (answer["id"], ANSWER)


def slow_config(folder: Path, log: Path) -> str:
    """An MCP config with the slow test server, whose calls are written to ``log``."""
    server = Path(__file__).with_name("slow_tool_server.py")
    config = {
        "mcpServers": {
            "slow": {
                "command": sys.executable,
                "args": [str(server)],
                "env": {"PLANWERK_TEST_TICK_LOG": str(log)},
                "timeout": 30,
            }
        }
    }
    path = folder / "slow.json"
    path.write_text(json.dumps(config), encoding="utf-8")
    return str(path)


def ticks(log: Path) -> list[int]:
    return [int(line.split()[0]) for line in log.read_text(encoding="ascii").splitlines()] if log.exists() else []


async def run_until_first_call(
    client: LangGraphClient, tmp_path: Path, name: str, on_disconnect: str | None
) -> list[int]:
    """Start a run of five slow calls, one per step, drop the stream at the first call, and return the calls
    that ran once the run has ended."""
    log = tmp_path / f"{name}.log"
    calls = [{"id": f"t{n}", "name": "tick", "arguments": {"n": n}} for n in range(5)]
    context = {
        "model": write_replay(tmp_path / f"{name}.json", [plan(*calls), "Fertig."]),
        "profile": "generic",
        "mcp_config": slow_config(tmp_path, log),
    }
    thread = (await client.threads.create())["thread_id"]
    stream = client.runs.stream(
        thread,
        "planwerk",
        input={"messages": [{"role": "user", "content": "Zähle."}]},
        context=context,
        stream_mode="custom",
        on_disconnect=on_disconnect,
    )
    async for part in stream:
        if part.event == "custom" and part.data.get("event") == "tool_call":
            break
    await stream.aclose()  # the client goes away (a closed tab, a stop button that only disconnects)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        runs = await client.runs.list(thread)
        if runs and runs[0]["status"] not in ("pending", "running"):
            break
        await asyncio.sleep(0.2)
    await asyncio.sleep(2 * TICK_SECONDS)  # a call that was still going would have written by now
    return ticks(log)


async def test_a_disconnected_stream_stops_its_run_with_cancel_and_by_default(
    server: DevServer, tmp_path: Path
) -> None:
    client = sdk_client(server.url, timeout=120)
    cancelled = await run_until_first_call(client, tmp_path, "cancel", "cancel")
    assert len(cancelled) <= 1, cancelled  # at most the call in flight at the disconnect; no later step started
    # planwerk's default for a stream that names none (planwerk.serving.disconnect): cancel too.
    by_default = await run_until_first_call(client, tmp_path, "default", None)
    assert len(by_default) <= 1, by_default
    # The contrast (the LangGraph server's own default): a run whose client disconnects goes on to the end.
    assert await run_until_first_call(client, tmp_path, "continue", "continue") == [0, 1, 2, 3, 4]


def test_the_disconnect_default_fills_in_only_what_a_client_left_open() -> None:
    from planwerk.serving.disconnect import default_mode, with_default

    assert with_default({"input": {}}, "cancel") == {"input": {}, "on_disconnect": "cancel"}
    assert with_default({"on_disconnect": None}, "cancel") == {"on_disconnect": "cancel"}
    assert with_default({"on_disconnect": "continue"}, "cancel") is None  # the client's choice stands
    assert with_default({"stream_resumable": True}, "cancel") is None  # it means to rejoin after a reload
    assert default_mode({}) == "cancel" and default_mode({"PLANWERK_ON_DISCONNECT": "continue"}) == "continue"
    with pytest.raises(ValueError, match="PLANWERK_ON_DISCONNECT='later' is not allowed; expected cancel or continue"):
        default_mode({"PLANWERK_ON_DISCONNECT": "later"})
