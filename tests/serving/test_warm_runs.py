"""Warm runs under ``langgraph dev``: MCP sessions opened at server start and kept across runs.

The server starts with ``PLANWERK_WARM_START=tools`` for a math-only context: the math MCP server is opened at
start (progress in the log), and three runs on it, each with its own replay model, use that one session: one math
server process for all of them, every run's graph load logged as warm. Shutdown closes the session.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pytest

from tests.serving.conftest import DevServer, add, plan, sdk_client, write_math_config, write_replay

pytestmark = pytest.mark.timeout(240)

GRAPH_LOAD = re.compile(r"graph load: ([\d.]+) ms \(MCP sessions (warm|cold)\)")


def math_servers(root: int) -> list[int]:
    """PIDs of math MCP servers descending from process ``root`` (Linux /proc)."""
    parents: dict[int, int] = {}
    commands: dict[int, str] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            parents[int(entry.name)] = int(stat.rsplit(")", 1)[1].split()[1])
            commands[int(entry.name)] = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except (OSError, ValueError, IndexError):
            continue

    def descends(pid: int) -> bool:
        for _ in range(64):
            pid = parents.get(pid, 0)
            if pid == root:
                return True
            if pid <= 1:
                return False
        return False

    return [pid for pid, command in commands.items() if "planwerk.tools.servers.math" in command and descends(pid)]


def wait_for_log(server: DevServer, text: str, timeout_s: float = 120.0) -> None:
    """Wait (bounded) until the server's log contains ``text``."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if text in server.log.read_text(errors="replace"):
            return
        time.sleep(0.1)
    pytest.fail(f"{text!r} not in the server log within {timeout_s:g} s:\n{server.tail()}")


async def test_mcp_sessions_open_at_start_and_serve_every_run(
    dev_server_factory: type[DevServer], tmp_path: Path
) -> None:
    config = write_math_config(tmp_path / "mcp.json")
    context = {"profile": "math", "mcp_config": config}
    server = dev_server_factory(
        tmp_path,
        extra_env={"PLANWERK_WARM_START": "tools", "PLANWERK_WARM_START_CONTEXT": json.dumps(context)},
    ).start()
    wait_for_log(server, "warm start: tools ready")
    assert server.process is not None
    root = server.process.pid
    assert len(math_servers(root)) == 1  # opened at start, before any run

    client = sdk_client(server.url, timeout=60)
    thread = (await client.threads.create())["thread_id"]
    for i in range(3):
        model = write_replay(tmp_path / f"run{i}.json", [plan(add("s", i, 10)), f"{i} + 10 = {i + 10}."])
        await client.runs.wait(
            thread,
            "planwerk",
            input={"messages": [{"role": "user", "content": f"Was ist {i} + 10?"}]},
            context={**context, "model": model},
        )
        state = await client.threads.get_state(thread)
        assert state["values"]["answer"] == f"{i} + 10 = {i + 10}."
        assert state["values"]["results"] == {"s": {"result": float(i + 10)}}
    assert len(math_servers(root)) == 1  # the same session served all three runs

    loads = GRAPH_LOAD.findall(server.log.read_text(errors="replace"))
    assert [kind for _, kind in loads] == ["warm"] * 3, server.tail()
    print(f"\ngraph load per warm run: {', '.join(f'{float(ms):.1f} ms' for ms, _ in loads)}")
    assert server.stop(), server.tail()
    assert math_servers(root) == []  # shutdown closed the pooled session
