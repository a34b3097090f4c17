"""A step's checkpoint is committed before the next step's tool calls start (``durability="sync"``).

LangGraph's default ``"async"`` writes checkpoints beside the next step: while the database is slow or another
process holds its write lock, calls (with their side effects) run ahead of every checkpoint, and a crash loses them
all, so a resumed thread makes them again.
"""

from __future__ import annotations

import asyncio
import json
import signal
import sqlite3
import time
from pathlib import Path
from typing import Any

from langgraph.checkpoint.memory import InMemorySaver

from planwerk.agent import Agent
from planwerk.core.calls import results_of
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.serving.sqlite_saver import DurableSqliteSaver
from planwerk.tools.base import FunctionToolSource
from tests.graph.test_resume import PLAN, wait_for, worker

CHAIN = {
    "steps": [
        {"tools": [{"id": "a", "name": "append", "arguments": {"line": "a"}}]},
        {"tools": [{"id": "b", "name": "append", "arguments": {"line": {"$ref": "a.line"}}}]},
        {"tools": [{"id": "c", "name": "append", "arguments": {"line": {"$ref": "b.line"}}}]},
    ],
    "final": None,
}


class SlowSaver(InMemorySaver):
    """An in-memory saver whose checkpoint writes take a while, as on a busy disk or behind another writer."""

    async def aput(self, *args: Any, **kwargs: Any) -> Any:
        await asyncio.sleep(0.3)
        return await super().aput(*args, **kwargs)


async def test_no_call_starts_before_the_previous_steps_checkpoint_is_written() -> None:
    saver = SlowSaver()
    thread = {"configurable": {"thread_id": "chain"}}
    committed_at_start: dict[str, list[str]] = {}

    async def append(line: str) -> dict:
        """Appends a line (a side effect); notes which results were committed when it started."""
        latest = saver.get_tuple(thread)
        results = results_of(latest.checkpoint["channel_values"].get("calls", [])) if latest else {}
        committed_at_start[f"call {len(committed_at_start)}"] = sorted(results)
        return {"line": line + "+"}

    async with Agent(
        model=ReplayChatModel.of([json.dumps(CHAIN), "fertig"]),
        tools=FunctionToolSource([append]),
        retriever=False,
        checkpointer=saver,
        context=Context(today="2026-11-22", approve_destructive=False),
    ) as agent:
        # The LangGraph server asks for "async" unless a client names another mode: it must not weaken the run.
        run = agent.graph.astream(
            {"messages": [{"role": "user", "content": "Hänge die Zeile a dreimal an."}]},  # states the value
            {**agent._config("chain")},
            context=agent.context,
            durability="async",
        )
        async for _ in run:
            pass
    assert committed_at_start == {"call 0": [], "call 1": ["a"], "call 2": ["a", "b"]}


def test_a_killed_run_under_a_held_write_lock_does_not_repeat_its_calls(tmp_path: Path) -> None:
    db = tmp_path / "threads.sqlite"
    log = tmp_path / "calls.log"

    async def create() -> None:
        async with DurableSqliteSaver.from_conn_string(str(db)) as saver:
            await saver.setup()

    asyncio.run(create())
    answer = "fertig"
    first = worker("start", tmp_path, [json.dumps(PLAN), answer], slow_seconds=60)
    killed_under_lock = False
    try:
        wait_for(log, {"ready run"})
        # Another process (a backup, a sqlite3 shell) holds the write lock while the run starts.
        holder = sqlite3.connect(db, isolation_level=None, timeout=30)
        holder.execute("BEGIN IMMEDIATE")
        try:
            # Long enough for an "async" run to plan and start its calls (about 5 s on a loaded 2-core machine);
            # a "sync" run waits for the lock all that time.
            deadline = time.monotonic() + 15
            while time.monotonic() < deadline and "start b" not in log.read_text():
                time.sleep(0.05)
            if "start b" in log.read_text():
                # The calls ran ahead of every checkpoint: a crash now loses them (the bug this test guards).
                first.send_signal(signal.SIGKILL)
                killed_under_lock = True
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        if not killed_under_lock:
            wait_for(log, {"end a", "end c", "start b"})
            time.sleep(0.3)  # let the checkpointer write c's finished task (same step as b)
            first.send_signal(signal.SIGKILL)
    finally:
        first.wait(timeout=30)
    before = log.read_text().splitlines()
    second = worker("resume", tmp_path, [answer], slow_seconds=0.05)
    _, err = second.communicate(timeout=120)
    assert second.returncode == 0, err
    resumed = [line for line in log.read_text().splitlines() if line not in before]
    started_again = sorted(line.split()[1] for line in resumed if line.startswith("start"))
    assert started_again == ["b", "d", "e"], f"calls made again after the crash: {started_again}"
    assert not killed_under_lock, "tool calls started while no checkpoint could be written"
