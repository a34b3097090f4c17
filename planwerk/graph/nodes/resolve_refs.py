"""The ``$ref`` resolver: resolves the next step's references and dispatches its calls, one ``Send`` per call.

Steps are barriers: this node runs again only when every call it dispatched has finished (they all end in the
same superstep), so step k starts after the steps before it. Calls that cannot run (a referenced call failed, a
reference does not resolve) are recorded here; when the plan is done the run goes on to ``verify``.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from langgraph.runtime import Runtime
from langgraph.types import Command, Send

from planwerk.core.calls import CallRecord, results_of
from planwerk.core.extract import EXTRACT_TOOL
from planwerk.core.plan import Plan
from planwerk.core.refs import ArgumentLimits, Ref, dependencies, iter_refs, user_fields
from planwerk.core.scheduling import ReadyCall, resolve_step
from planwerk.events import ApprovalRequiredEvent, StepEvent
from planwerk.execution import result_event
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.chat import tool_call_id, tool_message, with_resolved_args
from planwerk.graph.nodes.common import context_of, person_texts, question_of
from planwerk.graph.run_context import profile_of
from planwerk.graph.state import AgentState, CallInput, CallTask
from planwerk.prompts.texts import PromptTexts

ResolveRoute = Literal["call_tool", "verify"]
RESOLVE_ROUTES: tuple[ResolveRoute, ...] = ("call_tool", "verify")


def needs_approval(
    call: ReadyCall, deps: Deps, context: Context, origins: list[str] | None = None, *, unanchored: bool = False
) -> bool:
    """Whether a person must approve ``call``: its plan is anchored in nothing the person said (``unanchored``, see
    :func:`planwerk.graph.nodes.check.still_unanchored`; asked whatever ``Context.approve_destructive`` says, as it
    is about where the values came from), or, where approvals for what a tool does are on, its tool is marked
    destructive or the profile lists it, or it acts and takes a value from an ``extract`` of untrusted text
    (``origins``, unless the profile relaxes that)."""
    if unanchored:
        return True
    if not context.approve_destructive:
        return False
    spec = deps.tools.specs.get(call.tool)
    if origins and spec is not None and spec.acts and profile_of(context).approve_extracted:
        return True
    return bool(spec is not None and spec.destructive) or call.tool in profile_of(context).approve


def extracted_origins(plan: Plan, call: ReadyCall, texts: PromptTexts) -> list[str]:
    """Each argument of ``call`` whose value comes from an ``extract`` call of ``plan``, with its resolved value and
    where the extract read it (the call whose result was the text)."""
    planned = {item.id: item for _, item in plan.calls()}
    own = planned.get(call.id)
    if own is None:
        return []
    origins = []
    for argument, value in own.arguments.items():
        for ref in iter_refs(value):
            if not isinstance(ref, Ref) or ref.is_user or ref.root not in planned:
                continue
            source = planned[ref.root]
            if source.name != EXTRACT_TOOL:
                continue
            read = sorted(dependencies({"text": source.arguments.get("text")}))
            where = ", ".join(f"{root} ({planned[root].name})" if root in planned else root for root in read)
            if not read and any(r.is_user for r in iter_refs(source.arguments.get("text")) if isinstance(r, Ref)):
                where = texts.person_answer
            origins.append(
                texts.extracted_origin.format(
                    argument=argument,
                    value=json.dumps(call.args.get(argument), ensure_ascii=False, default=str),
                    extract=ref.root,
                    source=where or "?",
                )
            )
    return origins


def unanchored_origins(plan: Plan, call: ReadyCall, texts: PromptTexts) -> list[str]:
    """Each argument of ``call`` that its plan gives as a literal value, named as chosen by the model (a plan
    anchored in nothing the person said)."""
    own = next((item for _, item in plan.calls() if item.id == call.id), None)
    if own is None:
        return []
    return [
        texts.unanchored_origin.format(
            argument=argument, value=json.dumps(call.args.get(argument), ensure_ascii=False, default=str)
        )
        for argument, value in own.arguments.items()
        if next(iter_refs(value), None) is None
    ]


async def resolve_refs(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> Command[ResolveRoute]:
    """Dispatch the next step with runnable calls to ``call_tool``; ``verify`` when the plan is done."""
    plan = Plan.from_stored(state["plan"])
    records: list[CallRecord] = list(state.get("calls", []))
    unresolved: list[CallRecord] = []
    index = state.get("next_step", 0)
    limits = ArgumentLimits(max_bytes=context_of(runtime).max_argument_bytes)
    message_id = state.get("plan_message")
    messages: list[Any] = []  # the chat's view: a failed call's tool message, the plan with resolved arguments
    while index < len(plan.steps):
        ready, failed = resolve_step(
            plan,
            index,
            records=records + unresolved,
            results=results_of(state.get("calls", [])),
            user=user_fields(state.get("user", {}), question_of(state)),
            limits=limits,
        )
        for record in failed:
            runtime.stream_writer(result_event(record))
        unresolved.extend(failed)
        if message_id is not None:
            messages += [tool_message(record, tool_call_id(message_id, record["id"])) for record in failed]
        index += 1
        if ready:
            runtime.stream_writer(StepEvent(event="step", index=index - 1, calls=[call.id for call in ready]))
            sends = []
            unanchored = bool(state.get("unanchored"))  # the plan's, so the same for each of its calls
            for call in ready:
                asked = person_texts(question_of(state), profile_of(context_of(runtime)))  # a person reads it
                origins = extracted_origins(plan, call, asked)
                if unanchored:
                    origins += unanchored_origins(plan, call, asked)
                approval = needs_approval(call, deps, context_of(runtime), origins, unanchored=unanchored)
                if approval:
                    runtime.stream_writer(
                        ApprovalRequiredEvent(event="approval_required", id=call.id, tool=call.tool, args=call.args)
                    )
                task = CallTask(id=call.id, tool=call.tool, step=call.step, args=call.args, approval=approval)
                if approval and origins:
                    task["origins"] = origins
                if approval:
                    task["language"] = asked.language
                if message_id is not None:
                    task["tool_call_id"] = tool_call_id(message_id, call.id)
                sends.append(Send("call_tool", CallInput(call=task)))
            resolved = with_resolved_args(state.get("messages", []), message_id, {c.id: c.args for c in ready})
            update: dict[str, Any] = {"calls": unresolved, "next_step": index}
            if resolved is not None or messages:
                update["messages"] = [*messages, *([resolved] if resolved is not None else [])]
            return Command(update=update, goto=sends)
    update = {"calls": unresolved, "next_step": index}
    return Command(update={**update, "messages": messages} if messages else update, goto="verify")
