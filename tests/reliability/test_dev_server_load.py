"""50 concurrent threads against a real ``langgraph dev`` server (langgraph-sdk), the bundled math MCP server over
stdio, and one replay model per run (the factory resolves the model per run): every run finishes, each thread's
state holds only its own question, result and answer; two runs enqueued on one thread do not interleave.

The server is started with the serving tests' helper (tests/serving/conftest.py). ``langgraph dev`` runs ONE run
at a time unless given ``--n-jobs-per-worker`` (its CLI passes 1 to the API server; measured: 50 runs queued for
~80 s, ~0.9 s each), so the helper's ``langgraph`` is wrapped to add ``--n-jobs-per-worker 10``.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

import tests.serving.conftest as serving
from tests.helpers import conversation
from tests.serving.conftest import DevServer, add, plan, sdk_client, write_math_config, write_replay

pytestmark = pytest.mark.timeout(300)
THREADS = 50
JOBS = 10


@pytest.fixture
def concurrent_dev(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the serving helper start ``langgraph dev --n-jobs-per-worker JOBS``."""
    wrapper = tmp_path / "langgraph"
    wrapper.write_text(f'#!/bin/sh\nexec "{serving.LANGGRAPH}" "$@" --n-jobs-per-worker {JOBS}\n')
    wrapper.chmod(0o755)
    monkeypatch.setattr(serving, "LANGGRAPH", wrapper)


def question(i: int) -> str:
    return f"Thread {i}: Was ist {i} plus 1000?"


def answer(i: int) -> str:
    return f"Thread {i}: {i + 1000}."


async def test_fifty_concurrent_threads_against_langgraph_dev(
    tmp_path_factory: pytest.TempPathFactory, concurrent_dev: None, figures: Any
) -> None:
    folder = tmp_path_factory.mktemp("dev-load")
    server = DevServer(folder)
    try:
        server.start()
        client = sdk_client(server.url, timeout=120)
        assistant = await client.assistants.create(
            "planwerk",
            context={"profile": "math", "mcp_config": write_math_config(folder / "mcp.json"), "today": "2026-11-22"},
        )
        aid = assistant["assistant_id"]
        models = [
            write_replay(folder / f"replay-{i}.json", [plan(add("s", i, 1000)), answer(i)]) for i in range(THREADS)
        ]
        threads = [(await client.threads.create())["thread_id"] for _ in range(THREADS)]

        async def run(i: int) -> float:
            started = time.monotonic()
            await client.runs.wait(
                threads[i],
                aid,
                input={"messages": [{"role": "user", "content": question(i)}]},
                context={"model": models[i]},
                raise_error=True,
            )
            return time.monotonic() - started

        started = time.monotonic()
        latencies = await asyncio.gather(*(run(i) for i in range(THREADS)))
        wall = time.monotonic() - started
        problems: list[str] = []
        for i, thread in enumerate(threads):
            values = (await client.threads.get_state(thread))["values"]
            contents = [m["content"] for m in conversation(values["messages"])]
            if contents != [question(i), answer(i)] or values["results"] != {"s": {"result": float(i + 1000)}}:
                problems.append(f"thread {i}: {contents} {values.get('results')}")

        # Two runs enqueued on one thread at once: both complete, one after the other.
        shared = (await client.threads.create())["thread_id"]
        first = write_replay(folder / "first.json", [plan(add("s", 1, 1)), "Eins plus eins ist 2."])
        second = write_replay(folder / "second.json", [plan(add("s", 2, 2)), "Zwei plus zwei ist 4."])
        runs = [
            await client.runs.create(
                shared,
                aid,
                input={"messages": [{"role": "user", "content": text}]},
                context={"model": model},
                multitask_strategy="enqueue",
            )
            for text, model in (("Was ist 1 + 1?", first), ("Was ist 2 + 2?", second))
        ]
        for queued in runs:
            await client.runs.join(shared, queued["run_id"])
        values = (await client.threads.get_state(shared))["values"]
        turns = [(m["type"], m["content"]) for m in conversation(values["messages"])]
        server.stop()
    finally:
        server.kill()
    figures.record(
        "dev_server_load",
        threads=THREADS,
        runs=THREADS + 2,
        wall_s=round(wall, 2),
        run_p50_s=round(sorted(latencies)[THREADS // 2], 2),
        run_max_s=round(max(latencies), 2),
        leaks=len(problems),
        enqueued_same_thread=2,
        jobs_per_worker=JOBS,
    )
    assert problems == []
    assert turns == [
        ("human", "Was ist 1 + 1?"),
        ("ai", "Eins plus eins ist 2."),
        ("human", "Was ist 2 + 2?"),
        ("ai", "Zwei plus zwei ist 4."),
    ]
    assert "BlockingError" not in Path(server.log).read_text(errors="replace")
    assert json.dumps(values["results"]) == '{"s": {"result": 4.0}}'
