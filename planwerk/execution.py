"""Running a checked plan: every call starts as soon as the calls it references are done.

Independent calls run concurrently (bounded), every call has a timeout, and a failure is recorded, never raised.
The graph's execute node passes ``wrap`` to run each call as a LangGraph task, so a finished call is checkpointed
the moment it ends and a resumed thread does not call it again.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from typing_extensions import TypedDict

from planwerk.core.plan import Plan
from planwerk.core.refs import RefError, resolve_arguments
from planwerk.core.scheduling import call_dependencies
from planwerk.tools.base import ToolError, ToolSource

CallStatus = Literal["ok", "error", "skipped"]


class CallRecord(TypedDict):
    """One entry of the call log."""

    id: str
    tool: str
    args: dict[str, Any] | None
    """The arguments as resolved (None when resolution failed)."""
    result: Any
    error: str | None
    status: CallStatus
    duration_s: float


@dataclass(frozen=True)
class ExecutionPolicy:
    """Limits for running a plan."""

    timeout_s: float = 30.0
    """Per call, measured around the tool source's own timeouts, so nothing can hang."""
    max_concurrency: int = 8
    """Calls in flight at once."""
    max_result_chars: int = 200_000
    """A larger result is kept truncated with a note (the state and the prompt must stay bounded)."""


EventSink = Callable[[dict[str, Any]], None]
CallBody = Callable[[str], Awaitable[CallRecord]]


async def execute_plan(
    plan: Plan | Mapping[str, Any],
    tools: ToolSource,
    *,
    user: Mapping[str, Any] | None = None,
    prior_results: Mapping[str, Any] | None = None,
    policy: ExecutionPolicy | None = None,
    timeout_s: float | None = None,
    emit: EventSink | None = None,
    wrap: Callable[[CallBody], CallBody] | None = None,
) -> dict[str, CallRecord]:
    """Run every call of ``plan`` and return the records by call id, in plan order.

    ``prior_results`` are results of an earlier plan for the same question that the new plan may reference.
    ``wrap`` turns the per-call coroutine function into another one with the same signature (the graph uses a
    LangGraph task); it is called once per call, in plan order, so replays line up.
    """
    plan = plan if isinstance(plan, Plan) else Plan.model_validate(plan)
    policy = policy or ExecutionPolicy()
    if timeout_s is not None:
        policy = ExecutionPolicy(timeout_s, policy.max_concurrency, policy.max_result_chars)
    user = dict(user or {"raw": ""})
    prior = dict(prior_results or {})
    emit = emit or (lambda event: None)
    calls = {call.id: call for _, call in plan.calls()}
    waits_for = call_dependencies(plan, available=prior)
    loop = asyncio.get_running_loop()
    done: dict[str, asyncio.Future[CallRecord]] = {call_id: loop.create_future() for call_id in calls}
    slots = asyncio.Semaphore(policy.max_concurrency)

    async def run_call(call_id: str) -> CallRecord:
        call = calls[call_id]
        upstream = [await done[dep] for dep in sorted(waits_for[call_id])]
        failed = [record["id"] for record in upstream if record["status"] != "ok"]
        if failed:
            return _record(
                call_id,
                call.name,
                None,
                error=f"skipped: depends on failed call(s) {', '.join(failed)}",
                status="skipped",
            )
        available = {**prior, **{record["id"]: record["result"] for record in upstream}}
        try:
            args = resolve_arguments(call.arguments, available, user)
        except RefError as error:
            emit({"event": "tool_error", "id": call_id, "tool": call.name, "error": str(error)})
            return _record(call_id, call.name, None, error=str(error))
        emit({"event": "tool_call", "id": call_id, "tool": call.name, "args": args})
        started = time.perf_counter()
        async with slots:
            try:
                async with asyncio.timeout(policy.timeout_s):
                    result = await tools.call(call.name, args)
            except TimeoutError:
                error = f"{call.name} timed out after {policy.timeout_s:g} s"
            except ToolError as exc:
                error = str(exc)
            except Exception as exc:  # a misbehaving tool source must not take the run down
                error = f"{call.name} failed: {type(exc).__name__}: {exc}"
            else:
                result = clip_result(result, policy.max_result_chars)
                emit({"event": "tool_result", "id": call_id, "tool": call.name, "result": result})
                return _record(call_id, call.name, args, result=result, duration=time.perf_counter() - started)
        emit({"event": "tool_error", "id": call_id, "tool": call.name, "error": error})
        return _record(call_id, call.name, args, error=error, duration=time.perf_counter() - started)

    body = wrap(run_call) if wrap else run_call

    async def drive(call_id: str) -> CallRecord:
        try:
            record = await body(call_id)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # keep dependants from waiting forever
            record = _record(call_id, calls[call_id].name, None, error=f"{type(exc).__name__}: {exc}")
        done[call_id].set_result(record)
        return record

    records = await asyncio.gather(*(drive(call_id) for call_id in calls))
    return {record["id"]: record for record in records}


def _record(
    call_id: str,
    tool: str,
    args: dict[str, Any] | None,
    *,
    result: Any = None,
    error: str | None = None,
    status: CallStatus | None = None,
    duration: float = 0.0,
) -> CallRecord:
    return CallRecord(
        id=call_id,
        tool=tool,
        args=args,
        result=result,
        error=error,
        status=status or ("error" if error else "ok"),
        duration_s=round(duration, 4),
    )


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
