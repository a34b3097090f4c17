"""Execution: every call of the checked plan, each as a LangGraph task so finished calls survive a crash."""

from __future__ import annotations

from typing import Any

from langgraph.func import task
from langgraph.runtime import Runtime

from planwerk.core.plan import Plan
from planwerk.execution import CallBody, ExecutionPolicy, execute_plan
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.state import AgentState


def as_durable_task(body: CallBody) -> CallBody:
    """Run each call as a task: its result is checkpointed when it ends and replayed, not re-run, on resume."""
    return task(name="tool_call")(body)


async def execute(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Run the plan's calls (eagerly, concurrently, with timeouts) and keep each result by id."""
    records = await execute_plan(
        Plan.model_validate(state["plan"]),
        deps.tools,
        user=state.get("user"),
        prior_results=state.get("results"),
        policy=ExecutionPolicy(
            timeout_s=runtime.context.tool_timeout_s, max_concurrency=runtime.context.max_concurrency
        ),
        emit=runtime.stream_writer,
        wrap=as_durable_task,
    )
    return {
        "results": {call_id: r["result"] for call_id, r in records.items() if r["status"] == "ok"},
        "calls": list(records.values()),
    }
