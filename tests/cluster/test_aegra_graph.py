"""planwerk's graph as Aegra holds it (``planwerk/graph/aegra.py``), without a server: Aegra copies the one compiled
graph with its checkpointer injected and streams it with the run's context."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from planwerk.graph.aegra import RunScopedGraph, graph
from planwerk.graph.builder import build_graph
from tests.cluster.conftest import ANSWER, call, plan, question, write_replay
from tests.operator_env import temp_files_allowed


def test_the_served_graph_has_the_engines_topology_and_needs_no_tools() -> None:
    assert set(graph.get_graph().nodes) == set(build_graph().get_graph().nodes)
    assert graph.checkpointer is None  # Aegra injects its own per access


async def test_a_run_opens_its_collaborators_from_its_context_and_uses_the_injected_checkpointer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    for name, value in temp_files_allowed().items():  # as cluster.sh's Aegra gets them (tests/cluster/conftest.py)
        monkeypatch.setenv(name, value)
    saver = InMemorySaver()
    runnable = graph.copy(update={"checkpointer": saver, "store": None})  # what Aegra does per access
    assert isinstance(runnable, RunScopedGraph) and runnable.checkpointer is saver
    servers = {"math": {"command": sys.executable, "args": ["-m", "planwerk.tools.servers.math", "stdio"]}}
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    context = {
        "model": write_replay(tmp_path / "run.json", [plan(call("s", "add", arg_0=2, arg_1=3)), ANSWER]),
        "profile": "math",
        "mcp_config": str(tmp_path / "mcp.json"),
        "today": "2026-11-22",
        "thread_id": "t1",  # Aegra mirrors configurable keys into the context: unknown keys are dropped
    }
    config = {"configurable": {"thread_id": "t1"}}
    updates = [part async for part in runnable.astream(question("2 + 3?"), config, context=context)]
    assert any("call_tool" in part for part in updates)
    state = await runnable.aget_state(config)  # the checkpoint is in the injected saver
    assert state.values["answer"] == ANSWER and state.values["results"] == {"s": {"result": 5.0}}
