"""Engine topology: the resolver plus one ``Send`` per call, against the old single ``execute`` node.

``python -m benchmarks.topology [--repeats 7] [--json]`` runs the same plans through both topologies, with the
in-memory and the SQLite checkpointer, in one run, and prints per case and saver the median and min/max wall time
over the repetitions, the number of checkpoints in the thread history and the ratio new/old; with ``--json`` the
last line of stdout is one JSON object with the same figures. Progress goes to stderr.

- **old** (the baseline, commit b98cfc2): one ``execute`` node runs every call of the plan as a LangGraph
  ``task`` created in plan order and awaited eagerly: a call starts as soon as the calls it references are done,
  whatever its step. :func:`execute_baseline` is a faithful, bench-only copy of that node and of b98cfc2's
  ``execute_plan`` with ``wrap=task``, built from today's pure pieces (``resolve_arguments``, ``call_one``).
- **new** (today's engine, ``planwerk.graph.builder``): the real ``resolve_refs`` node resolves the next step's
  ``$ref``s and sends one ``call_tool`` run per call; the real ``call_tool`` node (with its retry policy) makes the
  call; back to ``resolve_refs`` until the plan is done. Steps are barriers.

Design choice: both graphs are small ``StateGraph``s, ``START → <execution> → verify → END``, fed a pre-set
``plan`` in the input state, rather than the full agent graph with a replay model. The full graph would add the
same prepare, retrieve, plan, check and answer supersteps to both sides (and the planner's example ranker loads an
embedding model), which only dilutes and blurs a difference of a few milliseconds; keeping b98cfc2's whole graph
alive in the bench would also mean copying its old ``plan`` node and state. ``verify`` is a no-op stand-in in both
graphs: ``resolve_refs`` routes there when the plan is done, as ``execute`` had an edge to it, so each topology pays
for exactly the supersteps it adds. Both are driven as :class:`planwerk.agent.Agent` drives the real graph
(``astream`` with the ``custom`` and ``updates`` modes, ``Context()`` defaults, LangGraph's default ``async``
durability), and the input state carries what a real turn carries at this point (the question as a message and
four retrieved chunks), because the SQLite saver serializes the whole checkpoint on every superstep.

Tools are :class:`~planwerk.tools.base.FunctionToolSource` functions that sleep the milliseconds the plan gives
them (0 ms for pure engine overhead). Each repetition uses a fresh thread; one untimed warm-up run per topology
precedes the timed ones, and the two topologies alternate which goes first, so drifting load on a shared machine
hits both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any, Literal

from langchain_core.messages import HumanMessage
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.func import task
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.runtime import Runtime
from rich.console import Console
from rich.progress import Progress
from rich.table import Table
from typing_extensions import TypedDict

from benchmarks.cli import machine
from planwerk.agent import RECURSION_LIMIT
from planwerk.core.calls import CallRecord, call_record, results_of
from planwerk.core.plan import Plan
from planwerk.core.refs import RefError, resolve_arguments
from planwerk.core.scheduling import ReadyCall, call_dependencies
from planwerk.events import ToolCallEvent
from planwerk.execution import ExecutionPolicy, call_one, result_event
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.call_tool import call_retry_policy, call_tool
from planwerk.graph.nodes.common import context_of
from planwerk.graph.nodes.resolve_refs import RESOLVE_ROUTES, resolve_refs
from planwerk.graph.state import AgentState, CallInput
from planwerk.tools.base import FunctionToolSource, ToolSource

Topology = Literal["old", "new"]
SaverKind = Literal["memory", "sqlite"]
CaseKind = Literal["chain", "wide", "uneven", "three_steps"]
TOPOLOGIES: tuple[Topology, ...] = ("old", "new")
SAVERS: tuple[SaverKind, ...] = ("memory", "sqlite")
QUESTION = "Wie wird das Wetter in Barcelona am 1. Dezember 2026, und welche Parks liegen in der Nähe?"


# --- the tools ---------------------------------------------------------------------------------------------------


class Value(TypedDict):
    """What the bench tool returns (a declared output schema, so the plan check can check ``$ref`` paths)."""

    value: int


async def work(ms: float = 0.0, x: int = 0) -> Value:
    """Sleep ``ms`` milliseconds, then return ``x + 1`` (a chain's last value counts its calls)."""
    await asyncio.sleep(ms / 1000)
    return Value(value=x + 1)


def bench_tools() -> FunctionToolSource:
    """The bench's tool source: the one sleeping tool, ``work``."""
    return FunctionToolSource({"work": work}, server="bench")


# --- the cases ---------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """One plan to run through both topologies."""

    kind: CaseKind
    name: str
    plan: dict[str, Any]
    """A checked plan (``tests/bench/test_topology.py`` runs the plan check on every case)."""

    @property
    def steps(self) -> int:
        """Plan steps (each costs the new topology a resolver and a call superstep)."""
        return len(self.plan["steps"])

    @property
    def calls(self) -> int:
        """Tool calls in the plan."""
        return sum(len(step["tools"]) for step in self.plan["steps"])

    def floors_ms(self) -> tuple[float, float]:
        """The tools' own time: along the longest reference path (eager) and summed over each step's slowest call
        (barriers). No engine can be faster than the first; a step-wise one not faster than the second."""
        plan = Plan.model_validate(self.plan)
        own = {call.id: float(call.arguments.get("ms", 0.0)) for _, call in plan.calls()}
        waits_for = call_dependencies(plan)
        finish: dict[str, float] = {}
        for _, call in plan.calls():  # steps are in reference order (checked), so upstream finishes are known
            finish[call.id] = own[call.id] + max((finish[dep] for dep in waits_for[call.id]), default=0.0)
        eager = max(finish.values(), default=0.0)
        barrier = sum(max((own[c["id"]] for c in step["tools"]), default=0.0) for step in self.plan["steps"])
        return eager, barrier


def _call(call_id: str, ms: float, x: int | dict[str, str] = 0) -> dict[str, Any]:
    return {"id": call_id, "name": "work", "arguments": {"ms": ms, "x": x}}


def _ref(call_id: str) -> dict[str, str]:
    return {"$ref": f"{call_id}.value"}


def _chain(ids: Sequence[str], ms: float) -> list[dict[str, Any]]:
    """One step per call, each call taking the previous one's value."""
    steps = []
    for index, call_id in enumerate(ids):
        x: int | dict[str, str] = _ref(ids[index - 1]) if index else 0
        steps.append({"description": f"call {call_id}", "tools": [_call(call_id, ms, x)]})
    return steps


def make_cases(*, chain: int = 8, width: int = 64, time_scale: float = 1.0) -> list[Case]:
    """The four cases; ``time_scale`` multiplies every tool's sleep (the test runs them fast)."""

    def ms(value: float) -> float:
        return round(value * time_scale, 3)

    uneven = [
        {"description": "a and b", "tools": [_call("a", ms(50)), _call("b", ms(500), 100)]},
        {"description": "c after a", "tools": [_call("c", ms(50), _ref("a"))]},
        {"description": "e after c", "tools": [_call("e", ms(50), _ref("c"))]},
    ]
    return [
        Case("chain", f"chain of {chain}, 0 ms", {"steps": _chain([f"c{i}" for i in range(1, chain + 1)], 0.0)}),
        Case(
            "wide",
            f"{width} independent, 0 ms",
            {"steps": [{"description": "all at once", "tools": [_call(f"w{i}", 0.0, i) for i in range(width)]}]},
        ),
        Case("uneven", f"uneven DAG: b {ms(500):g} ms ∥ a→c→e {ms(50):g} ms", {"steps": uneven}),
        Case("three_steps", f"3 steps of {ms(100):g} ms", {"steps": _chain(["s1", "s2", "s3"], ms(100))}),
    ]


# --- the OLD topology (baseline, b98cfc2) -------------------------------------------------------------------------


async def execute_baseline(state: AgentState, runtime: Runtime[Context], *, tools: ToolSource) -> dict[str, Any]:
    """BASELINE, not the engine: b98cfc2's ``execute`` node, every call a task created in plan order, eagerly awaited.

    Each task waits for the calls it references *inside* the task, so it is created at node entry (replay matches
    tasks by their position in call order) and starts its call the moment its inputs exist; steps are ignored.
    Results reach the state when the whole node returns.
    """
    context = context_of(runtime)
    plan = Plan.from_stored(state["plan"])  # validated once, by the check node
    policy = ExecutionPolicy(
        timeout_s=context.tool_timeout_s or ExecutionPolicy.timeout_s, max_concurrency=context.max_concurrency
    )
    user = dict(state.get("user") or {"raw": ""})
    prior = results_of(state.get("calls") or [])
    emit = runtime.stream_writer
    calls = {call.id: (index, call) for index, call in plan.calls()}
    waits_for = call_dependencies(plan, available=prior)
    loop = asyncio.get_running_loop()
    done: dict[str, asyncio.Future[CallRecord]] = {call_id: loop.create_future() for call_id in calls}
    slots = asyncio.Semaphore(policy.max_concurrency)

    async def run_call(call_id: str) -> CallRecord:
        index, call = calls[call_id]
        upstream = [await done[dep] for dep in sorted(waits_for[call_id])]
        if failed := [record["id"] for record in upstream if record["status"] != "ok"]:
            error = f"skipped: depends on failed call(s) {', '.join(failed)}"
            record = call_record(call_id, call.name, step=index, error=error, kind="skipped")
            emit(result_event(record))
            return record
        available = {**prior, **{record["id"]: record["result"] for record in upstream}}
        try:
            args = resolve_arguments(call.arguments, available, user)
        except RefError as error:
            record = call_record(call_id, call.name, step=index, error=str(error), kind="ref")
            emit(result_event(record))
            return record
        emit(ToolCallEvent(event="tool_call", id=call_id, tool=call.name, args=args, attempt=1))
        async with slots:
            record = await call_one(tools, ReadyCall(id=call_id, tool=call.name, step=index, args=args), policy)
        emit(result_event(record))
        return record

    body = task(name="tool_call")(run_call)

    async def drive(call_id: str) -> CallRecord:
        try:
            record = await body(call_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # keep dependants from waiting forever
            record = call_record(call_id, calls[call_id][1].name, error=f"{type(exc).__name__}: {exc}", kind="error")
        done[call_id].set_result(record)
        return record

    # gather starts the drivers in plan order and each creates its task before its first await: plan order.
    records = await asyncio.gather(*(drive(call_id) for call_id in calls))
    return {"calls": records}


def end_of_execution(state: AgentState) -> dict[str, Any]:
    """Stand-in for ``verify``: the node both topologies hand over to when the plan is done."""
    return {}


def build_old_graph(tools: ToolSource, checkpointer: BaseCheckpointSaver) -> CompiledStateGraph:
    """BASELINE: ``START → execute → verify → END``, the old single execution node."""
    builder = StateGraph(AgentState, context_schema=Context)
    builder.add_node("execute", partial(execute_baseline, tools=tools))
    builder.add_node("verify", end_of_execution)
    builder.add_edge(START, "execute")
    builder.add_edge("execute", "verify")
    builder.add_edge("verify", END)
    return builder.compile(checkpointer=checkpointer, name="old: execute node")


def build_new_graph(tools: ToolSource, checkpointer: BaseCheckpointSaver) -> CompiledStateGraph:
    """Today's engine: ``START → resolve_refs ⇄ call_tool (Send per call) → verify → END``, the real nodes wired as
    in :func:`planwerk.graph.builder.build_graph`."""
    deps = Deps(tools=tools)
    retry = call_retry_policy()
    builder = StateGraph(AgentState, context_schema=Context)
    builder.add_node("resolve_refs", partial(resolve_refs, deps=deps), destinations=RESOLVE_ROUTES)
    builder.add_node(
        "call_tool", partial(call_tool, deps=deps, retry=retry), input_schema=CallInput, retry_policy=retry
    )
    builder.add_node("verify", end_of_execution)
    builder.add_edge(START, "resolve_refs")
    builder.add_edge("call_tool", "resolve_refs")
    builder.add_edge("verify", END)
    return builder.compile(checkpointer=checkpointer, name="new: resolve_refs + call_tool")


# --- running -----------------------------------------------------------------------------------------------------


@asynccontextmanager
async def open_saver(kind: SaverKind) -> AsyncIterator[BaseCheckpointSaver]:
    """A fresh checkpointer: in memory, or SQLite on a file in a temporary folder (removed afterwards)."""
    if kind == "memory":
        yield InMemorySaver()
        return
    with tempfile.TemporaryDirectory(prefix="planwerk-topology-") as folder:
        async with AsyncSqliteSaver.from_conn_string(str(Path(folder) / "threads.sqlite")) as saver:
            yield saver


def input_state(plan: dict[str, Any]) -> dict[str, Any]:
    """What the state holds when execution starts in a real turn: the question, four retrieved chunks, the plan."""
    hits = [
        {
            "text": f"Abschnitt {i}: " + "Der Park liegt am Meer und ist im Dezember mild. " * 12,
            "score": 0.5,
            "source": f"doc.txt#{i}",
        }
        for i in range(4)
    ]
    return {
        "messages": [HumanMessage(QUESTION)],  # the question: the nodes derive it from its message
        "user": {"raw": QUESTION},  # the baseline node reads user fields as they were stored in b98cfc2
        "hits": hits,
        "plan": plan,
        "next_step": 0,
        "calls": None,
    }


@dataclass(frozen=True)
class Outcome:
    """One run of one plan through one graph."""

    seconds: float
    results: dict[str, Any]
    calls: list[CallRecord]
    checkpoints: int


async def run_once(graph: CompiledStateGraph, plan: dict[str, Any]) -> Outcome:
    """Run ``plan`` on a fresh thread as the Agent runs a turn; wall time, final results and call log, history."""
    config: dict[str, Any] = {"configurable": {"thread_id": uuid.uuid4().hex}, "recursion_limit": RECURSION_LIMIT}
    started = time.perf_counter()
    async for _ in graph.astream(input_state(plan), config, context=Context(), stream_mode=["custom", "updates"]):
        pass
    seconds = time.perf_counter() - started
    state = await graph.aget_state(config)
    checkpoints = len([snapshot async for snapshot in graph.aget_state_history(config)])
    calls = list(state.values.get("calls") or [])
    return Outcome(seconds, results_of(calls), calls, checkpoints)


def comparable(outcome: Outcome) -> tuple[dict[str, Any], list[tuple[Any, ...]]]:
    """Results and the call log without timings, calls by id (the new topology logs them in completion order)."""
    calls = sorted(
        (c["id"], c["tool"], c["step"], json.dumps(c["args"], sort_keys=True), json.dumps(c["result"]), c["status"])
        for c in outcome.calls
    )
    return outcome.results, calls


@dataclass(frozen=True)
class Timing:
    """Wall times of one topology on one case and saver, in milliseconds."""

    median_ms: float
    min_ms: float
    max_ms: float
    checkpoints: int
    samples_ms: tuple[float, ...]


def timing(outcomes: Sequence[Outcome]) -> Timing:
    """Median, min and max of the outcomes' wall times, and the checkpoints of a run's thread."""
    ms = [o.seconds * 1000 for o in outcomes]
    return Timing(
        round(statistics.median(ms), 2),
        round(min(ms), 2),
        round(max(ms), 2),
        outcomes[-1].checkpoints,
        tuple(round(m, 2) for m in ms),
    )


@dataclass(frozen=True)
class Row:
    """One case on one saver: both topologies side by side."""

    kind: CaseKind
    case: str
    saver: SaverKind
    calls: int
    steps: int
    eager_floor_ms: float
    """The tools' own time along the longest reference path."""
    barrier_floor_ms: float
    """The tools' own time summed over each step's slowest call."""
    old: Timing
    new: Timing
    same_results: bool
    """Both topologies produced the same results and the same call log (ids, steps, arguments, results)."""

    @property
    def ratio(self) -> float:
        """Median new / median old."""
        return round(self.new.median_ms / self.old.median_ms, 2) if self.old.median_ms else float("inf")


@dataclass(frozen=True)
class Report:
    """Everything one run of the benchmark measured."""

    repeats: int
    chain: int
    width: int
    time_scale: float
    rows: list[Row] = field(default_factory=list)
    wall_s: float = 0.0

    def per_step(self) -> dict[str, dict[str, float]]:
        """From the chain case, per saver: what one plan step costs, and what one extra superstep costs.

        ``new_ms_per_step``: the new topology's median over the chain's steps (tools take 0 ms, so it is all
        engine); ``extra_ms_per_step``: (new − old) per step; ``extra_ms_per_superstep``: (new − old) per extra
        checkpoint, i.e. the marginal cost of one superstep (resolver or call level) with its checkpoint.
        """
        out: dict[str, dict[str, float]] = {}
        for row in (row for row in self.rows if row.kind == "chain"):
            extra = row.new.median_ms - row.old.median_ms
            supersteps = max(row.new.checkpoints - row.old.checkpoints, 1)
            out[row.saver] = {
                "steps": row.steps,
                "new_ms_per_step": round(row.new.median_ms / row.steps, 2),
                "old_ms_per_step": round(row.old.median_ms / row.steps, 2),
                "extra_ms_per_step": round(extra / row.steps, 2),
                "extra_supersteps": row.new.checkpoints - row.old.checkpoints,
                "extra_ms_per_superstep": round(extra / supersteps, 2),
            }
        return out

    def to_json(self) -> dict[str, Any]:
        """The report as one JSON-able object."""
        rows = []
        for row in self.rows:
            item = asdict(row)
            item["ratio_new_old"] = row.ratio
            rows.append(item)
        return {
            "benchmark": "topology",
            "repeats": self.repeats,
            "sizes": {"chain": self.chain, "width": self.width, "time_scale": self.time_scale},
            "rows": rows,
            "per_step": self.per_step(),
            "all_same_results": all(row.same_results for row in self.rows),
            "wall_s": round(self.wall_s, 2),
            "machine": machine(),
        }


async def measure_case(case: Case, saver: SaverKind, repeats: int, tick: Callable[[], None] = lambda: None) -> Row:
    """Run ``case`` ``repeats`` times through both topologies on fresh savers of kind ``saver``."""
    tools = bench_tools()
    outcomes: dict[Topology, list[Outcome]] = {"old": [], "new": []}
    async with open_saver(saver) as old_saver, open_saver(saver) as new_saver:
        graphs = {"old": build_old_graph(tools, old_saver), "new": build_new_graph(tools, new_saver)}
        warm = {topology: await run_once(graphs[topology], case.plan) for topology in TOPOLOGIES}
        for rep in range(repeats):
            # Alternate who goes first: load that drifts during the run then hits both topologies alike.
            for topology in TOPOLOGIES if rep % 2 == 0 else TOPOLOGIES[::-1]:
                outcomes[topology].append(await run_once(graphs[topology], case.plan))
                tick()
    runs = [*outcomes["old"], *outcomes["new"], warm["old"], warm["new"]]
    reference = comparable(warm["old"])
    eager, barrier = case.floors_ms()
    return Row(
        kind=case.kind,
        case=case.name,
        saver=saver,
        calls=case.calls,
        steps=case.steps,
        eager_floor_ms=eager,
        barrier_floor_ms=barrier,
        old=timing(outcomes["old"]),
        new=timing(outcomes["new"]),
        same_results=all(comparable(run) == reference for run in runs),
    )


async def run_benchmark(
    *,
    repeats: int = 7,
    chain: int = 8,
    width: int = 64,
    time_scale: float = 1.0,
    progress: Progress | None = None,
) -> Report:
    """Every case on every saver through both topologies; the rows in saver order, cases in :func:`make_cases`
    order."""
    cases = make_cases(chain=chain, width=width, time_scale=time_scale)
    rows: list[Row] = []
    started = time.perf_counter()
    for saver in SAVERS:
        for case in cases:
            tick: Callable[[], None] = lambda: None  # noqa: E731
            if progress is not None:
                task_id = progress.add_task(f"{saver}: {case.name}", total=repeats * len(TOPOLOGIES))
                tick = partial(progress.advance, task_id)
            rows.append(await measure_case(case, saver, repeats, tick))
    return Report(repeats, chain, width, time_scale, rows, time.perf_counter() - started)


# --- output ------------------------------------------------------------------------------------------------------


def _spread(t: Timing) -> str:
    return f"{t.median_ms:.1f} ({t.min_ms:.1f}–{t.max_ms:.1f})"


def table(report: Report) -> Table:
    """The rows as a rich table: median (min–max) ms and checkpoints per topology, the ratio, the tools' floors."""
    out = Table(title=f"Engine topology, median (min–max) ms of {report.repeats} runs; ckpts = thread checkpoints")
    for column in ("case", "saver", "old: execute node", "ckpts", "new: resolver + Send", "ckpts", "new/old",
                   "floor eager / steps", "same results"):  # fmt: skip
        out.add_column(column, justify="left" if column in ("case", "saver") else "right")
    for row in report.rows:
        out.add_row(
            row.case,
            row.saver,
            _spread(row.old),
            str(row.old.checkpoints),
            _spread(row.new),
            str(row.new.checkpoints),
            f"{row.ratio:.2f}",
            f"{row.eager_floor_ms:g} / {row.barrier_floor_ms:g}",
            "yes" if row.same_results else "NO",
        )
    return out


def per_step_table(report: Report) -> Table:
    """The chain case's per-step and per-superstep figures."""
    out = Table(title="Per step, from the chain (0-ms tools): ms")
    for column in ("saver", "old per step", "new per step", "extra per step", "extra supersteps",
                   "extra per superstep"):  # fmt: skip
        out.add_column(column, justify="left" if column == "saver" else "right")
    for saver, figures in report.per_step().items():
        out.add_row(
            saver,
            f"{figures['old_ms_per_step']:.2f}",
            f"{figures['new_ms_per_step']:.2f}",
            f"{figures['extra_ms_per_step']:.2f}",
            str(figures["extra_supersteps"]),
            f"{figures['extra_ms_per_superstep']:.2f}",
        )
    return out


def main(argv: list[str] | None = None) -> None:
    """Command line entry point."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7, help="timed runs per case, saver and topology (default 7)")
    parser.add_argument("--chain", type=int, default=8, help="calls in the dependent chain (default 8)")
    parser.add_argument("--width", type=int, default=64, help="calls in the independent step (default 64, max 64)")
    parser.add_argument(
        "--time-scale", type=float, default=1.0, help="multiplies every tool's sleep (default 1; tests use less)"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object last")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.chain < 1 or not 1 <= args.width <= 64 or args.time_scale < 0:
        parser.error("--repeats and --chain must be at least 1, --width 1 to 64, --time-scale not negative")
    # Progress goes to stderr; the tables and the JSON line to stdout, wide enough when piped.
    console = Console(width=None if sys.stdout.isatty() else 200)
    with Progress(console=Console(stderr=True), transient=True) as progress:
        report = asyncio.run(
            run_benchmark(
                repeats=args.repeats,
                chain=args.chain,
                width=args.width,
                time_scale=args.time_scale,
                progress=progress,
            )
        )
    console.print(table(report))
    console.print(per_step_table(report))
    if args.json:
        print(json.dumps(report.to_json()))


if __name__ == "__main__":
    main()
