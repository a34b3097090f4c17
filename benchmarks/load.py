"""Load benchmark: many concurrent sessions on ONE agent, against the real bundled math MCP server.

``python -m benchmarks.load [--threads 50] [--rounds 2] [--json]``

Every session (thread id) asks its own arithmetic task, ``Aufgabe <tag>: Was ist a mal b plus c?``. The model is
:class:`ArithmeticChatModel`, a scripted model that plans ``multiply(a, b)`` then ``add(<ref>, c)`` from the
question text and answers from the tool results in its prompt, so every thread's plan, results and answer can be
checked against its own question: a result or answer of another thread is a leak. Figures: a warm-up turn (loads
the example ranker), a single-turn baseline measured in the same run, then wall time and per-turn latency of the
concurrent rounds, wrong answers, state leaks, failed tool calls, and the process's resident memory before and
after (growth per thread kept in the in-memory checkpointer).
"""

from __future__ import annotations

import asyncio
import json
import re
import resource
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import typer
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from rich.console import Console
from rich.table import Table

from planwerk.graph.context import Context
from planwerk.graph.nodes.chat import is_conversation

MATH_CONFIG: dict[str, Any] = {
    "mcpServers": {
        "math": {"command": "${PYTHON}", "args": ["-m", "planwerk.tools.servers.math", "stdio"], "timeout": 30}
    }
}
"""Only the bundled math server, over stdio."""
_TASK = re.compile(r"Aufgabe (?P<tag>[\w-]+): Was ist (?P<a>-?\d+) mal (?P<b>-?\d+) plus (?P<c>-?\d+)\?")
_SUM = re.compile(r"^- s = add\(.*?\) → (?P<result>\{.*\})$", re.MULTILINE)
_SUM_VALUE = re.compile(r"^- s = add\(.*?\): result (?P<value>-?\d+(?:[.,]\d+)?)$", re.MULTILINE)
"""The ``add`` result as the answer prompt shows it: the JSON call log, or the typed values (the default)."""


@dataclass(frozen=True)
class Task:
    """One thread's question and what its answer must be."""

    tag: str
    a: int
    b: int
    c: int

    @property
    def question(self) -> str:
        """The question the thread asks."""
        return f"Aufgabe {self.tag}: Was ist {self.a} mal {self.b} plus {self.c}?"

    @property
    def expected(self) -> float:
        """The correct result."""
        return float(self.a * self.b + self.c)

    @property
    def answer(self) -> str:
        """The answer the scripted model gives when the tools returned the right result."""
        return answer_text(self.tag, self.expected)


def answer_text(tag: str, value: Any) -> str:
    """The scripted model's answer for task ``tag``."""
    return f"Aufgabe {tag}: Das Ergebnis ist {value}."


def task_for(index: int, round_: int = 0) -> Task:
    """A distinct, deterministic task per thread index and round."""
    return Task(tag=f"r{round_}-t{index}", a=index + 2, b=round_ + 3, c=index * 7 + round_)


def _text(message: BaseMessage) -> str:
    return message.text if isinstance(message.content, list) else str(message.content)


class ArithmeticChatModel(BaseChatModel):
    """A scripted model for engine tests and load: plans and answers from the question text, deterministically.

    The planner prompt (system message with the tool catalog) gets a two-step plan for the task in the last user
    message; the answer prompt gets :func:`answer_text` with the ``add`` result found in the tool results (or
    ``unknown``). ``delay_s`` makes every call take that long (without blocking the event loop), so concurrent
    runs overlap.
    """

    delay_s: float = 0.0
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "planwerk-arithmetic"

    def reply(self, messages: Sequence[BaseMessage]) -> str:
        """The reply to ``messages`` (pure)."""
        system = next((_text(m) for m in messages if isinstance(m, SystemMessage)), "")
        last = next((_text(m) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
        task = _TASK.search(last)
        if task is None:
            return json.dumps({"steps": [], "final": "Ich verstehe die Aufgabe nicht."})
        if "Tools:" in system:  # the planner's prompt
            steps = [
                {"description": "multiply", "tools": [
                    {"id": "m", "name": "multiply", "arguments": {"arg_0": int(task["a"]), "arg_1": int(task["b"])}}]},
                {"description": "add", "tools": [
                    {"id": "s", "name": "add", "arguments": {"arg_0": {"$ref": "m.result"}, "arg_1": int(task["c"])}}]},
            ]  # fmt: skip
            return json.dumps({"steps": steps, "final": None})
        value: Any = "unknown"
        if found := _SUM.search(last):
            value = json.loads(found["result"]).get("result", "unknown")
        elif found := _SUM_VALUE.search(last):
            value = float(found["value"].replace(",", "."))
        return answer_text(task["tag"], value)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls += 1
        time.sleep(self.delay_s)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.reply(messages)))])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.calls += 1
        await asyncio.sleep(self.delay_s)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.reply(messages)))])


@dataclass(frozen=True)
class ThreadCheck:
    """What one thread's checkpoint says after its turn."""

    thread_id: str
    correct: bool
    """The answer is the thread's own, with the right result."""
    leaked: bool
    """The state holds a question, result or answer that is not this thread's."""
    failed_calls: int
    problems: tuple[str, ...] = ()


def check_thread(task: Task, thread_id: str, answer: str | None, state: dict[str, Any]) -> ThreadCheck:
    """Compare a thread's reply and checkpoint with its own task."""
    problems: list[str] = []
    leaked = False
    calls = state.get("calls") or []
    failed = sum(1 for c in calls if c["status"] != "ok")
    results = state.get("results") or {}
    if state.get("question") != task.question:
        leaked = True
        problems.append(f"question in state is {state.get('question')!r}")
    product = (results.get("m") or {}).get("result")
    total = (results.get("s") or {}).get("result")
    if product != task.a * task.b or total != task.expected:
        leaked = leaked or (product is not None and total is not None)
        problems.append(f"results m={product!r} s={total!r}, expected {task.a * task.b} and {task.expected}")
    types = [m.type for m in state.get("messages", []) if is_conversation(m)]  # not the chat's progress or tools
    if types != ["human", "ai"]:
        problems.append(f"messages {types}")
    texts = [str(m.content) for m in state.get("messages", []) if is_conversation(m)]
    if any(f"Aufgabe {task.tag}:" not in text for text in texts):
        leaked = True
        problems.append("a message of another task is in this thread")
    if answer != task.answer:
        problems.append(f"answer {answer!r}, expected {task.answer!r}")
    return ThreadCheck(
        thread_id, correct=answer == task.answer, leaked=leaked, failed_calls=failed, problems=tuple(problems)
    )


def rss_mb() -> float:
    """The process's resident memory now (Linux ``/proc``), else its peak."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@dataclass(frozen=True)
class LoadFigures:
    """The benchmark's figures."""

    threads: int
    rounds: int
    turns: int
    warm_up_s: float
    """The first turn: loads the example ranker's embedding model (once per process)."""
    baseline_turn_s: float
    """One turn alone on the idle, warm agent (the baseline, measured in the same run)."""
    wall_s: float
    """All concurrent rounds together."""
    turns_per_s: float
    turn_p50_s: float
    turn_p95_s: float
    turn_max_s: float
    tool_calls: int
    failed_calls: int
    wrong_answers: int
    leaked_threads: int
    rss_start_mb: float
    rss_end_mb: float
    rss_growth_per_thread_kb: float
    """Memory growth from the end of the first concurrent round to the end of the last, per thread added."""
    problems: tuple[str, ...] = ()


async def _turn(agent: Any, task: Task, thread_id: str) -> tuple[float, ThreadCheck, int]:
    started = time.perf_counter()
    reply = await agent.ask(task.question, thread_id=thread_id)
    elapsed = time.perf_counter() - started
    state = await agent.state(thread_id)
    return elapsed, check_thread(task, thread_id, reply.answer, state), len(state.get("calls") or [])


async def run_load(threads: int = 50, rounds: int = 2, *, delay_s: float = 0.01) -> LoadFigures:
    """Run ``rounds`` rounds of ``threads`` concurrent sessions on one agent; the figures."""
    from planwerk.agent import Agent
    from planwerk.tools.mcp import open_tools

    if threads < 1 or rounds < 1:
        raise ValueError(f"threads and rounds must be at least 1, got threads={threads}, rounds={rounds}")
    rss_start = rss_mb()
    model = ArithmeticChatModel(delay_s=delay_s)
    context = Context(profile="math", today="2026-11-22", max_concurrency=8)
    checks: list[ThreadCheck] = []
    latencies: list[float] = []
    tool_calls = 0
    async with open_tools(MATH_CONFIG) as tools:
        if "add" not in tools.specs:
            raise RuntimeError(f"the math MCP server did not start: {dict(tools.unavailable)}")
        async with Agent(model=model, profile="math", tools=tools, retriever=False, context=context) as agent:
            warm_s, warm_check, _ = await _turn(agent, task_for(0, -2), "warm-up")  # loads the example ranker
            baseline, first_check, _ = await _turn(agent, task_for(0, -1), "baseline")
            checks += [warm_check, first_check]
            rss_after_first = 0.0
            started = time.perf_counter()
            for round_ in range(rounds):
                outcomes = await asyncio.gather(
                    *(_turn(agent, task_for(i, round_), f"load-{round_}-{i}") for i in range(threads))
                )
                for elapsed, check, calls in outcomes:
                    latencies.append(elapsed)
                    checks.append(check)
                    tool_calls += calls
                if round_ == 0:
                    rss_after_first = rss_mb()
            wall = time.perf_counter() - started
    rss_end = rss_mb()
    ordered = sorted(latencies)
    grown_threads = threads * (rounds - 1)
    growth = (rss_end - rss_after_first) * 1024 / grown_threads if grown_threads else 0.0
    return LoadFigures(
        threads=threads,
        rounds=rounds,
        turns=len(latencies),
        warm_up_s=round(warm_s, 3),
        baseline_turn_s=round(baseline, 4),
        wall_s=round(wall, 3),
        turns_per_s=round(len(latencies) / wall, 2) if wall else 0.0,
        turn_p50_s=round(statistics.median(ordered), 4),
        turn_p95_s=round(ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))], 4),
        turn_max_s=round(ordered[-1], 4),
        tool_calls=tool_calls,
        failed_calls=sum(c.failed_calls for c in checks),
        wrong_answers=sum(1 for c in checks if not c.correct),
        leaked_threads=sum(1 for c in checks if c.leaked),
        rss_start_mb=round(rss_start, 1),
        rss_end_mb=round(rss_end, 1),
        rss_growth_per_thread_kb=round(growth, 1),
        problems=tuple(f"{c.thread_id}: {p}" for c in checks for p in c.problems)[:20],
    )


def render(figures: LoadFigures) -> Table:
    """The figures as a two-column table."""
    table = Table(title=f"{figures.threads} concurrent sessions x {figures.rounds} rounds, real math MCP server")
    table.add_column("figure")
    table.add_column("value", justify="right")
    for key, value in asdict(figures).items():
        if key != "problems":
            table.add_row(key, str(value))
    table.add_row("problems", "; ".join(figures.problems) or "none")
    return table


def main(
    threads: int = typer.Option(50, "--threads", min=1, max=1000, help="Concurrent sessions per round."),
    rounds: int = typer.Option(2, "--rounds", min=1, max=20, help="Rounds (new thread ids each round)."),
    delay_s: float = typer.Option(0.01, "--delay", min=0.0, help="Seconds each scripted model call takes."),
    as_json: bool = typer.Option(False, "--json", help="Print one JSON object as the last line."),
) -> None:
    """Measure many concurrent sessions on one agent: latency, correctness, leaks, memory."""
    console = Console(stderr=as_json)
    with console.status(f"{threads} concurrent sessions x {rounds} rounds ..."):
        figures = asyncio.run(run_load(threads, rounds, delay_s=delay_s))
    console.print(render(figures))
    if as_json:
        print(json.dumps({"benchmark": "load", **asdict(figures)}))
    if figures.wrong_answers or figures.leaked_threads:
        raise typer.Exit(1)


if __name__ == "__main__":
    typer.run(main)
