"""planwerk under a real ``langgraph dev`` server, driven with langgraph-sdk: schemas, threads, streaming,
interrupts, resume, state and history; a crash (SIGKILL) loses no finished step.

Each server runs in its own temp folder (``.langgraph_api`` lands in the working directory) with the repo's
``langgraph.json``, offline (no analytics, no version check, no LangSmith), a replay model and the bundled math
MCP server over stdio.
"""

from __future__ import annotations

import json
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph_sdk.client import LangGraphClient

from planwerk.prompts.math import MATH_PERSONA
from tests.serving.conftest import DevServer, add, plan, sdk_client, write_math_config, write_replay

pytestmark = pytest.mark.timeout(120)

ASK = json.dumps({"ask_user": "Welche zwei Zahlen soll ich addieren?"})
OPS_FILE = Path(".langgraph_api") / ".langgraph_ops.pckl"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """One server for the module's API tests; stopped with SIGTERM at the end (it must exit cleanly)."""
    dev = DevServer(tmp_path_factory.mktemp("dev-server"))
    try:
        dev.start()
        print(f"\nlanggraph dev answered /ok after {dev.startup_s:.2f} s")
        yield dev
        assert dev.stop(), dev.tail()
        assert "BlockingError" not in dev.log.read_text(errors="replace")
    finally:
        dev.kill()


@pytest.fixture
async def client(server: DevServer) -> AsyncIterator[LangGraphClient]:
    yield sdk_client(server.url, timeout=60)


async def stream(client: LangGraphClient, thread_id: str, assistant: str, **kwargs: Any) -> list[tuple[str, Any]]:
    """One run's stream as ``(event, data)`` pairs, planwerk's custom events and node updates included."""
    kwargs.setdefault("stream_mode", ["custom", "updates"])
    return [(part.event, part.data) async for part in client.runs.stream(thread_id, assistant, **kwargs)]


def custom(parts: list[tuple[str, Any]]) -> list[dict[str, Any]]:
    return [data for event, data in parts if event == "custom"]


async def test_graph_registered_with_context_form_and_state_schemas(server: DevServer, client: LangGraphClient) -> None:
    assistants = await client.assistants.search(graph_id="planwerk")
    assert [a["name"] for a in assistants] == ["planwerk"]
    schemas = await client.assistants.get_schemas(assistants[0]["assistant_id"])
    context = schemas["context_schema"]["properties"]
    assert {"model", "profile", "mcp_config", "retrieval_k", "retrieval_threshold", "tool_timeout_s"} <= context.keys()
    # Studio offers the built-in names; a profile file's path is a string too.
    names = [option["enum"] for option in context["profile"].get("anyOf", [context["profile"]]) if "enum" in option]
    assert context["profile"]["default"] == "auto" and names == [["auto", "travel", "math", "generic", "generic-en"]]
    assert all(field.get("description") for field in context.values())  # Studio's form explains every field
    assert list(schemas["input_schema"]["properties"]) == ["messages"]
    assert {"messages", "answer", "plan", "results", "calls"} <= schemas["output_schema"]["properties"].keys()
    assert {"plan", "results", "calls", "clarifications"} <= schemas["state_schema"]["properties"].keys()
    graph = await client.assistants.get_graph(assistants[0]["assistant_id"])
    assert {"prepare", "retrieve", "plan", "check", "ask_user", "resolve_refs", "call_tool", "verify", "finalize"} <= {
        node["id"] for node in graph["nodes"]
    }
    log = server.log.read_text(errors="replace")
    assert "Using custom checkpointer: ServerSqliteSaver" in log
    assert (server.folder / "checkpoints.sqlite").is_file()


async def test_thread_conversation_interrupt_resume_state_and_history(
    server: DevServer, client: LangGraphClient, tmp_path: Path
) -> None:
    # One replay file per run: the factory resolves the model once per run.
    model = write_replay(tmp_path / "assistant.json", [plan(add("s", 2, 3)), "2 + 3 = 5."])
    # The planner's own answer is checked too: it states no number that no call delivered (else a regeneration).
    per_run_model = write_replay(tmp_path / "per-run.json", [json.dumps({"steps": [], "final": "Mal 4: multiply."})])
    asking_model = write_replay(tmp_path / "asking.json", [ASK])
    answering_model = write_replay(tmp_path / "answering.json", [plan(add("t", 7, 8)), "7 + 8 = 15."])
    # Context per assistant: model, profile, MCP config; runs of this assistant inherit it.
    assistant = await client.assistants.create(
        "planwerk",
        context={
            "model": model,
            "profile": "math",
            "mcp_config": write_math_config(tmp_path / "mcp.json"),
            "today": "2026-11-22",
        },
        name="math-replay",
    )
    aid = assistant["assistant_id"]
    thread = (await client.threads.create())["thread_id"]

    # Run 1: planwerk's events arrive on the custom stream; the math server runs the call over MCP.
    first = await stream(client, thread, aid, input={"messages": [{"role": "user", "content": "Was ist 2 + 3?"}]})
    events = custom(first)
    assert [e["event"] for e in events] == [
        "start",
        "retrieval",
        "plan",
        "step",
        "tool_call",
        "tool_result",
        "final_answer",
    ]
    assert events[5]["result"] == {"result": 5.0}
    assert events[-1]["answer"] == "2 + 3 = 5." and events[-1]["metadata"]["tool_calls"] == 1
    assert any(event == "updates" and "call_tool" in data for event, data in first)

    # Run 2, per-run context (another model) on top of the assistant's: the model is shown the first turn.
    second = await stream(
        client,
        thread,
        aid,
        input={"messages": [{"role": "user", "content": "Und mal 4?"}]},
        context={"model": per_run_model},
        stream_mode=["custom", "events"],
    )
    assert custom(second)[-1]["answer"] == "Mal 4: multiply."
    prompts = [
        data["data"]["input"]["messages"][0]
        for event, data in second
        if event == "events" and data["event"] == "on_chat_model_start"
    ]
    assert len(prompts) == 1
    texts = [m["content"] if isinstance(m, dict) else m.content for m in prompts[0]]
    assert texts[0].startswith(MATH_PERSONA[:40])  # the assistant's profile still applies
    assert "Was ist 2 + 3?" in texts and "2 + 3 = 5." in texts

    # Run 3: the planner asks the user; the thread is interrupted with the question.
    third = await stream(
        client,
        thread,
        aid,
        input={"messages": [{"role": "user", "content": "Rechne was aus."}]},
        context={"model": asking_model},
    )
    assert [e["event"] for e in custom(third)][-1] == "ask_user"
    interrupts = [data["__interrupt__"] for event, data in third if event == "updates" and "__interrupt__" in data]
    value = interrupts[0][0]["value"]
    assert (value["kind"], value["question"]) == ("ask_user", "Welche zwei Zahlen soll ich addieren?")
    assert value["action_requests"][0]["name"] == "ask_user"  # LangChain's HITL schema, for chat UIs
    record = await client.threads.get(thread)
    assert record["status"] == "interrupted"
    state = await client.threads.get_state(thread)
    assert state["next"] == ["ask_user"]
    assert state["tasks"][0]["interrupts"][0]["value"]["question"] == "Welche zwei Zahlen soll ich addieren?"

    # Resume with the answer: the run finishes the question.
    resumed = await stream(client, thread, aid, command={"resume": "7 und 8"}, context={"model": answering_model})
    # The ask_user event came with the question, not again now (the node re-runs from its start on resume).
    assert [e["event"] for e in custom(resumed)] == ["plan", "step", "tool_call", "tool_result", "final_answer"]
    assert custom(resumed)[-1]["answer"] == "7 + 8 = 15."
    assert (await client.threads.get(thread))["status"] == "idle"

    state = await client.threads.get_state(thread)
    values = state["values"]
    assert state["next"] == []
    # The conversation (without the progress texts, plans and tool messages a chat shows beside it).
    talk = [
        m
        for m in values["messages"]
        if m["type"] != "tool" and not m.get("tool_calls") and m["response_metadata"].get("planwerk") != "progress"
    ]
    assert [m["type"] for m in talk] == ["human", "ai", "human", "ai", "human", "ai", "human", "ai"]
    assert talk[-3]["content"] == "Welche zwei Zahlen soll ich addieren?"
    assert values["answer"] == "7 + 8 = 15." and values["user"]["answer"] == "7 und 8"
    assert values["results"] == {"t": {"result": 15.0}}
    assert [(c["tool"], c["args"], c["status"]) for c in values["calls"]] == [("add", {"arg_0": 7, "arg_1": 8}, "ok")]

    history = await client.threads.get_history(thread, limit=200)
    steps = [h["metadata"]["step"] for h in history]
    assert steps == sorted(steps, reverse=True)  # newest first
    assert any(h["next"] == ["ask_user"] for h in history)
    assert sum(1 for h in history if h["metadata"]["source"] == "input") == 3  # one per question
    # The runs under a thread are listed with their status.
    runs = await client.runs.list(thread)
    assert len(runs) == 4 and {r["status"] for r in runs} == {"success"}


async def test_bad_context_fails_the_run_with_a_clear_error(client: LangGraphClient, tmp_path: Path) -> None:
    thread = (await client.threads.create())["thread_id"]
    parts = await stream(
        client,
        thread,
        "planwerk",
        input={"messages": [{"role": "user", "content": "1+1?"}]},
        context={"profile": "astrology"},
    )
    errors = [data for event, data in parts if event == "error"]
    assert errors and "unknown profile 'astrology'" in json.dumps(errors[0])
    assert (await client.threads.get(thread))["status"] == "error"


def wait_for_ops_flush(folder: Path, after: float, timeout: float = 20.0) -> None:
    """Wait until ``langgraph dev`` rewrote its thread records (every 10 s) after ``after`` (epoch seconds)."""
    ops = folder / OPS_FILE
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if ops.exists() and ops.stat().st_mtime > after:
            return
        time.sleep(0.2)
    raise AssertionError(f"{ops} was not rewritten within {timeout:g} s")


async def test_sigkilled_server_loses_no_finished_step(dev_server_factory: type[DevServer], tmp_path: Path) -> None:
    folder = tmp_path / "crash"
    folder.mkdir()
    mcp = write_math_config(tmp_path / "mcp.json")
    before = write_replay(tmp_path / "before-crash.json", [ASK])
    first = dev_server_factory(folder).start()
    client = sdk_client(first.url, timeout=60)
    thread = (await client.threads.create())["thread_id"]
    context = {"model": before, "profile": "math", "mcp_config": mcp}
    parts = await stream(
        client,
        thread,
        "planwerk",
        context=context,
        input={"messages": [{"role": "user", "content": "Addiere zwei Zahlen."}]},
    )
    assert custom(parts)[-1]["event"] == "ask_user"
    interrupted_at = time.time()
    # The checkpoints are in SQLite at once; the dev server's own thread record reaches disk every 10 s.
    wait_for_ops_flush(folder, interrupted_at)
    first.kill()
    assert first.process is not None and first.process.returncode < 0

    second = dev_server_factory(folder, port=first.port).start()
    client = sdk_client(second.url, timeout=60)
    assert (await client.threads.get(thread))["status"] == "interrupted"
    state = await client.threads.get_state(thread)
    assert state["next"] == ["ask_user"]
    assert state["values"]["plan"]["ask_user"] == "Welche zwei Zahlen soll ich addieren?"
    # The planner is not asked again for the question: only the reply after the answer is needed.
    after = write_replay(tmp_path / "after-crash.json", [plan(add("u", 20, 22)), "20 + 22 = 42."])
    resumed = await stream(
        client, thread, "planwerk", command={"resume": "20 und 22"}, context={**context, "model": after}
    )
    assert custom(resumed)[-1]["answer"] == "20 + 22 = 42."
    assert (await client.threads.get_state(thread))["values"]["results"] == {"u": {"result": 42.0}}
    assert second.stop(), second.tail()
