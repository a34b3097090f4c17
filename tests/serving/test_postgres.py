"""The PostgreSQL checkpointer against a real server started by the test: Python sessions across connections,
and ``langgraph dev`` keeping its checkpoints there."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.serving.server import make_checkpointer
from tests.graph.tools import travel_tools
from tests.serving.conftest import DevServer, sdk_client
from tests.serving.postgres import PostgresUnavailable, private_postgres

pytestmark = pytest.mark.timeout(120)

ASK = json.dumps({"ask_user": "Für welche Stadt?"})
BY_ANSWER = json.dumps(
    {
        "steps": [
            {
                "description": "",
                "tools": [{"id": "geo", "name": "geocode", "arguments": {"destination": {"$ref": "user.answer"}}}],
            }
        ],
        "final": None,
    }
)


@pytest.fixture(scope="module")
def postgres_uri() -> Iterator[str]:
    try:
        with private_postgres() as uri:
            yield uri
    except PostgresUnavailable as reason:
        pytest.skip(f"no PostgreSQL server on this machine: {reason}")


def checkpoint_rows(uri: str, thread_id: str) -> int:
    """Checkpoints of ``thread_id`` in planwerk's own schema (nothing lands in ``public``)."""
    with psycopg.connect(uri) as conn:
        row = conn.execute("SELECT count(*) FROM planwerk.checkpoints WHERE thread_id = %s", (thread_id,)).fetchone()
        public = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()
    assert row is not None and public == (0,)
    return int(row[0])


async def test_python_session_resumes_on_a_new_connection(postgres_uri: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PLANWERK_POSTGRES_URI", postgres_uri)
    context = Context(profile="math", today="2026-11-22")
    async with make_checkpointer() as saver:
        assert isinstance(saver, AsyncPostgresSaver)
        async with Agent(
            model=ReplayChatModel.of([ASK]), tools=travel_tools(), retriever=False, checkpointer=saver, context=context
        ) as agent:
            first = await agent.ask("Wo liegt das?", thread_id="pg-1")
    assert first.question == "Für welche Stadt?" and first.answer is None
    assert checkpoint_rows(postgres_uri, "pg-1") > 0

    log: list = []
    model = ReplayChatModel.of([BY_ANSWER, "Barcelona liegt bei 41.38 N."])
    # A new pool: nothing is left in memory from the first session.
    async with (
        make_checkpointer() as saver,
        Agent(model=model, tools=travel_tools(log), retriever=False, checkpointer=saver, context=context) as agent,
    ):
        second = await agent.resume("Barcelona", thread_id="pg-1")
        state = await agent.state("pg-1")
    assert second.answer == "Barcelona liegt bei 41.38 N."
    assert log == [("geocode", {"destination": "Barcelona"})]
    assert [m.type for m in state["messages"]] == ["human", "ai", "ai", "human", "ai", "tool", "ai"]


async def test_dev_server_keeps_checkpoints_in_postgres(
    postgres_uri: str, dev_server_factory: type[DevServer], tmp_path: Path
) -> None:
    folder = tmp_path / "srv"
    folder.mkdir()
    server = dev_server_factory(folder, extra_env={"PLANWERK_POSTGRES_URI": postgres_uri}).start()
    assert "Using custom checkpointer: ServerPostgresSaver" in server.log.read_text(errors="replace")
    client = sdk_client(server.url, timeout=60)
    thread = (await client.threads.create(graph_id="planwerk"))["thread_id"]
    # A state update writes a checkpoint through the graph without running a node (no model, no tools).
    await client.threads.update_state(thread, {"messages": [{"role": "user", "content": "Hallo"}]}, as_node="prepare")
    assert checkpoint_rows(postgres_uri, thread) == 1
    state = await client.threads.get_state(thread)
    assert [m["content"] for m in state["values"]["messages"]] == ["Hallo"] and state["next"] == ["retrieve"]
    assert not (folder / "checkpoints.sqlite").exists()
    assert server.stop(), server.tail()
