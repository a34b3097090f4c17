"""The first node of every question: read it, check it, reset the per-question state."""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import HumanMessage
from langgraph.runtime import Runtime

from planwerk.events import StartEvent
from planwerk.graph.context import Context
from planwerk.graph.state import AgentState

MAX_QUESTION_CHARS = 8_000
"""Longer questions are rejected: they would crowd out the tools and the context in a small model's window."""


class QuestionError(ValueError):
    """The input holds no usable question."""


def current_question(state: AgentState) -> str:
    """The last human message's text; raises :class:`QuestionError` saying what was expected."""
    humans = [m for m in state.get("messages", []) if isinstance(m, HumanMessage)]
    if not humans:
        raise QuestionError('no question: send {"messages": [{"role": "user", "content": "<question>"}]}')
    question = humans[-1].text.strip()
    if not question:
        raise QuestionError("the question is empty; expected a non-empty user message")
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(f"the question has {len(question)} characters; at most {MAX_QUESTION_CHARS} are accepted")
    return question


async def prepare(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Start a question: ``user.raw`` is the question, earlier results and counters are cleared."""
    question = current_question(state)
    runtime.stream_writer(StartEvent(event="start", question=question))
    return {
        "question": question,
        "user": {**{k: v for k, v in state.get("user", {}).items() if k != "raw"}, "raw": question},
        "hits": [],
        "reply": None,
        "plan": None,
        "next_step": 0,
        "plan_errors": [],
        "feedback": [],
        "clarifications": [],
        "results": None,
        "calls": None,
        "usage": None,
        "attempts": 0,
        "answer": None,
        "pending_question": None,
        "started_at": time.time(),
    }
