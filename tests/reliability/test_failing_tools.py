"""Failing tools through the real graph and real MCP servers over stdio.

A faulty server (tests/reliability/faulty_server.py) raises, returns garbage, hangs and kills itself, next to the
bundled math server. Each run must end within the configured timeouts with an honest answer, the other server
keeps serving, and retries (self-correction rounds) are bounded. Servers down at start are named and skipped.
HTTP-level retries with backoff of the travel server are tested in tests/tools/test_travel_services.py
(``test_retries_on_5xx_and_429_are_bounded``); MCP-level timeouts and dead servers without the graph in
tests/tools/test_mcp_source.py.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from planwerk.agent import Agent, Reply
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import MCPToolSource, open_tools
from tests.helpers import make_agent

pytestmark = pytest.mark.faults  # injects faults and waits them out (tests/conftest.py: the tiers)

FAULTY = str(Path(__file__).with_name("faulty_server.py"))
RUN_LIMIT_S = 30.0
"""No run may take longer than this, whatever the tools do."""


def write_config(folder: Path, **extra: dict[str, Any]) -> Path:
    servers = {
        "faulty": {"command": "${PYTHON}", "args": [FAULTY, "stdio"], "timeout": 20},
        "math": {"command": "${PYTHON}", "args": ["-m", "planwerk.tools.servers.math", "stdio"], "timeout": 20},
        **extra,
    }
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def plan(*steps: list[dict[str, Any]]) -> str:
    return json.dumps({"steps": [{"description": "", "tools": list(step)} for step in steps], "final": None})


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


async def ask(planwerk: Agent, question: str, thread_id: str) -> tuple[Reply, float]:
    started = time.monotonic()
    async with asyncio.timeout(RUN_LIMIT_S):
        reply = await planwerk.ask(question, thread_id=thread_id)
    return reply, time.monotonic() - started


async def restarted(tools: MCPToolSource, server: str, timeout_s: float = 15.0) -> bool:
    """Wait until ``server`` (marked unavailable, see planwerk.tools.mcp) is back after its one restart."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server not in tools.unavailable:
            return True
        await asyncio.sleep(0.1)
    return False


def by_id(reply: Reply, kind: str) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in reply.events if e["event"] == kind}


async def test_a_hanging_tool_is_cut_at_the_timeout_and_both_servers_keep_serving(tmp_path: Path, figures: Any) -> None:
    model = ReplayChatModel.of([
        plan([call("h", "hang"), call("a", "add", arg_0=2, arg_1=3)]), "5; hang: Zeitüberschreitung.",
        plan([call("o", "ok", text="noch da"), call("a2", "add", arg_0=4, arg_1=4)]), "Beide antworten.",
    ])  # fmt: skip
    context = Context(today="2026-11-22", tool_timeout_s=1.0)
    async with (
        open_tools(write_config(tmp_path)) as tools,
        Agent(model=model, tools=tools, retriever=False, context=context) as planwerk,
    ):
        first, first_s = await ask(planwerk, "Rechne 2 und 3 zusammen und warte.", "hang")
        # The call and its retry timed out: two in a row, so the server counts as stopped and is restarted once.
        assert await restarted(tools, "faulty")
        second, second_s = await ask(planwerk, "Noch einmal, mit 4 und 4.", "hang-2")
        hung = next(c for c in (await planwerk.state("hang"))["calls"] if c["id"] == "h")
    errors = by_id(first, "tool_error")
    assert errors["h"]["error"] == "hang timed out after 1 s"
    assert by_id(first, "tool_result")["a"]["result"] == {"result": 5.0}
    assert first.answer == "5; hang: Zeitüberschreitung."  # verify gives up honestly: no replan
    assert 1.0 <= hung["duration_s"] < 1.0 + 2.0  # cut at the configured timeout, not the server's 20 s
    results = by_id(second, "tool_result")
    assert results["o"]["result"]["text"] == "noch da" and results["a2"]["result"] == {"result": 8.0}
    figures.record(
        "failing_tools",
        injected=1,
        runs=2,
        timeouts=1,
        lost_results=0,
        hung_call_s=hung["duration_s"],
        hang_run_s=round(first_s, 2),
        next_run_s=round(second_s, 2),
    )


async def test_a_server_that_kills_itself_fails_its_calls_fast_and_spares_the_other(
    tmp_path: Path, figures: Any
) -> None:
    model = ReplayChatModel.of([
        plan([call("d", "die"), call("a", "add", arg_0=1, arg_1=1)]), "die ist ausgefallen; 1 + 1 = 2.",
        plan([call("o1", "ok", text="wieder da?"), call("a1", "add", arg_0=1, arg_1=2)]), "ok: wieder da.",
        plan([call("d2", "die"), call("a3", "add", arg_0=3, arg_1=3)]), "die ist wieder ausgefallen.",
        plan([call("o", "ok", text="lebst du?"), call("a2", "add", arg_0=2, arg_1=2)]), "ok: nicht erreichbar.",
    ])  # fmt: skip
    # No retries: a retry could reach the restarted server and kill it again, which would make the order vary.
    context = Context(today="2026-11-22", tool_timeout_s=10.0, tool_retry_attempts=1)
    async with (
        open_tools(write_config(tmp_path)) as tools,
        Agent(model=model, tools=tools, retriever=False, context=context) as planwerk,
    ):
        first, _ = await ask(planwerk, "Stirb, und addiere 1 und 1.", "die")
        assert await restarted(tools, "faulty")  # restarted once
        back, _ = await ask(planwerk, "Wieder da? Addiere 1 und 2.", "die-back")
        await ask(planwerk, "Stirb noch einmal, und addiere 3 und 3.", "die-again")
        second, second_s = await ask(planwerk, "Und jetzt? Addiere 2 und 2.", "die-2")
    assert "server faulty" in by_id(first, "tool_error")["d"]["error"]
    assert by_id(first, "tool_result")["a"]["result"] == {"result": 2.0}
    assert first.answer == "die ist ausgefallen; 1 + 1 = 2."
    assert by_id(back, "tool_result")["o1"]["result"]["text"] == "wieder da?"
    dead = by_id(second, "tool_error")["o"]["error"]  # the second death is final: no second restart
    assert "server faulty is unavailable" in dead
    assert by_id(second, "tool_result")["a2"]["result"] == {"result": 4.0}
    assert second.answer == "ok: nicht erreichbar." and second_s < 5.0  # no waiting on a dead server
    figures.record(
        "failing_tools",
        injected=2,
        runs=4,
        server_deaths=2,
        server_restarts=1,
        lost_results=0,
        dead_server_run_s=round(second_s, 2),
    )


async def test_garbage_results_and_errors_go_back_to_the_planner_and_retries_are_bounded(
    tmp_path: Path, figures: Any
) -> None:
    garbage_then_ref = plan([call("g", "garbage")], [call("o", "ok", text={"$ref": "g.result.field"})])
    always_failing = plan([call("f", "fail", message="invalid argument: the server rejects everything")])
    model = ReplayChatModel.of([
        garbage_then_ref, plan([call("o2", "ok", text="ohne Müll")]), "Ohne den Müll: ok.",
        always_failing, always_failing, always_failing,
    ])  # fmt: skip
    async with make_agent(model, mcp_config=write_config(tmp_path), max_plan_attempts=3) as planwerk:
        corrected, _ = await ask(planwerk, "Müll?", "garbage")
        bounded, _ = await ask(planwerk, "Fehler?", "fail")
    assert isinstance(by_id(corrected, "tool_result")["g"]["result"]["result"], str)  # garbage is kept as text
    ref_error = by_id(corrected, "tool_error")["o"]["error"]
    assert "$ref 'g.result.field'" in ref_error and "str value" in ref_error
    assert "$ref 'g.result.field'" in model.prompts[1][-1].content  # the planner saw why
    assert corrected.answer == "Ohne den Müll: ok."
    # The same call with the same arguments is not run again (it would fail again): the planner is told so until
    # its attempts are used up, then the failure is the answer, in code (nothing was delivered).
    attempts = [e for e in bounded.events if e["event"] == "tool_call"]
    assert len(attempts) == 1
    assert [e["decision"] for e in bounded.events if e["event"] == "replan"] == ["replan", "rejected", "rejected"]
    assert bounded.answer.startswith("fail (") and "fehlgeschlagen" in bounded.answer
    assert bounded.metadata["failed_tool_calls"] == 1
    assert model.calls == 6
    figures.record(
        "failing_tools", injected=4, runs=2, self_corrections=3, bounded_attempts=len(attempts), lost_results=0
    )


async def test_servers_down_at_start_are_named_and_the_run_uses_the_others(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, figures: Any
) -> None:
    config = write_config(
        tmp_path,
        ghost={"command": sys.executable, "args": ["-c", "import sys; sys.exit(1)"]},
        missing={"command": "/nonexistent/mcp-server"},
    )
    model = ReplayChatModel.of([
        plan([call("x", "ghost_tool")]), plan([call("a", "add", arg_0=20, arg_1=22)]), "42.",
    ])  # fmt: skip
    caplog.set_level(logging.WARNING, logger="planwerk.tools.mcp")
    started = time.monotonic()
    async with make_agent(model, mcp_config=config) as planwerk:
        open_s = time.monotonic() - started
        reply, _ = await ask(planwerk, "Was ist 20 + 22?", "down")
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(w.startswith("MCP server ghost is unavailable") for w in warnings), warnings
    assert any(w.startswith("MCP server missing is unavailable") for w in warnings), warnings
    replan = next(e for e in reply.events if e["event"] == "replan")
    assert "unknown tool 'ghost_tool'" in replan["reason"]
    assert reply.answer == "42." and open_s < 15.0
    figures.record(
        "failing_tools",
        injected=2,
        runs=1,
        servers_down_at_start=2,
        lost_results=0,
        start_with_dead_servers_s=round(open_s, 2),
    )
