"""Running tool calls: one call with its timeout and clipping (shared by the graph's per-call node), and
:func:`execute_plan`, a plain driver that runs a checked plan step by step without a graph.

The graph runs each call as its own node run (``call_tool``, dispatched by the ``resolve_refs`` node with
``Send``), so LangGraph checkpoints every finished call; :func:`execute_plan` is for benchmarks and for library
users who want the engine's semantics (steps as barriers, concurrent calls within a step, failures recorded,
never raised) in one ``await``.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from planwerk.core.calls import CallRecord, call_record
from planwerk.core.plan import Plan
from planwerk.core.sanitize import sanitize_value
from planwerk.core.scheduling import ReadyCall, resolve_step
from planwerk.core.tools import ToolError, ToolSpec
from planwerk.events import Event, ToolCallEvent, ToolErrorEvent, ToolResultEvent
from planwerk.tools.base import CALL_DEADLINE, ToolSource


@dataclass(frozen=True)
class ExecutionPolicy:
    """Limits for running calls."""

    timeout_s: float | None = None
    """Per call, measured around the tool source's own timeouts, so nothing can hang; ``None``: each tool's own
    (an MCP server's configured ``timeout``), else :data:`DEFAULT_TOOL_TIMEOUT_S`."""
    max_concurrency: int = 8
    """Calls in flight at once."""
    max_result_chars: int = 200_000
    """A larger result is kept truncated with a note (the state and the prompt must stay bounded)."""


EventSink = Callable[[Event], None]
DEFAULT_TOOL_TIMEOUT_S = 30.0
"""A call's timeout when neither the run nor the tool names one."""


def call_timeout(override_s: float | None, spec: ToolSpec | None) -> float:
    """A call's timeout in seconds: the run's override (``--tool-timeout``, ``Context.tool_timeout_s``), else the
    tool's own (an MCP server's configured ``timeout``), else :data:`DEFAULT_TOOL_TIMEOUT_S`."""
    if override_s is not None:
        return override_s
    if spec is not None and spec.timeout_s is not None:
        return spec.timeout_s
    return DEFAULT_TOOL_TIMEOUT_S


async def call_one(tools: ToolSource, call: ReadyCall, policy: ExecutionPolicy) -> CallRecord:
    """Make one call with its timeout; the record says what came back or why it failed (never raises)."""
    started = time.perf_counter()

    def failed(error: str, kind: Any) -> CallRecord:
        return call_record(
            call.id,
            call.tool,
            step=call.step,
            args=call.args,
            error=error,
            kind=kind,
            duration_s=time.perf_counter() - started,
        )

    timeout_s = call_timeout(policy.timeout_s, tools.specs.get(call.tool))
    deadline = CALL_DEADLINE.set(asyncio.get_running_loop().time() + timeout_s)
    try:
        async with asyncio.timeout(timeout_s):
            result = await tools.call(call.tool, call.args)
    except TimeoutError:
        return failed(f"{call.tool} timed out after {timeout_s:g} s", "timeout")
    except ToolError as exc:
        return failed(str(exc), exc.kind)
    except Exception as exc:  # a misbehaving tool source must not take the run down
        return failed(f"{call.tool} failed: {type(exc).__name__}: {exc}", "error")
    finally:
        CALL_DEADLINE.reset(deadline)
    return call_record(
        call.id,
        call.tool,
        step=call.step,
        args=call.args,
        # Any tool source, not only MCP: capped depth and no lone surrogates, so the record always checkpoints.
        result=clip_result(sanitize_value(result), policy.max_result_chars),
        duration_s=time.perf_counter() - started,
    )


def result_event(record: CallRecord, *, retrying: bool = False) -> ToolResultEvent | ToolErrorEvent:
    """The ``tool_result`` or ``tool_error`` event of a finished call."""
    if record["status"] == "ok":
        return ToolResultEvent(
            event="tool_result",
            id=record["id"],
            tool=record["tool"],
            result=record["result"],
            duration_s=record["duration_s"],
        )
    return ToolErrorEvent(
        event="tool_error",
        id=record["id"],
        tool=record["tool"],
        error=record["error"] or "",
        kind=record["kind"] or "error",
        retrying=retrying,
    )


async def execute_plan(
    plan: Plan | Mapping[str, Any],
    tools: ToolSource,
    *,
    user: Mapping[str, Any] | None = None,
    prior_results: Mapping[str, Any] | None = None,
    policy: ExecutionPolicy | None = None,
    emit: EventSink | None = None,
) -> dict[str, CallRecord]:
    """Run every call of a checked ``plan``, step by step, and return the records by call id, in plan order.

    Step k starts when every call of the steps before it has finished or failed; the calls of a step run
    concurrently (at most ``policy.max_concurrency`` at once). ``prior_results`` are results of an earlier plan
    for the same question that the plan may reference.
    """
    plan = plan if isinstance(plan, Plan) else Plan.model_validate(plan)
    policy = policy or ExecutionPolicy()
    user = dict(user or {"raw": ""})
    results = dict(prior_results or {})
    sink: EventSink = emit or (lambda event: None)
    slots = asyncio.Semaphore(policy.max_concurrency)
    records: list[CallRecord] = []

    async def run(call: ReadyCall) -> CallRecord:
        async with slots:
            sink(ToolCallEvent(event="tool_call", id=call.id, tool=call.tool, args=call.args, attempt=1))
            record = await call_one(tools, call, policy)
        sink(result_event(record))
        return record

    for index in range(len(plan.steps)):
        ready, unresolved = resolve_step(plan, index, records=records, results=results, user=user)
        for record in unresolved:
            sink(result_event(record))
        records.extend(unresolved)
        for record in await asyncio.gather(*(run(call) for call in ready)):
            records.append(record)
            if record["status"] == "ok":
                results[record["id"]] = record["result"]
    by_id = {record["id"]: record for record in records}
    return {call.id: by_id[call.id] for _, call in plan.calls() if call.id in by_id}


def clip_result(result: Any, max_chars: int) -> Any:
    """``result`` unchanged if its JSON fits in ``max_chars``, else a truncated preview with a note."""
    try:
        text = json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = str(result)
    if len(text) <= max_chars:
        return result
    return {
        "truncated": True,
        "note": f"result of {len(text)} characters truncated to {max_chars}",
        "preview": text[:max_chars],
    }
