"""The per-call node: one node run per tool call, its input the call with its references resolved.

Each run is its own LangGraph task, so a finished call is checkpointed when it ends and a resumed thread does not
call it again. Before a call to a destructive tool (or one the profile lists) it interrupts for a person's
approval; a transient failure (timeout, server unavailable) is raised for the node's ``RetryPolicy`` until the
run's ``tool_retry_attempts`` are used, then recorded like any other failure.
"""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import HumanMessage, SystemMessage
from langgraph.constants import TAG_NOSTREAM
from langgraph.runtime import Runtime
from langgraph.types import RetryPolicy, interrupt

from planwerk.core.approval import ApprovalDecision, ApprovalError, parse_approval
from planwerk.core.calls import TRANSIENT_KINDS, CallRecord, call_record
from planwerk.core.extract import EXTRACT_TOOL, clip_text, field_types, json_schema, parse_extraction
from planwerk.core.hitl import hitl_request
from planwerk.core.scheduling import ReadyCall
from planwerk.events import ToolCallEvent, ToolProgressEvent
from planwerk.execution import ExecutionPolicy, call_one, call_timeout, result_event
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.nodes.chat import tool_message
from planwerk.graph.nodes.common import context_of
from planwerk.graph.run_context import model_spec_of, profile_of
from planwerk.graph.state import CallInput, CallTask
from planwerk.models.base import SupportsPlanSchema
from planwerk.prompts.render import render_result
from planwerk.prompts.texts import GERMAN, TEXTS, PromptTexts, texts_for
from planwerk.tools.call_options import ToolProgress, call_options
from planwerk.tools.client_features import answer_by_interrupt, call_with_client_features, channel_for_call, run_key

EXTRACT_TAGS = ("planwerk:extract", TAG_NOSTREAM)
"""The extracting model's reply is data for later calls, not chat: ``nostream`` keeps it out of message streams."""
MAX_APPROVAL_ASKS = 3
"""An approval answer that is none of the accepted forms is asked again (naming the problem) this many times."""


class TransientCallError(Exception):
    """A call failed in a way that may pass (timeout, unavailable): raised so the node's retry policy retries."""

    def __init__(self, record: CallRecord):
        super().__init__(record["error"])
        self.record = record


def call_retry_policy(max_attempts: int = 3, initial_interval: float = 0.5) -> RetryPolicy:
    """The per-call node's retry policy: transient failures only; ``Context.tool_retry_attempts`` caps it per run."""
    return RetryPolicy(
        max_attempts=max_attempts,
        initial_interval=initial_interval,
        retry_on=TransientCallError,
    )


def ask_approval(task: CallTask, texts: PromptTexts = GERMAN, *, max_args_bytes: int | None = None) -> ApprovalDecision:
    """Interrupt with the call and its resolved arguments until a person gives an answer that parses; values taken
    from an ``extract`` of untrusted text are named with where they came from (``origins``)."""
    question = texts.approval_question.format(tool=task["tool"], args=render_result(task["args"], texts))
    origins = task.get("origins") or []
    if origins:
        question = "\n".join([*origins, question])
    request: dict[str, Any] = {
        "kind": "approval",
        "question": question,
        "id": task["id"],
        "tool": task["tool"],
        "args": task["args"],
        # What a chat UI draws: the call, with approve / edit / reject (planwerk.core.hitl).
        **hitl_request(task["tool"], task["args"], question, ("approve", "edit", "reject")),
    }
    if origins:
        request["origins"] = list(origins)
    for _ in range(MAX_APPROVAL_ASKS):
        try:
            return parse_approval(interrupt(request), max_args_bytes=max_args_bytes)
        except ApprovalError as error:
            request = {**request, "error": str(error)}
    return ApprovalDecision("reject", reason="no valid approval answer")


async def call_tool(inputs: CallInput, runtime: Runtime[Context], *, deps: Deps, retry: RetryPolicy) -> dict[str, Any]:
    """Make the call (after approval when needed) and record it; the result joins ``results``."""
    context = context_of(runtime)
    texts = texts_for(profile_of(context))
    task = inputs["call"]
    args = task["args"]
    if task["approval"]:
        # The request is read by a person: in the question's language (the resolver says which).
        asked = texts_for(task["language"]) if task.get("language") in TEXTS else texts  # type: ignore[arg-type]
        decision = ask_approval(task, asked, max_args_bytes=context.max_argument_bytes)
        if decision.action == "reject":
            reason = f": {decision.reason}" if decision.reason else ""
            record = call_record(
                task["id"],
                task["tool"],
                step=task["step"],
                args=args,
                error=texts.rejected_call.format(tool=task["tool"], reason=reason),
                kind="rejected",
            )
            runtime.stream_writer(result_event(record))
            return recorded(task, record)
        if decision.action == "edit":
            args = decision.args
    attempt = runtime.execution_info.node_attempt if runtime.execution_info is not None else 1
    runtime.stream_writer(
        ToolCallEvent(event="tool_call", id=task["id"], tool=task["tool"], args=args, attempt=attempt)
    )
    if task["tool"] == EXTRACT_TOOL and EXTRACT_TOOL not in deps.tools.specs:
        record = await extract_values(task, args, deps, context, texts)
        runtime.stream_writer(result_event(record))
        return recorded(task, record)
    call = ReadyCall(id=task["id"], tool=task["tool"], step=task["step"], args=args)
    timeout = call_timeout(context.tool_timeout_s, deps.tools.specs.get(task["tool"]))
    policy = ExecutionPolicy(timeout_s=timeout, max_concurrency=context.max_concurrency)

    def progress(update: ToolProgress) -> None:
        # Called by the MCP session's reader task while the call runs: the event goes out at once.
        runtime.stream_writer(
            ToolProgressEvent(
                event="tool_progress",
                id=task["id"],
                tool=task["tool"],
                progress=update.progress,
                total=update.total,
                message=update.message,
            )
        )

    # The server may ask during the call: an elicitation interrupts the thread and the call is made again on
    # resume; sampling is answered by the run's model (planwerk.tools.client_features, docs/capabilities.md).
    channel = channel_for_call(
        task["id"],
        task["tool"],
        model=lambda: deps.model_for(model_spec_of(context)),
        emit=runtime.stream_writer,
        run_key=run_key(runtime.execution_info),
    )
    # The override reaches the tool source too (planwerk.tools.call_options), so a server's own shorter timeout
    # does not cut the call; progress notifications become tool_progress events.
    async with deps.call_slots(context.max_concurrency):
        with call_options(
            timeout_s=context.tool_timeout_s,
            on_progress=progress,
            enforce_roots=profile_of(context).enforce_roots,
        ):
            record = await call_with_client_features(
                lambda: call_one(deps.tools, call, policy),
                channel,
                lambda request: answer_by_interrupt(request, task["id"], task["tool"], interrupt),
            )
    retrying = record["kind"] in TRANSIENT_KINDS and attempt < min(context.tool_retry_attempts, retry.max_attempts)
    runtime.stream_writer(result_event(record, retrying=retrying))
    if retrying:
        raise TransientCallError(record)
    return recorded(task, record)


def recorded(task: CallTask, record: CallRecord) -> dict[str, Any]:
    """The node's update for a finished call: its record (the result is kept there alone) and its tool message for
    the chat."""
    update: dict[str, Any] = {"calls": [record]}
    if "tool_call_id" in task:
        update["messages"] = [tool_message(record, task["tool_call_id"])]
    return update


async def extract_values(
    task: CallTask, args: dict[str, Any], deps: Deps, context: Context, texts: PromptTexts
) -> CallRecord:
    """The built-in ``extract`` step (:mod:`planwerk.core.extract`): the run's model, with no tools and under the
    fields' JSON schema where it decodes under one, reads the text and returns the typed values. The text reaches
    only this model call, never the planner. A bad schema or a reply without JSON is a failed call."""
    started = time.monotonic()
    try:
        fields = field_types(args.get("schema"))
    except ValueError as error:
        return call_record(task["id"], task["tool"], step=task["step"], args=args, error=str(error),
                           kind="invalid_arguments")  # fmt: skip
    model = await deps.model_for(model_spec_of(context))
    if context.constrained_decoding and isinstance(model, SupportsPlanSchema):
        model = model.with_plan_schema(json_schema(fields))
    listed = ", ".join(f"{name} ({kind})" for name, kind in fields.items())
    read = clip_text(args.get("text", ""))
    messages = [SystemMessage(texts.extract_instructions.format(fields=listed)), HumanMessage(read)]
    reply = await model.ainvoke(messages, config={"tags": list(EXTRACT_TAGS)})
    try:
        values = parse_extraction(str(reply.content), fields, read)
    except ValueError as error:
        return call_record(task["id"], task["tool"], step=task["step"], args=args, error=str(error), kind="error",
                           duration_s=time.monotonic() - started)  # fmt: skip
    # The record keeps the schema, not the text: the call log shows what was asked and what was found.
    shown = {"schema": args.get("schema")}
    return call_record(task["id"], task["tool"], step=task["step"], args=shown, result=values,
                       duration_s=time.monotonic() - started)  # fmt: skip
