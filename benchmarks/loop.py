"""Cost per task: planwerk against the workshop notebook's agent loop, on the same scripted model replies.

The baseline (:class:`NotebookLoop`) re-implements the loop of the workshop notebook (``Agentic_AI.ipynb``,
cells 102-130, ``agentic_run_to_final_answer``): ask the model for a plan, run the NEXT step only (its calls one
after another, each over a fresh MCP session, as ``agentic_call_mcp_tool`` does), append the results to the tool
history, ask again with the whole history, until the model sets ``final``. planwerk plans once, runs every call as
soon as its inputs are there (concurrently, over one persistent session), and asks the model once more for the
answer.

Both engines see the same system prompt (planwerk's planning prompt for the tools) and the same question, and
each gets the replies its protocol needs from a replay model, so only the engine differs. Prompt tokens are
estimated the same way for both (:func:`planwerk.models.replay.estimate_tokens` over the message texts).
A second measurement runs one step of N independent calls that each take 0.5 s through a real MCP server.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from datetime import date
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage, ChatMessage, HumanMessage, SystemMessage

from planwerk.tools.base import ToolSource
from planwerk.tools.servers.launch import serve_http

TODAY = "2026-01-15"
BENCH_SERVER = "benchmarks.server"
ANSWER = "Das Ergebnis ist {value:g}."

CallTool = Callable[[str, dict[str, Any]], Awaitable[Any]]


# --- scenarios --------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Scenario:
    """A task with its plan: steps of calls (calls in a step are independent of each other)."""

    name: str
    question: str
    steps: tuple[tuple[Mapping[str, Any], ...], ...]
    answer: float
    """The last call's result (what the scripted final answer states)."""

    @property
    def calls(self) -> int:
        """Tool calls of the task."""
        return sum(len(step) for step in self.steps)

    @property
    def multi_step(self) -> bool:
        """Whether later calls wait for earlier ones (the case the notebook loop pays for)."""
        return len(self.steps) > 1

    def plan(self, final: str | None = None) -> dict[str, Any]:
        """The plan in the shared JSON format."""
        return {
            "steps": [{"description": ", ".join(c["name"] for c in step), "tools": list(step)} for step in self.steps],
            "final": final,
        }


def _call(call_id: str, name: str, a: Any, b: Any) -> dict[str, Any]:
    return {"id": call_id, "name": name, "arguments": {"arg_0": a, "arg_1": b}}


def _ref(call_id: str) -> dict[str, str]:
    return {"$ref": f"{call_id}.result"}


SCENARIOS: tuple[Scenario, ...] = (
    Scenario("1 step", "Was ist 12 plus 30?", ((_call("s1", "add", 12, 30),),), 42.0),
    Scenario(
        "2 dependent steps",
        "Was ist (12 plus 30) mal 3?",
        ((_call("s1", "add", 12, 30),), (_call("s2", "multiply", _ref("s1"), 3),)),
        126.0,
    ),
    Scenario(
        "3 dependent steps",
        "Was ist (12 plus 30) mal 3, minus 6?",
        (
            (_call("s1", "add", 12, 30),),
            (_call("s2", "multiply", _ref("s1"), 3),),
            (_call("s3", "subtract", _ref("s2"), 6),),
        ),
        120.0,
    ),
    Scenario(
        "5 independent calls",
        "Was sind 1+2, 3+4, 5·6, 7−8 und 9/3?",
        (
            (
                _call("a", "add", 1, 2),
                _call("b", "add", 3, 4),
                _call("c", "multiply", 5, 6),
                _call("d", "subtract", 7, 8),
                _call("e", "divide", 9, 3),
            ),
        ),
        3.0,
    ),
)
"""The tasks both engines run: 1, 2 and 3 dependent steps, and one step of 5 independent calls."""


def planwerk_script(scenario: Scenario) -> list[str]:
    """planwerk's protocol: the plan, then the answer."""
    return [json.dumps(scenario.plan()), ANSWER.format(value=scenario.answer)]


def notebook_script(scenario: Scenario) -> list[str]:
    """The notebook's protocol: the (re)plan before every step, then ``{"steps": [], "final": answer}``."""
    replans = [json.dumps(scenario.plan()) for _ in scenario.steps]
    return [*replans, json.dumps({"steps": [], "final": ANSWER.format(value=scenario.answer)})]


# --- the notebook's loop ----------------------------------------------------------------------------------------


class NotebookPlanError(ValueError):
    """The model's reply holds no plan the notebook loop can use."""


def parse_notebook_plan(text: str) -> dict[str, Any]:
    """The notebook's parser: the first balanced ``{...}`` (string-aware), which must hold ``steps`` and ``final``."""
    start = text.find("{")
    if start == -1:
        raise NotebookPlanError(f"no JSON object in the model output: {text[:200]!r}")
    depth, in_string, escape, end = 0, False, False, None
    for index in range(start, len(text)):
        char = text[index]
        if in_string:
            if escape:
                escape = False
            elif char == "\\":
                escape = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth == 0:
                end = index
                break
    candidate = text[start : end + 1] if end is not None else text[start:]
    try:
        plan = json.loads(candidate)
    except json.JSONDecodeError as error:
        raise NotebookPlanError(f"the plan is not valid JSON: {error}") from None
    if not isinstance(plan, dict) or "steps" not in plan or "final" not in plan:
        raise NotebookPlanError("the plan must have 'steps' and 'final'")
    if not isinstance(plan["steps"], list):
        raise NotebookPlanError("'steps' must be a list")
    return plan


def resolve_notebook_arguments(value: Any, results: Mapping[str, Any], user: Mapping[str, Any]) -> Any:
    """The notebook's reference resolution: ``{"$ref": "id.path"}`` or ``"$ref:id.path"``, result as the root."""
    if isinstance(value, dict) and set(value) == {"$ref"} and isinstance(value["$ref"], str):
        return _resolve_ref(value["$ref"], results, user)
    if isinstance(value, dict):
        return {key: resolve_notebook_arguments(item, results, user) for key, item in value.items()}
    if isinstance(value, list):
        return [resolve_notebook_arguments(item, results, user) for item in value]
    if isinstance(value, str) and value.startswith("$ref:"):
        return _resolve_ref(value.removeprefix("$ref:"), results, user)
    return value


def _resolve_ref(ref: str, results: Mapping[str, Any], user: Mapping[str, Any]) -> Any:
    root, *path = ref.split(".")
    if root == "user":
        current: Any = user
    elif root in results:
        current = results[root]
    else:
        raise KeyError(f"unknown tool id in $ref: {root}")
    for part in path:
        if isinstance(current, list) and part.isdigit():
            current = current[int(part)]
        elif isinstance(current, dict) and part in current:
            current = current[part]
        else:
            raise KeyError(f"invalid path component {part!r} in $ref {ref!r}")
    return current


@dataclass(frozen=True)
class LoopRun:
    """What one task cost an engine."""

    answer: str | None
    llm_calls: int
    prompt_tokens: int
    completion_tokens: int
    tool_calls: int
    wall_s: float
    results: Mapping[str, Any]
    """Tool results by call id."""


class NotebookLoop:
    """``agentic_run_to_final_answer`` of the workshop notebook, on a LangChain chat model."""

    FINAL_NUDGE = (
        "Formuliere jetzt bitte eine finale Antwort für den Nutzer basierend auf allen bisherigen Tool-Ergebnissen."
    )
    FALLBACK = "Ich konnte trotz mehrerer Planungsrunden keine finale Antwort erzeugen."

    def __init__(self, model: BaseChatModel, call_tool: CallTool, *, max_iterations: int = 8):
        """``call_tool(name, args)`` returns ``{"isError": bool, "data": ...}`` as the notebook's invoker does."""
        self.model = model
        self.call_tool = call_tool
        self.max_iterations = max_iterations

    async def run(self, system_prompt: str, user_input: str, history: Sequence[BaseMessage] = ()) -> LoopRun:
        """Plan, run the next step, re-plan with the whole tool history, until the model gives ``final``."""
        started = time.perf_counter()
        tool_history: list[dict[str, Any]] = []
        results: dict[str, Any] = {}
        executed: set[int] = set()
        user = {"raw": user_input}
        calls = prompt_tokens = completion_tokens = 0
        for _ in range(self.max_iterations):
            messages: list[BaseMessage] = [
                SystemMessage(system_prompt),
                *history,
                *(ChatMessage(role="tool", content=json.dumps(entry, ensure_ascii=False)) for entry in tool_history),
                HumanMessage(user_input),
            ]
            reply = await self.model.ainvoke(messages)
            calls += 1
            usage = reply.usage_metadata or {}
            prompt_tokens += usage.get("input_tokens", 0)
            completion_tokens += usage.get("output_tokens", 0)
            plan = parse_notebook_plan(str(reply.content))
            next_index = next((i for i in range(len(plan["steps"])) if i not in executed), None)
            if plan.get("final") is not None and next_index is None:
                return LoopRun(
                    plan["final"],
                    calls,
                    prompt_tokens,
                    completion_tokens,
                    len(tool_history),
                    time.perf_counter() - started,
                    results,
                )
            if next_index is not None:
                tool_history += await self.execute_step(plan["steps"][next_index], results, user)
                executed.add(next_index)
                continue
            user_input = self.FINAL_NUDGE
        return LoopRun(
            self.FALLBACK,
            calls,
            prompt_tokens,
            completion_tokens,
            len(tool_history),
            time.perf_counter() - started,
            results,
        )

    async def execute_step(
        self, step: Mapping[str, Any], results: dict[str, Any], user: Mapping[str, Any]
    ) -> list[dict[str, Any]]:
        """The notebook's ``agentic_execute_step``: the step's calls one after another; tool-history entries."""
        entries = []
        for tool in step.get("tools", []):  # one after another, as in the notebook
            args = resolve_notebook_arguments(tool.get("arguments", {}), results, user)
            outcome = await self.call_tool(tool["name"], args)
            if outcome.get("isError"):
                raise RuntimeError(f"tool {tool['name']} failed: {outcome.get('data')}")
            results[tool["id"]] = outcome["data"]
            entries.append(
                {
                    "role": "tool",
                    "tool_id": tool["id"],
                    "name": tool["name"],
                    "arguments": args,
                    "result": outcome["data"],
                }
            )
        return entries


def session_per_call(url: str, timeout_s: float = 30.0) -> CallTool:
    """The notebook's ``agentic_call_mcp_tool``: a new streamable-HTTP session for every call (with a timeout)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client
    from mcp.types import TextContent

    async def call_tool(name: str, args: dict[str, Any]) -> dict[str, Any]:
        async with asyncio.timeout(timeout_s):
            async with streamable_http_client(url) as (read, write, _), ClientSession(read, write) as session:
                await session.initialize()
                raw = await session.call_tool(name, args)
        if raw.structuredContent is not None:
            data: Any = raw.structuredContent
        else:
            data = "\n".join(c.text for c in raw.content if isinstance(c, TextContent))
        return {"isError": bool(raw.isError), "data": data}

    return call_tool


# --- running both -----------------------------------------------------------------------------------------------


@contextmanager
def bench_server_http(timeout_s: float = 30.0) -> Iterator[str]:
    """The bench MCP server (math tools + ``pause``) over streamable HTTP as a subprocess; yields its URL."""
    with serve_http(["-m", BENCH_SERVER], timeout_s=timeout_s) as (url, _):
        yield url


def planning_prompt(question: str, tools: ToolSource) -> tuple[str, str]:
    """planwerk's planning prompt for ``question`` (math profile): (system text, user text)."""
    from planwerk.graph.nodes.common import visible_specs
    from planwerk.profiles import get_profile
    from planwerk.prompts.examples import library, select_examples
    from planwerk.prompts.render import build_plan_messages
    from planwerk.prompts.texts import texts_for

    profile = get_profile("math")
    specs = visible_specs(tools, profile)
    examples = select_examples(question, specs, k=1, examples=library(profile.examples))
    messages = build_plan_messages(
        persona=profile.persona,
        specs=specs,
        examples=examples,
        question=question,
        # As the engine does: the math profile's prompts name no date and are English.
        today=date.fromisoformat(TODAY) if profile.uses_dates else None,
        texts=texts_for(profile),
    )
    return str(messages[0].content), str(messages[-1].content)


async def run_planwerk(scenario: Scenario, tools: ToolSource) -> LoopRun:
    """One task through planwerk's graph with a replay model."""
    from planwerk.agent import Agent
    from planwerk.graph.context import Context
    from planwerk.models.replay import ReplayChatModel

    model = ReplayChatModel.of(planwerk_script(scenario))
    context = Context(profile="math", today=TODAY)
    started = time.perf_counter()
    async with Agent(model=model, profile="math", tools=tools, retriever=False, context=context) as agent:
        reply = await agent.ask(scenario.question, thread_id="loop")
        state = await agent.state("loop")
    wall = time.perf_counter() - started
    meta = reply.metadata
    return LoopRun(
        reply.answer,
        int(meta["llm_calls"]),
        int(meta["prompt_tokens"]),
        int(meta["completion_tokens"]),
        int(meta["tool_calls"]),
        wall,
        dict(state.get("results", {})),
    )


async def run_notebook(scenario: Scenario, tools: ToolSource, call_tool: CallTool) -> LoopRun:
    """One task through the notebook's loop with a replay model (the same system prompt and question)."""
    from planwerk.models.replay import ReplayChatModel

    system, user = planning_prompt(scenario.question, tools)
    loop = NotebookLoop(ReplayChatModel.of(notebook_script(scenario)), call_tool)
    return await loop.run(system, user)


@dataclass(frozen=True)
class ScenarioFigures:
    """Both engines on one task."""

    scenario: str
    steps: int
    calls: int
    notebook: LoopRun
    planwerk: LoopRun


@dataclass(frozen=True)
class ConcurrencyFigures:
    """One step of ``calls`` independent calls of ``pause_s`` each."""

    calls: int
    pause_s: float
    planwerk_s: float
    notebook_s: float

    @property
    def sequential_s(self) -> float:
        """What running them one after another must take at least."""
        return self.calls * self.pause_s


def _pause_plan(calls: int, pause_s: float) -> dict[str, Any]:
    tools = [{"id": f"p{i}", "name": "pause", "arguments": {"seconds": pause_s, "value": i}} for i in range(calls)]
    return {"steps": [{"description": "unabhängige langsame Aufrufe", "tools": tools}], "final": None}


async def measure_concurrency(
    tools: ToolSource, call_tool: CallTool, calls: int = 5, pause_s: float = 0.5
) -> ConcurrencyFigures:
    """Wall time of one step of ``calls`` pauses: planwerk's executor against the notebook's step loop."""
    from planwerk.execution import ExecutionPolicy, execute_plan

    plan = _pause_plan(calls, pause_s)
    started = time.perf_counter()
    records = await execute_plan(plan, tools, policy=ExecutionPolicy(timeout_s=pause_s + 30, max_concurrency=calls))
    planwerk_s = time.perf_counter() - started
    if failed := [r for r in records.values() if r["status"] != "ok"]:
        raise RuntimeError(f"pause calls failed: {failed[0]['error']}")
    loop = NotebookLoop(model=None, call_tool=call_tool)  # type: ignore[arg-type]  # only the step runner is used
    started = time.perf_counter()
    await loop.execute_step(plan["steps"][0], {}, {"raw": ""})
    notebook_s = time.perf_counter() - started
    return ConcurrencyFigures(calls, pause_s, round(planwerk_s, 3), round(notebook_s, 3))


@dataclass(frozen=True)
class LoopReport:
    """The whole comparison."""

    scenarios: tuple[ScenarioFigures, ...]
    concurrency: ConcurrencyFigures
    wall_s: float

    def summary(self) -> dict[str, Any]:
        """The figures as one JSON-able object."""
        multi = [s for s in self.scenarios if s.steps > 1]

        def ratio(get: Callable[[LoopRun], float], rows: Sequence[ScenarioFigures]) -> float | None:
            baseline = sum(get(s.notebook) for s in rows)
            return round(sum(get(s.planwerk) for s in rows) / baseline, 4) if baseline else None

        def row(run: LoopRun) -> dict[str, Any]:
            out = asdict(run)
            out["wall_s"] = round(run.wall_s, 4)
            out["results"] = dict(sorted(run.results.items()))
            return out

        return {
            "benchmark": "loop",
            "samples": len(self.scenarios),
            "scenarios": [
                {
                    "scenario": s.scenario,
                    "steps": s.steps,
                    "calls": s.calls,
                    "notebook": row(s.notebook),
                    "planwerk": row(s.planwerk),
                }
                for s in self.scenarios
            ],
            "llm_calls_ratio": ratio(lambda r: r.llm_calls, multi),
            "prompt_tokens_ratio": ratio(lambda r: r.prompt_tokens, multi),
            "llm_calls_ratio_all": ratio(lambda r: r.llm_calls, self.scenarios),
            "prompt_tokens_ratio_all": ratio(lambda r: r.prompt_tokens, self.scenarios),
            "concurrency": asdict(self.concurrency) | {"sequential_s": self.concurrency.sequential_s},
            "wall_s": round(self.wall_s, 3),
        }


async def run_loop_benchmark(
    scenarios: Sequence[Scenario] = SCENARIOS,
    *,
    calls: int = 5,
    pause_s: float = 0.5,
    tick: Callable[[str], None] | None = None,
) -> LoopReport:
    """Both engines on every scenario and the concurrency step, against one bench MCP server over HTTP."""
    from planwerk.tools.mcp import open_tools

    started = time.perf_counter()
    with bench_server_http() as url:
        config = {"mcpServers": {"bench": {"url": url, "timeout": 60}}}
        call_tool = session_per_call(url)
        async with open_tools(config) as tools:
            if tools.unavailable:
                raise RuntimeError(f"the bench MCP server is unavailable: {dict(tools.unavailable)}")
            figures = []
            for scenario in scenarios:
                notebook = await run_notebook(scenario, tools, call_tool)
                ours = await run_planwerk(scenario, tools)
                figures.append(ScenarioFigures(scenario.name, len(scenario.steps), scenario.calls, notebook, ours))
                if tick:
                    tick(scenario.name)
            concurrency = await measure_concurrency(tools, call_tool, calls, pause_s)
            if tick:
                tick("concurrency")
    return LoopReport(tuple(figures), concurrency, time.perf_counter() - started)
