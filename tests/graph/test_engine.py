"""The engine as a graph: resolver and per-call node runs, re-ordered steps, approvals, retries, clean streams.

Parametrized over checkpointer backends (memory, SQLite, PostgreSQL: tests/graph/conftest.py) where a thread is
paused and resumed.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessageChunk
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver

from planwerk.agent import Agent
from planwerk.core.tools import ToolError
from planwerk.graph.builder import build_graph
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.base import FunctionToolSource
from tests.graph.tools import GEO, WEATHER, plan_json, travel_tools

SNAPSHOT = Path(__file__).with_name("graph.mmd")
QUESTION = "Wie ist heute das Wetter in Barcelona?"


def notes(log: list[tuple[str, dict[str, Any]]]) -> FunctionToolSource:
    """A store with a destructive write; every call is logged with its arguments."""
    store: dict[str, str] = {}

    async def write_note(key: str, text: str) -> dict:
        """Store a note."""
        log.append(("write_note", {"key": key, "text": text}))
        store[key] = text
        return {"key": key, "written": True}

    async def read_note(key: str) -> dict:
        """Read a note."""
        log.append(("read_note", {"key": key}))
        if key not in store:
            raise ToolError(f"no note {key!r}", tool="read_note", kind="not_found")
        return {"key": key, "text": store[key]}

    return FunctionToolSource([write_note, read_note], destructive={"write_note"})


WRITE = {"id": "w", "name": "write_note", "arguments": {"key": "k", "text": "hallo"}}
READ = {"id": "r", "name": "read_note", "arguments": {"key": "k"}}


def test_the_drawing_shows_planner_gate_resolver_per_call_node_verifier_and_finalizer() -> None:
    drawing = build_graph(Deps()).get_graph().draw_mermaid()
    # A topology change is a visible diff: update tests/graph/graph.mmd with the new drawing when it is intended.
    assert drawing == SNAPSHOT.read_text(encoding="utf-8")
    for edge in ("plan --> check", "check -.-> resolve_refs", "resolve_refs -.-> call_tool",
                 "call_tool --> resolve_refs", "resolve_refs -.-> verify", "verify -.-> answer",
                 "answer -.-> check_answer", "check_answer -.-> regenerate", "regenerate --> check_answer",
                 "check_answer -.-> fallback", "check_answer -.-> __end__"):  # fmt: skip
        assert edge in drawing


async def test_updates_show_the_resolver_and_one_node_run_per_call(checkpointer: BaseCheckpointSaver) -> None:
    two_cities = {**GEO, "id": "geo2", "arguments": {"destination": "Rom"}}
    model = ReplayChatModel.of([plan_json([GEO, two_cities], [WEATHER]), "17 °C."])
    graph = build_graph(Deps(chat_model=model, tools=travel_tools()), checkpointer=checkpointer)
    config = {"configurable": {"thread_id": "u"}}
    nodes = []
    async for update in graph.astream(
        {"messages": [("user", "Wie ist heute das Wetter in Barcelona und in Rom?")]},
        config,
        context=Context(today="2026-11-22"),
        stream_mode="updates",
    ):
        nodes.extend(update)
    # Each model call is preceded by a durable marker task (llm_calls counts calls lost to a crash): one for the
    # plan, one for the answer.
    assert nodes.count("planwerk_model_call") == 2
    nodes = [node for node in nodes if node != "planwerk_model_call"]
    assert nodes == ["prepare", "retrieve", "plan", "check", "resolve_refs", "call_tool", "call_tool",
                     "resolve_refs", "call_tool", "resolve_refs", "verify", "answer", "check_answer"]  # fmt: skip
    history = [s async for s in graph.aget_state_history(config)]
    # After step 0 the checkpoint holds both results, before step 1 runs.
    between = next(s for s in history if s.next == ("call_tool",) and "geo" in s.values.get("results", {}))
    assert set(between.values["results"]) == {"geo", "geo2"}


async def test_steps_that_contradict_references_are_reordered_not_rejected(checkpointer: BaseCheckpointSaver) -> None:
    model = ReplayChatModel.of([plan_json([WEATHER, GEO]), "17 °C."])  # one step, weather before geocode
    log: list = []
    async with Agent(model=model, tools=travel_tools(log), retriever=False, checkpointer=checkpointer,
                     context=Context(today="2026-11-22")) as agent:  # fmt: skip
        reply = await agent.ask(QUESTION, thread_id="r")
    plan_event = next(e for e in reply.events if e["event"] == "plan")
    assert plan_event["reordered"] is True
    assert [[c["id"] for c in s["tools"]] for s in plan_event["plan"]["steps"]] == [["geo"], ["wx"]]
    assert [name for name, _ in log] == ["geocode", "get_weather"] and model.calls == 2
    assert not [e for e in reply.events if e["event"] == "replan"]


async def test_a_destructive_call_waits_for_approval_and_runs_when_approved(checkpointer: BaseCheckpointSaver) -> None:
    log: list = []
    model = ReplayChatModel.of([plan_json([WRITE], [READ]), "Notiz gespeichert."])
    async with Agent(model=model, tools=notes(log), retriever=False, checkpointer=checkpointer) as agent:
        first = await agent.ask("Speichere hallo unter k.", thread_id="a")
        assert first.answer is None and log == []
        [pending] = first.interrupts
        assert pending["kind"] == "approval" and pending["tool"] == "write_note"
        assert pending["args"] == {"key": "k", "text": "hallo"} and "write_note" in pending["question"]
        assert [e["event"] for e in first.events].count("approval_required") == 1
        with pytest.raises(ValueError, match="unknown approval answer 'vielleicht'"):
            await agent.resume("vielleicht", thread_id="a")  # checked before anything runs; still waiting
        second = await agent.resume("approve", thread_id="a")
        state = await agent.state("a")
    assert second.answer == "Notiz gespeichert."
    assert log == [("write_note", {"key": "k", "text": "hallo"}), ("read_note", {"key": "k"})]
    assert state["results"]["r"] == {"key": "k", "text": "hallo"}
    assert "approval_required" not in [e["event"] for e in second.events]  # emitted once, not again on resume


async def test_an_approval_can_edit_the_arguments_or_reject_the_call(checkpointer: BaseCheckpointSaver) -> None:
    log: list = []
    replies = [plan_json([WRITE], [READ]), "Gespeichert.", plan_json([WRITE]), "Nicht gespeichert."]
    async with Agent(model=ReplayChatModel.of(replies), tools=notes(log), retriever=False,
                     checkpointer=checkpointer) as agent:  # fmt: skip
        await agent.ask("Speichere hallo unter k.", thread_id="e")
        edited = await agent.resume({"action": "edit", "args": {"key": "k", "text": "servus"}}, thread_id="e")
        assert (await agent.state("e"))["results"]["r"]["text"] == "servus"
        assert edited.answer == "Gespeichert."
        log.clear()
        await agent.ask("Speichere hallo unter k.", thread_id="x")
        rejected = await agent.resume({"action": "reject", "reason": "lieber nicht"}, thread_id="x")
        state = await agent.state("x")
    assert log == []  # the rejected call never ran
    assert state["calls"][-1]["kind"] == "rejected" and "lieber nicht" in state["calls"][-1]["error"]
    assert rejected.answer == "Nicht gespeichert."  # the verifier gives up honestly, no replan around the person


async def test_approvals_of_parallel_calls_are_answered_one_by_one_or_together() -> None:
    log: list = []
    writes = [{**WRITE, "id": "w1"}, {**WRITE, "id": "w2", "arguments": {"key": "j", "text": "b"}}]
    model = ReplayChatModel.of([plan_json(writes), "ok", plan_json(writes), "ok"])
    async with Agent(model=model, tools=notes(log), retriever=False) as agent:
        first = await agent.ask("Zwei Notizen.", thread_id="p")
        assert sorted(i["id"] for i in first.interrupts) == ["w1", "w2"]
        w1 = next(i for i in first.interrupts if i["id"] == "w1")
        partly = await agent.resume("approve", thread_id="p", interrupt_id=w1["interrupt_id"])
        assert [i["id"] for i in partly.interrupts] == ["w2"] and [k for _, k in log] == [{"key": "k", "text": "hallo"}]
        done = await agent.resume("reject", thread_id="p")
        assert done.answer == "ok"
        first = await agent.ask("Zwei Notizen.", thread_id="q")
        done = await agent.resume("approve", thread_id="q")  # one answer for every pending approval
    assert done.answer == "ok" and len(log) == 3


async def test_approval_can_be_switched_off_per_run() -> None:
    log: list = []
    model = ReplayChatModel.of([plan_json([WRITE]), "ok"])
    async with Agent(model=model, tools=notes(log), retriever=False,
                     context=Context(approve_destructive=False)) as agent:  # fmt: skip
        reply = await agent.ask("Speichere.", thread_id="n")
    assert reply.answer == "ok" and len(log) == 1


def flaky(failures: int, kind: str = "unavailable") -> tuple[FunctionToolSource, list[int]]:
    attempts: list[int] = []

    async def fetch(x: int) -> dict:
        """Fails ``failures`` times, then answers."""
        attempts.append(x)
        if len(attempts) <= failures:
            raise ToolError("service unreachable", tool="fetch", kind=kind)  # type: ignore[arg-type]
        return {"x": x}

    return FunctionToolSource([fetch]), attempts


async def test_transient_failures_are_retried_by_the_nodes_retry_policy(checkpointer: BaseCheckpointSaver) -> None:
    tools, attempts = flaky(1)
    plan = plan_json([{"id": "f", "name": "fetch", "arguments": {"x": 1}}])
    graph_deps = Deps(chat_model=ReplayChatModel.of([plan, "ok"]), tools=tools)
    from planwerk.graph.nodes.call_tool import call_retry_policy

    graph = build_graph(graph_deps, checkpointer=checkpointer, call_retry=call_retry_policy(3, initial_interval=0.01))
    events = [
        chunk
        async for chunk in graph.astream(
            {"messages": [("user", "Hol x.")]}, {"configurable": {"thread_id": "t"}}, stream_mode="custom"
        )
    ]
    assert attempts == [1, 1]
    error = next(e for e in events if e["event"] == "tool_error")
    assert error["kind"] == "unavailable" and error["retrying"] is True
    assert [e["attempt"] for e in events if e["event"] == "tool_call"] == [1, 2]
    state = await graph.aget_state({"configurable": {"thread_id": "t"}})
    assert [c["status"] for c in state.values["calls"]] == ["ok"]


@pytest.mark.parametrize(("retry_attempts", "kind", "expected_attempts"), [(1, "unavailable", 1), (3, "error", 1),
                                                                            (2, "timeout", 2)])  # fmt: skip
async def test_retries_are_bounded_and_only_for_transient_kinds(
    retry_attempts: int, kind: str, expected_attempts: int
) -> None:
    tools, attempts = flaky(5, kind)
    plan = plan_json([{"id": "f", "name": "fetch", "arguments": {"x": 1}}])
    from planwerk.graph.nodes.call_tool import call_retry_policy

    graph = build_graph(
        Deps(chat_model=ReplayChatModel.of([plan, "Der Dienst ist nicht erreichbar.", plan, "?"]), tools=tools),
        call_retry=call_retry_policy(5, initial_interval=0.01),
    )
    result = await graph.ainvoke(
        {"messages": [("user", "Hol x.")]},
        context=Context(tool_retry_attempts=retry_attempts, max_plan_attempts=1),
    )
    assert len(attempts) == expected_attempts
    assert result["calls"][-1]["kind"] == kind


@pytest.mark.parametrize(
    "answers",
    [["Heute 17 °C in Barcelona."], ["Heute 22 °C und sonnig in Barcelona.", "Heute 17 °C in Barcelona."]],
    ids=["accepted", "rejected-then-regenerated"],
)
async def test_the_chat_stream_shows_only_the_answer_once(
    checkpointer: BaseCheckpointSaver, answers: list[str]
) -> None:
    # Each draft streams under its own id; a rejected one (22 °C: no result says so) is removed from the thread's
    # messages (a chat reading values drops it: tests/graph/test_answer_stream.py); the accepted one arrives once.
    model = ReplayChatModel.of([plan_json([GEO], [WEATHER]), *answers])
    graph = build_graph(Deps(chat_model=model, tools=travel_tools()), checkpointer=checkpointer)
    config = {"configurable": {"thread_id": "m"}}
    chunks: dict[str, str] = {}
    tool_calls, tool_results = [], []
    async for message, _ in graph.astream(
        {"messages": [("user", QUESTION)]}, config, context=Context(today="2026-11-22"), stream_mode="messages"
    ):
        if message.type in ("ai", "AIMessageChunk"):
            chunks[message.id] = chunks.get(message.id, "") + str(message.content)
            tool_calls += message.tool_calls
        elif message.type == "tool":
            tool_results.append(message)
    # The progress text, the plan (its tool calls) and the drafts, each once: no plan JSON.
    progress, plan, *drafts = chunks.values()
    assert progress == "Einen Moment, ich plane die nötigen Schritte …" and plan == "Ich rufe auf: geocode, get_weather"
    assert drafts == answers
    assert [c["name"] for c in tool_calls] == ["geocode", "get_weather"]
    assert [m.tool_call_id for m in tool_results] == [c["id"] for c in tool_calls]
    state = await graph.aget_state(config)
    assert state.values["messages"][-1].id == list(chunks)[-1]  # the stored answer has the streamed id
    stored = [m.content for m in state.values["messages"]]
    assert stored.count("Heute 17 °C in Barcelona.") == 1 and not set(answers[:-1]) & set(stored)
    assert isinstance(AIMessageChunk(content=""), AIMessageChunk)


async def test_ask_user_is_announced_once_across_the_resume(checkpointer: BaseCheckpointSaver) -> None:
    ask = json.dumps({"ask_user": "Welche Stadt?"})
    model = ReplayChatModel.of([ask, plan_json([GEO]), "Barcelona liegt bei 41° N."])
    async with Agent(model=model, tools=travel_tools(), retriever=False, checkpointer=checkpointer) as agent:
        first = await agent.ask("Wo liegt das?", thread_id="k")
        second = await agent.resume("Barcelona", thread_id="k")
    events = [e["event"] for e in first.events + second.events]
    assert events.count("ask_user") == 1 and events.count("interrupt") == 1
    assert second.events[0]["event"] != "ask_user" and second.answer == "Barcelona liegt bei 41° N."


async def test_a_tool_an_mcp_server_marks_destructive_pauses_for_approval(notes_tools: Any) -> None:
    # write_note carries destructiveHint=true on the real notes server (stdio); read_note is read-only.
    assert notes_tools.specs["write_note"].destructive and not notes_tools.specs["read_note"].destructive
    model = ReplayChatModel.of([plan_json([WRITE], [READ]), "Gespeichert."])
    async with Agent(model=model, tools=notes_tools, retriever=False) as agent:
        first = await agent.ask("Speichere hallo unter k.", thread_id="mcp")
        [pending] = first.interrupts
        assert (pending["kind"], pending["id"], pending["args"]) == ("approval", "w", {"key": "k", "text": "hallo"})
        assert "tool_call" not in [e["event"] for e in first.events]  # nothing ran before the approval
        second = await agent.resume(True, thread_id="mcp")
        state = await agent.state("mcp")
    assert second.answer == "Gespeichert." and state["results"]["r"]["text"] == "hallo"


async def test_an_unusable_approval_answer_is_asked_again_naming_the_problem() -> None:
    # Through the graph directly (as the SDK resumes): no Agent-side check stands in front of the node.
    from langgraph.types import Command

    log: list = []
    graph = build_graph(
        Deps(chat_model=ReplayChatModel.of([plan_json([WRITE]), "ok"]), tools=notes(log)), checkpointer=InMemorySaver()
    )
    config = {"configurable": {"thread_id": "g"}}
    first = await graph.ainvoke({"messages": [("user", "Speichere.")]}, config)
    assert first["__interrupt__"][0].value["kind"] == "approval" and log == []
    again = await graph.ainvoke(Command(resume="vielleicht"), config)
    [request] = again["__interrupt__"]
    assert "unknown approval answer 'vielleicht'" in request.value["error"] and log == []
    done = await graph.ainvoke(Command(resume={"action": "approve"}), config)
    assert done["answer"] == "ok" and log == [("write_note", {"key": "k", "text": "hallo"})]


async def test_tools_in_the_profiles_approve_set_pause_too(monkeypatch: pytest.MonkeyPatch) -> None:
    from dataclasses import replace

    from planwerk import profiles

    monkeypatch.setitem(
        profiles.PROFILES, "travel", replace(profiles.PROFILES["travel"], approve=frozenset({"geocode"}))
    )
    log: list = []
    model = ReplayChatModel.of([plan_json([GEO], [WEATHER]), "17 °C."])
    async with Agent(
        model=model, tools=travel_tools(log), retriever=False, context=Context(today="2026-11-22")
    ) as agent:
        first = await agent.ask(QUESTION, thread_id="ap")
        assert [(i["kind"], i["tool"]) for i in first.interrupts] == [("approval", "geocode")] and log == []
        second = await agent.resume("ja", thread_id="ap")
    assert second.answer == "17 °C." and [name for name, _ in log] == ["geocode", "get_weather"]  # only geocode asked


async def test_the_answer_loop_is_a_path_through_the_graph_and_only_its_last_answer_is_a_message(
    checkpointer: BaseCheckpointSaver,
) -> None:
    # Two answers the check rejects (no result says 22 or 25 °C): answer → check_answer → regenerate →
    # check_answer → fallback, each a node of its own; the thread keeps one AI message, the deterministic answer.
    model = ReplayChatModel.of([plan_json([GEO], [WEATHER]), "Heute 22 °C.", "Heute 25 °C."])
    graph = build_graph(Deps(chat_model=model, tools=travel_tools()), checkpointer=checkpointer)
    config = {"configurable": {"thread_id": "loop"}}
    nodes: list[str] = []
    said: dict[str, str] = {}
    async for mode, part in graph.astream(
        {"messages": [("user", QUESTION)]},
        config,
        context=Context(today="2026-11-22"),
        stream_mode=["updates", "messages"],
    ):
        if mode == "updates":
            nodes.extend(node for node in part if node != "planwerk_model_call")
        elif part[0].type in ("ai", "AIMessageChunk"):
            said[part[0].id] = said.get(part[0].id, "") + str(part[0].content)
    assert nodes[-5:] == ["answer", "check_answer", "regenerate", "check_answer", "fallback"]
    state = await graph.aget_state(config)
    # Each draft streamed under its own id as it was written; the last message is the one answer, and no rejected
    # draft stays a message of the thread (it is removed when rejected: tests/graph/test_answer_stream.py).
    assert list(said.values()).count(state.values["answer"]) == 1 and list(said.values())[-1] == state.values["answer"]
    drafts = ["Heute 22 °C.", "Heute 25 °C."]
    assert [text for text in said.values() if text in drafts] == drafts
    stored = [m.content for m in state.values["messages"] if m.type == "ai"]
    assert stored[-1] == state.values["answer"] and not any("°C" in str(text) for text in stored[:-1])
