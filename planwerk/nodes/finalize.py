"""The finalizer: the answer from the results and the retrieved context, appended as an AI message."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from planwerk.core.language import detect_language
from planwerk.events import FinalAnswerEvent
from planwerk.graph.context import Context
from planwerk.graph.deps import Deps
from planwerk.graph.state import AgentState, add_usage
from planwerk.nodes.common import (
    context_of,
    counters,
    history_before_question,
    profile_of,
    prompt_today,
    reply_text,
    usage_of,
)
from planwerk.prompts.examples import add_example
from planwerk.prompts.render import build_answer_messages, trim_history
from planwerk.prompts.texts import texts_for

ANSWER_TAGS = ("planwerk:answer",)
"""The answer is what a chat shows: its tokens stream (``messages`` mode) under the id of the stored message."""


async def finalize(state: AgentState, runtime: Runtime[Context], *, deps: Deps) -> dict[str, Any]:
    """Answer: the planner's ``final`` when no tool ran, an honest failure when no plan passed, else the model."""
    context = context_of(runtime)
    plan = state.get("plan")
    calls = state.get("calls", [])
    usage_update: dict[str, float] = {}
    message_id: str | None = None
    if plan is None:
        answer = texts_for(profile_of(context)).no_plan_answer.format(
            problems="\n".join(f"- {p}" for p in state.get("plan_errors", []))
        )
    elif not calls and plan.get("final"):
        answer = plan["final"]
    else:
        model = await deps.model_for(context.model)
        messages = build_answer_messages(
            persona=profile_of(context).persona,
            question=state["question"],
            today=prompt_today(context, profile_of(context)),
            calls=calls,
            hits=state.get("hits", []),
            history=trim_history(history_before_question(state), context.history_max_tokens),
            texts=texts_for(profile_of(context)),
            # The answer's language is the question's, not the profile's (an English travel question).
            language=detect_language(state["question"], default=profile_of(context).language),
        )
        reply = await model.ainvoke(messages, config={"tags": list(ANSWER_TAGS)})
        answer = reply_text(reply).strip()
        message_id = reply.id
        usage_update = usage_of(reply, messages)
    usage = add_usage(state.get("usage", {}), usage_update)
    metadata = {
        **counters(usage),
        "tool_calls": len(calls),
        "failed_tool_calls": sum(1 for c in calls if c["status"] != "ok"),
        "plan_attempts": state.get("attempts", 0),
        "duration_s": round(time.time() - state.get("started_at", time.time()), 3),
    }
    if context.learn_examples and plan is not None and calls and metadata["failed_tool_calls"] == 0:
        example = {"steps": plan["steps"], "final": None}  # the shape the planner writes
        await asyncio.to_thread(add_example, state["question"], example)
    runtime.stream_writer(FinalAnswerEvent(event="final_answer", answer=answer, metadata=metadata))
    # The stored message keeps the streamed reply's id, so a chat UI that saw the tokens shows the answer once.
    return {"answer": answer, "messages": [AIMessage(answer, id=message_id)], "usage": usage_update}
