"""No data crosses runs through pooled MCP sessions (issue 28, item 4): a server sends a sampling request with one
run's text after that run's call returned, while a later run's call is in flight on the server. It reaches no run's
stream, no model answers it, and the server gets a refusal.

Real MCP servers (``tests/tools/late_request_server.py``) over stdio and streamable HTTP, the per-process pool of
:mod:`planwerk.serving.warm`, and the two server entry points: the LangGraph server's factory (the user from
``ServerRuntime.user``) and Aegra's graph (the user from the run config)."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore
from langgraph_sdk.runtime import _ExecutionRuntime

from planwerk.graph.run_context import run_context
from planwerk.serving.server import make_graph
from planwerk.serving.warm import close_tool_pool
from tests.cluster.conftest import call, plan
from tests.operator_env import temp_files_allowed
from tests.ports import mcp_named, start_server
from tests.serving.conftest import write_replay

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "tools" / "late_request_server.py"
SECRET = "Alice's diagnosis: confidential"


@pytest.fixture(autouse=True)
def operator_allows_temp_files(monkeypatch: pytest.MonkeyPatch) -> None:
    for name, value in temp_files_allowed().items():
        monkeypatch.setenv(name, value)


@pytest.fixture(autouse=True)
async def close_pooled_sessions() -> AsyncIterator[None]:
    yield
    await close_tool_pool()


@dataclass(frozen=True)
class Late:
    """The late-request server's files: its config, and what it got back for its late request."""

    config: Path
    outcome: Path
    go: Path


def late_env(folder: Path) -> dict[str, str]:
    return {"LATE_GO": str(folder / "go"), "LATE_OUTCOME": str(folder / "outcome"), "PYTHONPATH": str(ROOT)}


@pytest.fixture
def late_stdio(tmp_path: Path) -> Late:
    config = tmp_path / "mcp.json"
    server = {"command": sys.executable, "args": [str(SERVER), "stdio"], "env": late_env(tmp_path), "timeout": 60}
    config.write_text(json.dumps({"mcpServers": {"late": server}}), encoding="utf-8")
    return Late(config=config, outcome=tmp_path / "outcome", go=tmp_path / "go")


@pytest.fixture
def late_http(tmp_path: Path) -> Iterator[Late]:
    import os

    log = tmp_path / "server.log"

    def spawn(port: int) -> subprocess.Popen[bytes]:
        with log.open("ab") as out:
            env = {**os.environ, **late_env(tmp_path)}
            command = [sys.executable, str(SERVER), "http", "--port", str(port)]
            return subprocess.Popen(command, env=env, stdout=out, stderr=subprocess.STDOUT)

    started = start_server(spawn, mcp_named("late"), what="late-request server", log=log, timeout_s=60)
    config = tmp_path / "mcp.json"
    url = f"http://127.0.0.1:{started.port}/mcp"
    config.write_text(json.dumps({"mcpServers": {"late": {"url": url, "timeout": 60}}}), encoding="utf-8")
    try:
        yield Late(config=config, outcome=tmp_path / "outcome", go=tmp_path / "go")
    finally:
        started.process.terminate()
        started.process.wait(timeout=20)


@dataclass(frozen=True)
class User:
    """The authenticated user as the LangGraph server hands it to the graph factory (``BaseUser``'s identity)."""

    identity: str
    is_authenticated: bool = True
    display_name: str = ""
    permissions: tuple[str, ...] = ()


def contexts(folder: Path, late: Late) -> tuple[dict[str, Any], dict[str, Any]]:
    """Run A (remembers the secret; its call returns at once) and run B (its call waits for the late request).
    B's model holds a spare reply: were the late request handed to B, B's model would answer it."""
    base = {"profile": "generic-en", "plan_format": "json", "mcp_config": str(late.config), "today": "2026-11-22"}
    first = write_replay(folder / "a.json", [plan(call("a", "remember", text=SECRET)), "Noted."])
    second = write_replay(folder / "b.json", [plan(call("b", "wait_for_late")), "Done.", "Done."])
    return {**base, "model": first}, {**base, "model": second}


def sampling_events(parts: list[Any]) -> list[dict[str, Any]]:
    """The sampling events among a run's streamed ``(mode, data)`` parts."""
    return [
        data
        for mode, data in parts
        if mode == "custom" and isinstance(data, dict) and str(data.get("event", "")).startswith("sampling")
    ]


async def run_factory(context: dict[str, Any], user: User | None, thread: str) -> list[Any]:
    """One run through the LangGraph server's graph factory, as the server makes it for ``user``."""
    runtime = _ExecutionRuntime(access_context="threads.create_run", store=InMemoryStore(), context=context, user=user)
    async with make_graph(runtime) as graph:
        question = {"messages": [{"role": "user", "content": "Go."}]}
        config = {"configurable": {"thread_id": thread}}
        return [
            part
            async for part in graph.astream(
                question, config, context=run_context(context), stream_mode=["custom", "updates"]
            )
        ]


async def run_aegra(context: dict[str, Any], owner: str | None, thread: str) -> list[Any]:
    """One run through Aegra's graph, without Aegra installed (``aegra_owner`` then reads the run config)."""
    from planwerk.serving.aegra import graph

    runnable = graph.copy(update={"checkpointer": InMemorySaver(), "store": None})
    configurable: dict[str, Any] = {"thread_id": thread}
    if owner is not None:
        configurable["langgraph_auth_user_id"] = owner
    question = {"messages": [{"role": "user", "content": "Go."}]}
    return [
        part
        async for part in runnable.astream(
            question, {"configurable": configurable}, context=context, stream_mode=["custom", "updates"]
        )
    ]


async def test_users_do_not_share_sessions_so_a_late_request_reaches_no_other_users_run(
    tmp_path: Path, late_stdio: Late
) -> None:
    # Over stdio nothing tells which call a request belongs to: only the owner's own sessions can carry it.
    first, second = contexts(tmp_path, late_stdio)
    alice = await run_factory(first, User("alice"), "a")
    assert sampling_events(alice) == []
    bob = await run_factory(second, User("bob"), "b")
    assert sampling_events(bob) == [], "Alice's late request reached Bob's run"
    outcome = late_stdio.outcome.read_text(encoding="utf-8")
    assert outcome.startswith("refused:"), outcome  # it came on Alice's session, where no call was in flight
    assert SECRET not in json.dumps(bob, default=str)


async def test_a_late_request_over_http_reaches_no_run_of_the_same_user(tmp_path: Path, late_http: Late) -> None:
    # Over HTTP the transport says which call a request belongs to: this one came on the server's own stream,
    # related to no call in flight, so it is refused even though run B's call is in flight on the same session.
    first, second = contexts(tmp_path, late_http)
    assert sampling_events(await run_aegra(first, None, "a")) == []
    later = await run_aegra(second, None, "b")
    assert sampling_events(later) == [], "the late request reached the later run"
    outcome = late_http.outcome.read_text(encoding="utf-8")
    assert outcome.startswith("refused:") and "related to no planwerk call" in outcome, outcome
    assert SECRET not in json.dumps(later, default=str)
