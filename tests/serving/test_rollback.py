"""``multitask_strategy="rollback"`` under ``langgraph dev`` with planwerk's durable checkpointers.

The server rolls a run back by cancelling it and then deleting what it wrote through the checkpointer's
``adelete_for_runs``; langgraph's SQLite and PostgreSQL savers lack that method (HTTP 500, the thread stuck), so
planwerk's subclasses add it (``planwerk.serving.sqlite_saver``, ``planwerk.serving.postgres_saver``). Tested in-process
on the savers and end to end through the SDK, on both backends.
"""

from __future__ import annotations

import asyncio
import json
import operator
import sqlite3
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Annotated, Any

import pytest
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph import END, START, StateGraph
from langgraph_sdk.client import LangGraphClient
from langgraph_sdk.errors import NotFoundError
from typing_extensions import TypedDict

from planwerk.serving.server import make_checkpointer
from tests.serving.conftest import ROOT, DevServer, sdk_client, write_replay
from tests.serving.postgres import PostgresUnavailable, private_postgres

pytestmark = pytest.mark.timeout(180)

ECHO_SERVER = ROOT / "tests" / "tools" / "echo_server.py"
"""An MCP server with a ``slow(seconds)`` tool: it keeps the run that is rolled back busy."""
SLOW_PLAN = json.dumps(
    {
        "steps": [{"description": "wait", "tools": [{"id": "w", "name": "slow", "arguments": {"seconds": 60}}]}],
        "final": None,
    }
)


def final(text: str) -> str:
    """A plan that needs no tool: the answer is ``text``."""
    return json.dumps({"steps": [], "final": text})


@pytest.fixture(scope="module")
def postgres_uri() -> Iterator[str]:
    try:
        with private_postgres() as uri:
            yield uri
    except PostgresUnavailable as reason:
        pytest.skip(f"no PostgreSQL server on this machine: {reason}")


@pytest.fixture(params=["sqlite", "postgres"])
def backend(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[str, dict[str, str]]:
    """The checkpoint backend and the environment that selects it for ``make_checkpointer`` and the server."""
    if request.param == "sqlite":
        return "sqlite", {"PLANWERK_CHECKPOINT_DB": str(tmp_path / "checkpoints.sqlite")}
    uri = request.getfixturevalue("postgres_uri")
    # A schema per test: the module shares one cluster, and each test counts only its own rows.
    return "postgres", {"PLANWERK_POSTGRES_URI": uri, "PLANWERK_POSTGRES_SCHEMA": f"rb_{time.monotonic_ns()}"}


def rows_of_runs(backend: tuple[str, dict[str, str]], run_ids: list[str]) -> tuple[int, int]:
    """(checkpoints, writes) in the backend's tables that belong to checkpoints of ``run_ids``."""
    kind, env = backend
    if kind == "sqlite":
        marks = ", ".join("?" for _ in run_ids)
        ours = f"json_extract(CAST(metadata AS TEXT), '$.run_id') IN ({marks})"
        with sqlite3.connect(env["PLANWERK_CHECKPOINT_DB"]) as conn:
            checkpoints = conn.execute(f"SELECT count(*) FROM checkpoints WHERE {ours}", run_ids).fetchone()[0]
            writes = conn.execute(
                "SELECT count(*) FROM writes WHERE (thread_id, checkpoint_ns, checkpoint_id) IN "
                f"(SELECT thread_id, checkpoint_ns, checkpoint_id FROM checkpoints WHERE {ours})",
                run_ids,
            ).fetchone()[0]
        return int(checkpoints), int(writes)
    import psycopg

    schema = env["PLANWERK_POSTGRES_SCHEMA"]
    with psycopg.connect(env["PLANWERK_POSTGRES_URI"]) as conn:
        checkpoints = conn.execute(
            f"SELECT count(*) FROM {schema}.checkpoints WHERE metadata->>'run_id' = ANY(%s)", (run_ids,)
        ).fetchone()
        writes = conn.execute(
            f"SELECT count(*) FROM {schema}.checkpoint_writes w JOIN {schema}.checkpoints c USING "
            "(thread_id, checkpoint_ns, checkpoint_id) WHERE c.metadata->>'run_id' = ANY(%s)",
            (run_ids,),
        ).fetchone()
    assert checkpoints is not None and writes is not None
    return int(checkpoints[0]), int(writes[0])


# --- the savers, in-process ---------------------------------------------------------------------------------


class Trail(TypedDict):
    trail: Annotated[list[str], operator.add]


def two_steps(saver: BaseCheckpointSaver) -> Any:
    graph = StateGraph(Trail)
    graph.add_node("a", lambda state: {"trail": ["a"]})
    graph.add_node("b", lambda state: {"trail": ["b"]})
    graph.add_edge(START, "a")
    graph.add_edge("a", "b")
    graph.add_edge("b", END)
    return graph.compile(checkpointer=saver)


@asynccontextmanager
async def saver_for(backend: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Any]:
    for name in ("PLANWERK_POSTGRES_URI", "DATABASE_URI", "PLANWERK_CHECKPOINT_DB", "PLANWERK_POSTGRES_SCHEMA"):
        monkeypatch.delenv(name, raising=False)
    for name, value in backend[1].items():
        monkeypatch.setenv(name, value)
    async with make_checkpointer() as saver:
        yield saver


async def test_saver_deletes_exactly_the_checkpoints_and_writes_of_the_given_runs(
    backend: tuple[str, dict[str, str]], monkeypatch: pytest.MonkeyPatch
) -> None:
    async with saver_for(backend, monkeypatch) as saver:
        graph = two_steps(saver)

        def config(thread: str, run: str) -> dict[str, Any]:
            # The server puts the run id into every checkpoint's metadata through the configurable values.
            return {"configurable": {"thread_id": thread, "run_id": run}}

        await graph.ainvoke({"trail": ["x"]}, config("t1", "run-a"))
        await graph.ainvoke({"trail": ["y"]}, config("t1", "run-b"))
        await graph.ainvoke({"trail": ["z"]}, config("t2", "run-c"))
        for run in ("run-a", "run-b", "run-c"):
            checkpoints, writes = rows_of_runs(backend, [run])
            assert checkpoints == 4 and writes > 0  # input, a, b, end; the tasks' writes hang on them

        await saver.adelete_for_runs(["run-b", "run-unknown"])
        await saver.adelete_for_runs([])  # nothing to do
        assert rows_of_runs(backend, ["run-b"]) == (0, 0)
        assert rows_of_runs(backend, ["run-a"])[0] == 4 and rows_of_runs(backend, ["run-c"])[0] == 4
        # The thread is back where run-a left it, and goes on from there.
        assert (await graph.aget_state(config("t1", "x"))).values == {"trail": ["x", "a", "b"]}
        await graph.ainvoke({"trail": ["w"]}, config("t1", "run-d"))
        assert (await graph.aget_state(config("t1", "x"))).values == {"trail": ["x", "a", "b", "w", "a", "b"]}
        assert (await graph.aget_state(config("t2", "x"))).values == {"trail": ["z", "a", "b"]}


# --- end to end, through langgraph dev ----------------------------------------------------------------------


async def wait_running(client: LangGraphClient, thread: str, run: str, timeout: float = 30.0) -> None:
    """Until ``run`` executes and has written a checkpoint (so a rollback has something to delete)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        status = (await client.runs.get(thread, run))["status"]
        history = await client.threads.get_history(thread, limit=10)
        if status == "running" and any(h["metadata"].get("run_id") == run for h in history):
            await asyncio.sleep(1.0)  # into the slow tool call
            return
        assert status in ("pending", "running"), status
        await asyncio.sleep(0.1)
    raise AssertionError(f"run {run} did not start within {timeout:g} s")


async def test_rollback_replaces_a_running_run_and_leaves_the_thread_usable(
    backend: tuple[str, dict[str, str]], dev_server_factory: type[DevServer], tmp_path: Path
) -> None:
    folder = tmp_path / "srv"
    folder.mkdir()
    server = dev_server_factory(folder, extra_env=backend[1]).start()
    client = sdk_client(server.url, timeout=60)
    mcp = tmp_path / "mcp.json"
    mcp.write_text(json.dumps({"mcpServers": {"echo": {"command": "${PYTHON}", "args": [str(ECHO_SERVER), "stdio"]}}}))
    base = {"profile": "math", "mcp_config": str(mcp), "tool_timeout_s": 120}

    def ask(text: str) -> dict[str, Any]:
        return {"messages": [{"role": "user", "content": text}]}

    # Twice: once with nobody watching the first run (the server deletes it at once: the path that answered 500),
    # once while a client streams it (the worker cancels it, then cleans up).
    for watched in (False, True):
        thread = (await client.threads.create())["thread_id"]
        slow = write_replay(tmp_path / f"slow-{watched}.json", [SLOW_PLAN, "Nie gesehen."])
        first = await client.runs.create(thread, "planwerk", input=ask("Warte."), context={**base, "model": slow})
        watcher = None
        if watched:
            watcher = asyncio.create_task(
                asyncio.wait_for(_drain(client.runs.join_stream(thread, first["run_id"])), 60)
            )
        await wait_running(client, thread, first["run_id"])

        again = write_replay(tmp_path / f"again-{watched}.json", [final("Zweiter Lauf fertig.")])
        second = await client.runs.create(
            thread,
            "planwerk",
            input=ask("Vergiss das, antworte gleich."),
            context={**base, "model": again},
            multitask_strategy="rollback",
        )
        values = await client.runs.join(thread, second["run_id"])
        assert values["answer"] == "Zweiter Lauf fertig."
        if watcher is not None:
            await watcher  # the watcher's stream ends with the cancelled run

        # The first run is gone: its record, its checkpoints and their writes.
        with pytest.raises(NotFoundError):
            await client.runs.get(thread, first["run_id"])
        assert [r["run_id"] for r in await client.runs.list(thread)] == [second["run_id"]]
        assert (await client.runs.get(thread, second["run_id"]))["status"] == "success"
        history = await client.threads.get_history(thread, limit=100)
        assert {h["metadata"].get("run_id") for h in history} == {second["run_id"]}
        assert rows_of_runs(backend, [first["run_id"]]) == (0, 0)
        state = await client.threads.get_state(thread)
        talk = state["values"]["messages"]
        assert [m["content"] for m in talk if m["response_metadata"].get("planwerk") != "progress"] == [
            "Vergiss das, antworte gleich.",
            "Zweiter Lauf fertig.",
        ]

        # The thread is idle and takes the next run.
        assert (await client.threads.get(thread))["status"] == "idle"
        third = write_replay(tmp_path / f"third-{watched}.json", [final("Dritter Lauf fertig.")])
        out = await client.runs.wait(thread, "planwerk", input=ask("Und jetzt?"), context={**base, "model": third})
        assert out["answer"] == "Dritter Lauf fertig." and len(out["messages"]) == 6  # 2 × question, progress, answer
        assert (await client.threads.get(thread))["status"] == "idle"

    log = server.log.read_text(errors="replace")
    assert "Custom checkpointer missing adelete_for_runs" not in log
    assert "Failed to clean up custom checkpointer data" not in log
    assert server.stop(), server.tail()


async def _drain(stream: AsyncIterator[Any]) -> None:
    async for _ in stream:
        pass
