"""What elicitation and sampling cost per question: server-everything over stdio, the replay model (no model time).

``python -m benchmarks.capabilities [--rounds N]`` asks N questions of each kind on one agent (after one
warm-up round) and prints the medians as one JSON line:

- ``ask_until_interrupt_ms``: a question whose one call (``trigger-elicitation-request``) asks the person: until
  the thread is paused;
- ``resume_recall_ms``: answering it: the node runs again, the call is made again, the server asks again and gets
  the answer from the resume value, the answer is written;
- ``plain_echo_question_ms``: a question with one plain call (``echo``), for comparison;
- ``sampling_question_ms``: a question whose call (``trigger-sampling-request``) has the run's model answer.

Needs the npm servers (``bash scripts/setup.d/20-mcp-servers.sh``).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import time
from pathlib import Path

from planwerk.agent import Agent
from planwerk.models.replay import ReplayChatModel
from planwerk.tools.mcp import open_tools

EVERYTHING = Path(__file__).resolve().parents[1] / ".mcp-servers" / "node_modules" / ".bin" / "mcp-server-everything"


def _plan(call: dict[str, object]) -> str:
    return json.dumps({"steps": [{"description": "", "tools": [call]}], "final": None})


FORM = _plan({"id": "form", "name": "trigger-elicitation-request", "arguments": {}})
ECHO = _plan({"id": "e", "name": "echo", "arguments": {"message": "hi"}})
SAMPLE = _plan({"id": "s", "name": "trigger-sampling-request", "arguments": {"prompt": "hi", "maxTokens": 5}})


async def measure(rounds: int) -> dict[str, float]:
    """The medians in milliseconds over ``rounds`` rounds (after one warm-up round)."""
    if not EVERYTHING.exists():
        raise SystemExit(f"{EVERYTHING} is missing: run bash scripts/setup.d/20-mcp-servers.sh")
    config = {"mcpServers": {"everything": {"command": str(EVERYTHING), "timeout": 30}}}
    replies = [FORM, "ok", ECHO, "ok", SAMPLE, "sampled", "ok"] * (rounds + 1)
    times: dict[str, list[float]] = {"ask": [], "resume": [], "echo": [], "sample": []}
    async with (
        open_tools(config) as tools,
        Agent(model=ReplayChatModel.of(replies), tools=tools, retriever=False) as agent,
    ):
        for i in range(rounds + 1):
            took: dict[str, float] = {}
            started = time.perf_counter()
            assert (await agent.ask("form", thread_id=f"f{i}")).interrupts
            took["ask"] = time.perf_counter() - started
            started = time.perf_counter()
            assert (await agent.resume({"name": "Ada"}, thread_id=f"f{i}")).answer == "ok"
            took["resume"] = time.perf_counter() - started
            started = time.perf_counter()
            assert (await agent.ask("echo", thread_id=f"e{i}")).answer == "ok"
            took["echo"] = time.perf_counter() - started
            started = time.perf_counter()
            assert (await agent.ask("sample", thread_id=f"s{i}")).answer == "ok"
            took["sample"] = time.perf_counter() - started
            if i:  # round 0 warms up (imports, first use of each path)
                for key, value in took.items():
                    times[key].append(value)
    med = {key: round(statistics.median(values) * 1000, 1) for key, values in times.items()}
    return {
        "rounds": rounds,
        "ask_until_interrupt_ms": med["ask"],
        "resume_recall_ms": med["resume"],
        "plain_echo_question_ms": med["echo"],
        "sampling_question_ms": med["sample"],
    }


def main() -> None:
    """Command line: ``--rounds N`` (default 10)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=10)
    print(json.dumps(asyncio.run(measure(parser.parse_args().rounds))))


if __name__ == "__main__":
    main()
