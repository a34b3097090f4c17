"""Concurrency: runs on one thread are queued, never interleaved; 50 sessions on one agent against the real math
MCP server all finish with their own results; planning never blocks the event loop."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest
from pydantic import BaseModel

from benchmarks.load import ArithmeticChatModel, check_thread, run_load, task_for
from planwerk.agent import Agent
from planwerk.graph.context import Context
from planwerk.tools.base import FunctionToolSource
from tests.helpers import conversation

pytestmark = pytest.mark.faults  # injects faults and waits them out (tests/conftest.py: the tiers)

MATH = Context(profile="math", today="2026-11-22")


class Number(BaseModel):
    result: float


def arithmetic_tools(log: list[str]) -> FunctionToolSource:
    async def multiply(arg_0: float, arg_1: float) -> Number:
        """Multiplies two numbers."""
        log.append(f"multiply {arg_0} {arg_1}")
        await asyncio.sleep(0.05)
        return Number(result=arg_0 * arg_1)

    async def add(arg_0: float, arg_1: float) -> Number:
        """Adds two numbers."""
        log.append(f"add {arg_0} {arg_1}")
        await asyncio.sleep(0.05)
        return Number(result=arg_0 + arg_1)

    return FunctionToolSource([multiply, add])


async def test_two_runs_on_the_same_thread_at_once_are_queued_not_interleaved(figures: Any) -> None:
    first, second = task_for(1, 7), task_for(2, 7)
    log: list[str] = []
    # Every model call takes 0.2 s, so without the per-thread queue the two turns would overlap.
    model = ArithmeticChatModel(delay_s=0.2)
    async with Agent(model=model, profile="math", tools=arithmetic_tools(log), retriever=False, context=MATH) as agent:
        replies = await asyncio.gather(
            agent.ask(first.question, thread_id="same"), agent.ask(second.question, thread_id="same")
        )
        state = await agent.state("same")
    assert [r.answer for r in replies] == [first.answer, second.answer]
    messages = conversation(state["messages"])  # questions and answers, not the chat's progress and tool calls
    assert [m.type for m in messages] == ["human", "ai", "human", "ai"]
    assert [m.content for m in messages] == [first.question, first.answer, second.question, second.answer]
    # The tool calls of the two turns did not interleave either: m, s of the first, then m, s of the second.
    assert log == [
        f"multiply {first.a} {first.b}",
        f"add {float(first.a * first.b)} {first.c}",
        f"multiply {second.a} {second.b}",
        f"add {float(second.a * second.b)} {second.c}",
    ]
    assert state["question"] == second.question and state["results"]["s"]["result"] == second.expected
    figures.record("same_thread", concurrent_runs=2, turns_in_checkpoint=len(messages) // 2, interleaved=0)


async def test_fifty_concurrent_sessions_on_the_real_math_server(figures: Any) -> None:
    result = await run_load(threads=50, rounds=2, delay_s=0.01)
    figures.record(
        "load",
        threads=result.threads,
        rounds=result.rounds,
        turns=result.turns,
        tool_calls=result.tool_calls,
        failed_calls=result.failed_calls,
        wrong_answers=result.wrong_answers,
        leaked_threads=result.leaked_threads,
        baseline_turn_s=result.baseline_turn_s,
        wall_s=result.wall_s,
        turn_p95_s=result.turn_p95_s,
        rss_growth_per_thread_kb=result.rss_growth_per_thread_kb,
    )
    assert result.problems == ()
    assert result.turns == 100 and result.tool_calls == 200
    assert result.failed_calls == result.wrong_answers == result.leaked_threads == 0
    # Bounded memory: a finished thread keeps its checkpoints (in memory here), nothing else piles up.
    assert result.rss_growth_per_thread_kb < 2048


def test_the_thread_check_notices_a_leak() -> None:
    """The load check is not vacuous: another thread's question and results in a state are reported."""
    mine, other = task_for(3), task_for(4)

    class Message:
        def __init__(self, kind: str, content: str):
            self.type, self.content = kind, content

    state = {
        "question": other.question,
        "results": {"m": {"result": other.a * other.b}, "s": {"result": other.expected}},
        "messages": [Message("human", other.question), Message("ai", other.answer)],
        "calls": [],
    }
    check = check_thread(mine, "t", other.answer, state)
    assert check.leaked and not check.correct and len(check.problems) == 4


async def test_planning_does_not_block_the_event_loop(monkeypatch: pytest.MonkeyPatch, figures: Any) -> None:
    """Example ranking (embedding, and on first use loading the embedder) must run off the loop."""
    import planwerk.prompts.zero_shot as zero_shot  # the planner ranks through the name zero_shot imported

    original = zero_shot.select_examples

    ranked: list[float] = []

    def slow_select(*args: Any, **kwargs: Any) -> Any:
        ranked.append(time.perf_counter())
        time.sleep(0.6)  # a blocking stand-in for a cold embedder load
        return original(*args, ranking="words", **kwargs)

    monkeypatch.setattr(zero_shot, "select_examples", slow_select)
    gaps: list[float] = []
    stop = asyncio.Event()

    async def heartbeat() -> None:
        last = time.perf_counter()
        while not stop.is_set():
            await asyncio.sleep(0.02)
            now = time.perf_counter()
            gaps.append(now - last)
            last = now

    beat = asyncio.create_task(heartbeat())
    async with Agent(
        model=ArithmeticChatModel(), profile="math", tools=arithmetic_tools([]), retriever=False, context=MATH
    ) as agent:
        reply = await agent.ask(task_for(5).question, thread_id="loop")
    stop.set()
    await beat
    assert reply.answer == task_for(5).answer
    assert ranked, "the planner did not rank examples: the blocking stand-in was never called"
    assert max(gaps) < 0.4, f"the event loop stalled for {max(gaps):.2f} s"
    figures.record("event_loop", blocking_stand_in_s=0.6, max_loop_gap_s=round(max(gaps), 3))
