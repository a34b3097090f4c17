"""A planwerk process for the crash test: runs (or resumes) a thread with tools that log every call.

Usage: python -m tests.graph.resume_worker <start|resume|peek> <db> <log> <replay file> <thread id>
The slow tool sleeps ``SLOW_SECONDS`` (env), so the test can kill the process while it runs.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.models.replay import ReplayChatModel
from planwerk.prompts.examples import select_examples
from planwerk.tools.base import FunctionToolSource


def tools(log: Path) -> FunctionToolSource:
    def note(line: str) -> None:
        with log.open("a", encoding="utf-8") as file:
            file.write(f"{line} pid={os.getpid()}\n")

    async def fast(name: str, value: int = 0) -> dict:
        """Returns at once."""
        note(f"start {name}")
        note(f"end {name}")
        return {"value": value + 1}

    async def slow(name: str, value: int = 0) -> dict:
        """Takes SLOW_SECONDS."""
        note(f"start {name}")
        await asyncio.sleep(float(os.environ.get("SLOW_SECONDS", "0")))
        note(f"end {name}")
        return {"value": value + 10}

    return FunctionToolSource([fast, slow])


async def main(mode: str, db: str, log: str, replay: str, thread_id: str) -> None:
    agent = Agent(
        model=ReplayChatModel.from_file(replay),
        tools=tools(Path(log)),
        retriever=False,
        db=db,
        context=Context(today="2026-11-22", tool_timeout_s=120),
    )
    async with agent:
        if mode == "peek":  # the checkpointed state, without running anything
            state = await agent.state(thread_id)
            print(json.dumps({"results": state.get("results", {})}))
            return
        if mode == "start":
            # Loaded before "ready" (the example ranker's embedder), so the run itself plans at once: the test
            # holds the database's write lock from "ready" on.
            await asyncio.to_thread(select_examples, "Rechne bitte.", ["fast", "slow"])
            with Path(log).open("a", encoding="utf-8") as file:
                file.write(f"ready run pid={os.getpid()}\n")
            reply = await agent.ask("Rechne bitte.", thread_id=thread_id)
        else:
            reply = await agent.resume(None, thread_id=thread_id)
        state = await agent.state(thread_id)
    print(json.dumps({"answer": reply.answer, "results": state["results"]}))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:6]))
