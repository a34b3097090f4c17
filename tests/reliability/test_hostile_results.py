"""Tool data hostile to storage, through the real graph, a real MCP server over stdio and a SQLite checkpointer.

A result nested 300 levels deep used to crash the checkpoint write after the answer was printed (msgpack gives up
at 255 levels), so every resume ran the tool again; a lone surrogate in an argument or a result broke the server's
session for the rest of the run; 3,000 ``$ref``s to a 150 KB result built 450 MB of arguments. The hostile server
(tests/reliability/hostile_server.py) logs every call it runs, so "the tool did not run again" is counted.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from planwerk.agent import Reply
from planwerk.core.sanitize import DEPTH_NOTE_KEY, REPLACEMENT
from planwerk.tools.mcp import open_tools
from tests.helpers import make_agent

pytestmark = pytest.mark.faults  # injects faults and waits them out (tests/conftest.py: the tiers)

HOSTILE = str(Path(__file__).with_name("hostile_server.py"))
RUN_LIMIT_S = 60.0


def config(folder: Path) -> tuple[Path, Path]:
    """The MCP config with the hostile server, and the file its call log goes to."""
    log = folder / "calls.log"
    servers = {"hostile": {"command": "${PYTHON}", "args": [HOSTILE, "stdio"], "env": {"HOSTILE_LOG": str(log)}}}
    path = folder / "mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path, log


def plan(*steps: list[dict[str, Any]]) -> str:
    return json.dumps({"steps": [{"description": "", "tools": list(step)} for step in steps], "final": None})


def call(call_id: str, name: str, **arguments: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": arguments}


def calls_run(log: Path) -> list[str]:
    return log.read_text(encoding="utf-8").split() if log.exists() else []


def by_id(reply: Reply, kind: str) -> dict[str, dict[str, Any]]:
    return {e["id"]: e for e in reply.events if e["event"] == kind}


def max_rss_mb() -> float:
    """The process's peak resident memory so far (ru_maxrss is KiB on Linux)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def depth_of(value: Any) -> int:
    depth = 0
    while isinstance(value, dict) and value:
        value = next(iter(value.values()))
        depth += 1
    return depth


async def test_a_300_deep_result_is_checkpointed_and_resume_does_not_call_the_tool_again(
    tmp_path: Path, figures: Any
) -> None:
    cfg, log = config(tmp_path)
    db = tmp_path / "threads.sqlite"
    replies = [plan([call("d", "deep", depth=300)]), "Das Ergebnis ist tief verschachtelt."]
    async with make_agent(replies, mcp_config=cfg, db=db) as planwerk:
        async with asyncio.timeout(RUN_LIMIT_S):
            reply = await planwerk.ask("Wie tief?", thread_id="deep")
    assert reply.answer == "Das Ergebnis ist tief verschachtelt."
    assert calls_run(log) == ["deep"]
    # A fresh agent on the same file: the thread is complete, with the call's record and its (capped) result.
    async with make_agent([], mcp_config=cfg, db=db) as again:
        state = await again.state("deep")
        with pytest.raises(ValueError, match="no interrupted run to continue"):
            await again.resume(thread_id="deep")
    record = next(c for c in state["calls"] if c["id"] == "d")
    assert record["status"] == "ok"
    result = state["results"]["d"]
    stored_depth = depth_of(result)
    assert stored_depth <= 65
    marker = result
    for _ in range(64):
        marker = marker["a"]
    assert "nested deeper than 64 levels" in marker[DEPTH_NOTE_KEY]
    assert json.loads(marker["json"]) is not None  # the cut part is kept, as JSON text
    assert calls_run(log) == ["deep"]  # resume ran nothing
    figures.record(
        "hostile results: 300-deep result",
        result_depth=300,
        stored_depth=stored_depth,
        tool_runs=len(calls_run(log)),
        checkpointed=True,
        held=True,
        peak_rss_mb=round(max_rss_mb(), 1),
    )


async def test_lone_surrogates_in_arguments_and_results_keep_the_session(tmp_path: Path, figures: Any) -> None:
    cfg, log = config(tmp_path)
    # The model's JSON spells a lone surrogate as an escape, as a model can; the second call walks into the
    # result of the first, whose JSON text holds one too; the third call must still reach the same server.
    first = plan(
        [call("l", "lone"), call("e1", "echo", text="x\ud800y")],
        [call("e2", "echo", text={"$ref": "l.text"})],
        [call("e3", "echo", text="noch da")],
    )
    replies = [first, "Alles beantwortet."]
    async with make_agent(replies, mcp_config=cfg, db=tmp_path / "threads.sqlite") as planwerk:
        async with asyncio.timeout(RUN_LIMIT_S):
            reply = await planwerk.ask("Unicode?", thread_id="lone")
        state = await planwerk.state("lone")
    results = by_id(reply, "tool_result")
    assert not by_id(reply, "tool_error"), by_id(reply, "tool_error")
    assert results["l"]["result"] == {"text": f"vor {REPLACEMENT} nach"}
    assert results["e1"]["result"] == {"result": f"x{REPLACEMENT}y"}
    assert results["e2"]["result"] == {"result": f"vor {REPLACEMENT} nach"}
    assert results["e3"]["result"] == {"result": "noch da"}
    assert reply.answer == "Alles beantwortet."
    assert sorted(calls_run(log)) == ["echo", "echo", "echo", "lone"]
    json.dumps(state["results"], ensure_ascii=False).encode("utf-8")  # printable: no surrogate left
    figures.record(
        "hostile results: lone surrogates",
        in_arguments=2,
        in_results=1,
        later_calls_ok=1,
        session_lost=0,
        held=True,
    )


async def test_a_lone_surrogate_argument_does_not_break_the_session_of_the_tool_source(figures: Any) -> None:
    servers = {"hostile": {"command": sys.executable, "args": [HOSTILE, "stdio"], "timeout": 20}}
    async with open_tools({"mcpServers": servers}) as tools:
        sent = await tools.call("echo", {"text": "a\ud800b\udfffc"})
        after = await tools.call("echo", {"text": "danach"})
        listed = await tools.call("count", {"items": ["\udc80", "ok"]})
    assert sent == {"result": f"a{REPLACEMENT}b{REPLACEMENT}c"}
    assert after == {"result": "danach"}
    assert listed == {"result": 2}
    figures.record("hostile results: lone surrogates", direct_calls=3, session_lost=0)


async def test_3000_refs_to_a_150_kb_result_fail_the_call_with_a_clear_error_in_bounded_memory(
    tmp_path: Path, figures: Any
) -> None:
    cfg, log = config(tmp_path)
    refs = [{"$ref": "b.data"} for _ in range(3000)]
    # The failed call goes back to the planner once, which gives up with a final answer.
    replies = [
        plan([call("w", "echo", text="warm")]),
        "warm.",
        plan([call("b", "bulk", kb=150)], [call("c", "count", items=refs)]),
        json.dumps({"steps": [], "final": "Zu groß."}),
        "Zu groß.",
    ]
    async with make_agent(replies, mcp_config=cfg, db=tmp_path / "threads.sqlite") as planwerk:
        # A first question loads what a run loads (the answer check's model), so the peak below is this run's.
        await planwerk.ask("Warm?", thread_id="warm")
        rss_before = max_rss_mb()
        started = time.perf_counter()
        async with asyncio.timeout(RUN_LIMIT_S):
            reply = await planwerk.ask("Viel?", thread_id="amp")
        seconds = time.perf_counter() - started
        rss_after = max_rss_mb()
    error = by_id(reply, "tool_error")["c"]
    assert error["kind"] == "ref"
    assert "over the limit of 1,000,000 bytes" in error["error"] and "b.data" in error["error"]
    assert calls_run(log) == ["echo", "bulk"]  # the oversized call was never sent
    db_bytes = (tmp_path / "threads.sqlite").stat().st_size
    # Growth of the process's peak RSS: an upper bound of this run's own peak (0 when an earlier peak was higher).
    assert rss_after - rss_before < 200 and db_bytes < 32e6
    figures.record(
        "hostile results: reference amplification",
        refs=3000,
        result_kb=150,
        would_build_mb=450,
        held=True,
        failed_kind="ref",
        peak_rss_mb=round(rss_after, 1),
        peak_rss_growth_mb=round(rss_after - rss_before, 1),
        db_mb=round(db_bytes / 1e6, 2),
        run_s=round(seconds, 2),
    )


async def test_a_configured_budget_applies_per_call(tmp_path: Path) -> None:
    cfg, _ = config(tmp_path)
    refs = [{"$ref": "b.data"} for _ in range(4)]
    replies = [plan([call("b", "bulk", kb=10)], [call("c", "count", items=refs)]), "Vier."]
    async with make_agent(
        replies, mcp_config=cfg, db=tmp_path / "threads.sqlite", max_argument_bytes=100_000
    ) as planwerk:
        reply = await planwerk.ask("Vier Mal?", thread_id="budget")
    assert by_id(reply, "tool_result")["c"]["result"] == {"result": 4}
    replies = [
        plan([call("b", "bulk", kb=10)], [call("c", "count", items=refs)]),
        json.dumps({"steps": [], "final": "Zu viel."}),
        "Zu viel.",
    ]
    async with make_agent(
        replies, mcp_config=cfg, db=tmp_path / "threads2.sqlite", max_argument_bytes=30_000
    ) as planwerk:
        reply = await planwerk.ask("Vier Mal?", thread_id="budget")
    assert "over the limit of 30,000 bytes" in by_id(reply, "tool_error")["c"]["error"]
