"""What the answer loop's last node does: the ``final_answer`` event, the metadata, the one AI message.

Every answer reaches the user through :func:`deliver`, called by the node that ends the loop (``check_answer`` for
an accepted answer, ``fallback`` for the deterministic one or the fixed no-plan text). A rejected answer is never
returned as a message: the model calls are tagged ``nostream`` and only the delivered answer is in the state's
``messages``, which is what a chat shows (``messages`` / ``messages-tuple`` stream modes).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from langchain_core.messages import AIMessage
from langgraph.runtime import Runtime

from planwerk.events import FinalAnswerEvent
from planwerk.graph.context import Context
from planwerk.graph.nodes.common import counters, question_of
from planwerk.graph.state import AgentState, AnswerSource, Draft, add_usage
from planwerk.prompts.examples import add_example


def reported_state(state: AgentState, *, latest_only: bool = True) -> AgentState:
    """``state`` with only the calls the answer reports: each call id's latest record (``latest_only``; a corrected
    plan reuses ids: a call that failed and then ran is reported as run; the 1.5B model answered "scheduled but
    failed" from both), and after a self-consistency vote only the winning sample's (:attr:`Draft.kept_calls`,
    decided by the ``answer`` node)."""
    calls = state.get("calls") or []
    last = {call["id"]: index for index, call in enumerate(calls)}
    reported = [call for index, call in enumerate(calls) if not latest_only or last[call["id"]] == index]
    draft = state.get("draft")
    keep = draft.get("kept_calls") if draft else None
    if keep is not None:
        kept = set(keep)
        reported = [call for call in reported if call["id"] in kept]
    if len(reported) == len(calls):
        return state
    return AgentState(**{**state, "calls": reported})


async def deliver(
    state: AgentState,
    runtime: Runtime[Context],
    context: Context,
    *,
    answer: str,
    source: AnswerSource,
    grounded: bool | None,
    message_id: str | None,
    usage_update: dict[str, float] | None = None,
) -> dict[str, Any]:
    """The state update that ends the answer loop with ``answer``: the ``final_answer`` event (its metadata:
    ``grounded``, ``answer_source``, the first answer's problems, counters), the plan learned as an example where
    the run allows it, and the answer as the question's one AI message (the model reply's id while the text is
    the reply's, so a chat that saw a streamed reply shows it once)."""
    usage_update = usage_update or {}
    usage = add_usage(state.get("usage", {}), usage_update)
    draft: Draft | dict[str, Any] = state.get("draft") or {}
    # The counters count every call the engine made, retries too; only a vote's losing samples are left out.
    calls = reported_state(state, latest_only=False).get("calls", [])
    plan = state.get("plan")
    metadata = {
        **counters(usage),
        "tool_calls": len(calls),
        "failed_tool_calls": sum(1 for c in calls if c["status"] != "ok"),
        "plan_attempts": state.get("attempts", 0),
        "grounded": grounded,
        "answer_source": source,
        "grounding_problems": list(draft.get("problems") or []),
        "votes": draft.get("votes"),
        "answer_references": draft.get("references"),
        "duration_s": round(time.time() - state.get("started_at", time.time()), 3),
    }
    learnable = not state.get("candidates")  # a merged sample plan is no example of a plan
    if context.learn_examples and learnable and plan is not None and calls and metadata["failed_tool_calls"] == 0:
        example = {"steps": plan["steps"], "final": None}  # the shape the planner writes
        await asyncio.to_thread(add_example, question_of(state), example)
    runtime.stream_writer(FinalAnswerEvent(event="final_answer", answer=answer, metadata=metadata))
    message = AIMessage(answer, id=message_id)
    done = {**draft, "verdict": "accepted", "text": answer, "source": source, "message_id": message_id}
    return {
        "answer": answer,
        "messages": [message],
        "usage": usage_update,
        "draft": done if draft else None,
    }
