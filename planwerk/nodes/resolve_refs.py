"""The ``$ref`` resolver: resolves the next step's references and dispatches its calls, one ``Send`` per call.

Steps are barriers: this node runs again only when every call it dispatched has finished (they all end in the
same superstep), so step k starts after the steps before it. Calls that cannot run (a referenced call failed, a
reference does not resolve) are recorded here; when the plan is done the run goes on to ``verify``.
"""

from __future__ import annotations

from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from planwerk.core.calls import CallRecord
from planwerk.core.plan import Plan
from planwerk.core.refs import ArgumentLimits
from planwerk.core.scheduling import ReadyCall, resolve_step
from planwerk.events import ApprovalRequiredEvent, StepEvent
from planwerk.execution import result_event
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.state import AgentState, CallInput, CallTask
from planwerk.nodes.common import context_of, profile_of

ResolveRoute = Literal["call_tool", "verify"]
RESOLVE_ROUTES: tuple[ResolveRoute, ...] = ("call_tool", "verify")


def needs_approval(call: ReadyCall, deps: Deps, context: Context) -> bool:
    """Whether a person must approve ``call``: its tool is marked destructive or the profile lists it."""
    if not context.approve_destructive:
        return False
    spec = deps.tools.specs.get(call.tool)
    return bool(spec is not None and spec.destructive) or call.tool in profile_of(context).approve


async def resolve_refs(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> Command[ResolveRoute]:
    """Dispatch the next step with runnable calls to ``call_tool``; ``verify`` when the plan is done."""
    plan = Plan.model_validate(state["plan"])
    records: list[CallRecord] = list(state.get("calls", []))
    unresolved: list[CallRecord] = []
    index = state.get("next_step", 0)
    limits = ArgumentLimits(max_bytes=context_of(runtime).max_argument_bytes)
    while index < len(plan.steps):
        ready, failed = resolve_step(
            plan,
            index,
            records=records + unresolved,
            results=state.get("results", {}),
            user=state.get("user", {}),
            limits=limits,
        )
        for record in failed:
            runtime.stream_writer(result_event(record))
        unresolved.extend(failed)
        index += 1
        if ready:
            runtime.stream_writer(StepEvent(event="step", index=index - 1, calls=[call.id for call in ready]))
            sends = []
            for call in ready:
                approval = needs_approval(call, deps, context_of(runtime))
                if approval:
                    runtime.stream_writer(
                        ApprovalRequiredEvent(event="approval_required", id=call.id, tool=call.tool, args=call.args)
                    )
                task = CallTask(id=call.id, tool=call.tool, step=call.step, args=call.args, approval=approval)
                sends.append(Send("call_tool", CallInput(call=task)))
            update: dict[str, Any] = {"calls": unresolved, "next_step": index}
            return Command(update=update, goto=sends)
    return Command(update={"calls": unresolved, "next_step": index}, goto="verify")
