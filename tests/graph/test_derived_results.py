"""Results by call id are stored once, in the call records; every view of a run or a thread derives them.

The checkpoints hold no ``results``; the run's output, ``get_state``, the state history and the ``values``,
``updates``, ``checkpoints`` and ``debug`` stream modes carry them where the former ``results`` channel was. A
thread checkpointed by a version that still stored the channel loads and resumes (planwerk.graph.derived).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.types import Command

from planwerk.graph.derived import part_with_results, update_with_results, with_results
from planwerk.tools.base import FunctionToolSource
from tests.graph.tools import plan_json
from tests.helpers import make_agent

FIRST = {"id": "a", "name": "number", "arguments": {"n": 1}}
SECOND = {"id": "b", "name": "number", "arguments": {"n": {"$ref": "a.n"}}}
STORE = {"id": "s", "name": "store", "arguments": {"n": {"$ref": "a.n"}}}
RESULTS = {"a": {"n": 1}, "b": {"n": 1}}


def tools() -> FunctionToolSource:
    """A plain tool and a destructive one (its call waits for approval: an interrupt)."""

    async def number(n: int) -> dict:
        """Return the number."""
        return {"n": n}

    async def store(n: int) -> dict:
        """Store the number."""
        return {"stored": n}

    return FunctionToolSource([number, store], destructive={"store"})


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


async def stored_values(saver: BaseCheckpointSaver, thread: str) -> list[dict[str, Any]]:
    """The channel values of every checkpoint the saver holds for ``thread``."""
    return [t.checkpoint["channel_values"] async for t in saver.alist(config(thread))]


async def test_checkpoints_keep_results_once_and_every_view_derives_them() -> None:
    saver = InMemorySaver()
    replies = [plan_json([FIRST], [SECOND]), "Eins."] * 2
    async with make_agent(replies, tools=tools(), checkpointer=saver) as agent:
        assert agent.graph is not None
        question = {"messages": [{"role": "user", "content": "Welche Zahl?"}]}
        modes = ["values", "updates", "checkpoints", "debug"]
        parts = [p async for p in agent.graph.astream(question, config("t"), context=agent.context, stream_mode=modes)]
        state = await agent.state("t")
        history = [s async for s in agent.graph.aget_state_history(config("t"))]
        output = await agent.graph.ainvoke(
            {"messages": [{"role": "user", "content": "Noch einmal?"}]}, config("u"), context=agent.context
        )
    stored = await stored_values(saver, "t")
    assert all("results" not in values for values in stored)
    assert [c["result"] for values in stored[:1] for c in values["calls"]] == [{"n": 1}, {"n": 1}]
    assert state["results"] == RESULTS and list(state).index("results") == list(state).index("calls") - 1
    assert all(s.values["results"] == {c["id"]: c["result"] for c in s.values["calls"]}
               for s in history if "calls" in s.values)  # fmt: skip
    assert any(s.values.get("results") == {"a": {"n": 1}} for s in history)  # between the two steps
    values = [chunk for mode, chunk in parts if mode == "values"]
    assert values[-1]["results"] == RESULTS
    updates = [chunk for mode, chunk in parts if mode == "updates"]
    assert [u["call_tool"]["results"] for u in updates if "call_tool" in u] == [{"a": {"n": 1}}, {"b": {"n": 1}}]
    assert [u["prepare"]["results"] for u in updates if "prepare" in u] == [None]  # as the channel was reset
    checkpoints = [chunk for mode, chunk in parts if mode == "checkpoints"]
    assert checkpoints[-1]["values"]["results"] == RESULTS
    debug = [c for mode, c in parts if mode == "debug" and c["type"] == "checkpoint"]
    assert debug[-1]["payload"]["values"]["results"] == RESULTS
    assert output["results"] == {"a": {"n": 1}, "b": {"n": 1}}


async def test_the_v2_stream_and_subgraph_shapes_carry_results() -> None:
    async with make_agent([plan_json([FIRST]), "Eins."] * 2, tools=tools()) as agent:
        assert agent.graph is not None
        question = {"messages": [{"role": "user", "content": "Welche Zahl?"}]}
        v2 = [p async for p in agent.graph.astream(question, config("v2"), context=agent.context, version="v2",
                                                    stream_mode=["values", "updates"])]  # fmt: skip
        question = {"messages": [{"role": "user", "content": "Und jetzt?"}]}
        nested = [p async for p in agent.graph.astream(question, config("v2"), context=agent.context,
                                                        stream_mode="values", subgraphs=True)]  # fmt: skip
    assert [p for p in v2 if p["type"] == "values"][-1]["data"]["results"] == {"a": {"n": 1}}
    assert [p["data"]["call_tool"]["results"] for p in v2 if "call_tool" in p["data"]] == [{"a": {"n": 1}}]
    assert nested[-1][0] == () and nested[-1][1]["results"] == {"a": {"n": 1}}


@pytest.mark.parametrize("backend", ["memory", "sqlite"])
async def test_a_thread_stored_with_the_former_results_channel_resumes(backend: str, tmp_path: Path) -> None:
    replies = [plan_json([FIRST], [STORE]), "Gespeichert."]
    async with _saver(backend, tmp_path) as saver, make_agent(replies, tools=tools(), checkpointer=saver) as agent:
        first = await agent.ask("Speichere eins.", thread_id="old")
        assert first.interrupts and first.interrupts[0]["kind"] == "approval"
        await _as_former_version(saver, "old", {"a": {"n": 1}, "gone": {"stale": True}})
        assert agent.graph is not None
        resumed = await agent.graph.ainvoke(Command(resume="approve"), config("old"), context=agent.context)
        state = await agent.state("old")
    assert resumed["answer"] == "Gespeichert."
    assert resumed["results"] == state["results"] == {"a": {"n": 1}, "s": {"stored": 1}}  # the stale value unread
    assert "retired" not in state


def _saver(backend: str, folder: Path) -> Any:
    """An in-memory or SQLite checkpointer (as an async context manager)."""
    if backend == "sqlite":
        return AsyncSqliteSaver.from_conn_string(str(folder / "threads.sqlite"))

    class Memory:
        async def __aenter__(self) -> InMemorySaver:
            return InMemorySaver()

        async def __aexit__(self, *_: object) -> None:
            return None

    return Memory()


async def _as_former_version(saver: BaseCheckpointSaver, thread: str, results: dict[str, Any]) -> None:
    """Rewrite the thread's latest checkpoint as a version with a stored ``results`` channel wrote it (same id,
    so its pending interrupt stays)."""
    latest = await saver.aget_tuple(config(thread))
    assert latest is not None and latest.parent_config is not None
    checkpoint = dict(latest.checkpoint)
    # ``retired`` stands for a key no channel of this graph reads: LangGraph loads the channels it has.
    checkpoint["channel_values"] = {**checkpoint["channel_values"], "results": results, "retired": 1}
    version = saver.get_next_version(None, None)
    checkpoint["channel_versions"] = {**checkpoint["channel_versions"], "results": version, "retired": version}
    await saver.aput(latest.parent_config, checkpoint, latest.metadata, {"results": version, "retired": version})
    stored = await saver.aget_tuple(config(thread))
    assert stored is not None and stored.checkpoint["channel_values"]["results"] == results


def test_pure_views_leave_what_holds_no_call_log_alone() -> None:
    record = {"id": "a", "status": "ok", "result": 1}
    assert with_results({"messages": []}) == {"messages": []}
    assert with_results({"calls": [record], "results": {"old": 0}}) == {"results": {"a": 1}, "calls": [record]}
    assert update_with_results({"calls": [{**record, "status": "error"}]}) == {"calls": [{**record, "status": "error"}]}
    assert part_with_results(("messages", ("m", {})), ["messages"]) == ("messages", ("m", {}))
    assert part_with_results({"calls": [record]}, "values") == {"results": {"a": 1}, "calls": [record]}
    assert part_with_results(((), {"calls": [record]}), "values") == ((), {"results": {"a": 1}, "calls": [record]})
    assert part_with_results({"calls": [record]}, "custom") == {"calls": [record]}


async def test_user_raw_is_the_question_without_being_stored() -> None:
    echo = {"id": "q", "name": "echo", "arguments": {"text": {"$ref": "user.raw"}}}

    async def echo_text(text: str) -> dict:
        """Return the text."""
        return {"text": text}

    echo_text.__name__ = "echo"
    saver = InMemorySaver()
    replies = [plan_json([echo]), "Gesagt."] * 2
    async with make_agent(replies, tools=FunctionToolSource([echo_text]), checkpointer=saver) as agent:
        await agent.ask("Sag das nach.", thread_id="q")
        second = await agent.ask("Und das auch?", thread_id="q")
        state = await agent.state("q")
    assert second.answer == "Gesagt."
    assert [c["args"] for c in state["calls"]] == [{"text": "Und das auch?"}]  # the current question
    assert all("raw" not in values.get("user", {}) for values in await stored_values(saver, "q"))
    assert state["user"] == {"raw": "Und das auch?"}  # what a program reads, as when it was stored
