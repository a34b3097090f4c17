"""planwerk's graph as Aegra holds it (``planwerk/serving/aegra.py``), without a server: Aegra copies the one compiled
graph with its checkpointer injected and streams it with the run's context."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from planwerk.graph.builder import build_graph
from planwerk.serving.aegra import RunScopedGraph, graph
from tests.cluster.conftest import ANSWER, call, plan, question, write_replay
from tests.operator_env import temp_files_allowed

ROOT = Path(__file__).resolve().parents[2]


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


AEGRA_VENV = Path(os.environ.get("PLANWERK_AEGRA_VENV", ROOT / ".aegra-venv"))
CLAIM = {"config": {"configurable": {"langgraph_auth_user": {"identity": "alice"}, "langgraph_auth_user_id": "alice"}}}
UNDER_AEGRA = """
import asyncio, json, os, sys
import httpx
from aegra_api.core.auth_ctx import with_auth_ctx
from aegra_api.core.auth_middleware import LangGraphUser
from aegra_api.main import app  # reads AEGRA_CONFIG: the repository's aegra.json
from planwerk.serving.aegra import aegra_owner

claim = json.loads(sys.argv[1])
async def main():
    out = {}
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://aegra") as client:
        out["claim"] = (await client.post("/threads/t1/runs/stream", json=claim)).status_code
        out["plain"] = (await client.post("/threads/t1/runs/stream", json={"input": {}})).status_code
    out["no_user"] = aegra_owner(claim["config"])
    async with with_auth_ctx(LangGraphUser({"identity": "bob"}), []):
        out["bob"] = aegra_owner(claim["config"])
    print(json.dumps(out))
asyncio.run(main())
"""


def test_under_aegra_a_client_cannot_claim_another_users_identity(tmp_path: Path) -> None:
    # Aegra 0.6.0 fills configurable.langgraph_auth_user only when the client did not: a client naming alice there
    # would share alice's pooled MCP sessions. Aegra's own app (its venv), with aegra.json's http.app and auth.
    if not (AEGRA_VENV / "bin" / "python").exists():
        pytest.skip(f"no Aegra venv at {AEGRA_VENV} (scripts/setup.d/40-aegra.sh)")
    env = {
        **os.environ,
        "AEGRA_CONFIG": str(ROOT / "aegra.json"),
        "PLANWERK_AUTH": "jwt",
        "PLANWERK_JWT_SECRET": "s" * 40,
        "PYTHONPATH": str(ROOT),
    }
    done = subprocess.run(
        [str(AEGRA_VENV / "bin" / "python"), "-c", UNDER_AEGRA, json.dumps(CLAIM)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    # The claim is refused at the door (422, before authentication); without it the request reaches Aegra's routes.
    assert seen["claim"] == 422 and seen["plain"] == 401, seen
    # In a run, the owner is whom Aegra authenticated, never what the run config says.
    assert seen["bob"] == "bob" and seen["no_user"] is None, seen
