"""The first node of every question: read it, check it, reset the per-question state."""

from __future__ import annotations

import copy
import time
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langgraph.runtime import Runtime

from planwerk.core.refs import QUESTION_FIELD
from planwerk.events import StartEvent
from planwerk.graph.context import Context
from planwerk.graph.nodes.chat import progress_message
from planwerk.graph.nodes.common import context_of, person_texts
from planwerk.graph.run_context import profile_of
from planwerk.graph.state import QUESTION_START, AgentState

MAX_QUESTION_CHARS = 8_000
"""Longer questions are rejected: they would crowd out the tools and the context in a small model's window."""


class QuestionError(ValueError):
    """The input holds no usable question."""


def check_question_text(text: str) -> str:
    """The question without surrounding space; raises :class:`QuestionError` when it is empty or too long."""
    question = text.strip()
    if not question:
        raise QuestionError("the question is empty; expected a non-empty user message")
    if len(question) > MAX_QUESTION_CHARS:
        raise QuestionError(f"the question has {len(question)} characters; at most {MAX_QUESTION_CHARS} are accepted")
    return question


def rejected_marker(message: BaseMessage) -> HumanMessage:
    """A short stand-in for a rejected (too long) question, with its id, so ``add_messages`` replaces it: the
    thread keeps a trace of the turn instead of copying the text into every later checkpoint."""
    return HumanMessage(
        content=f"[question rejected: {len(message.text)} characters, at most {MAX_QUESTION_CHARS} are accepted]",
        id=message.id,
    )


def oversized_earlier_questions(state: AgentState) -> list[HumanMessage]:
    """Markers for earlier questions that were rejected as too long (all human messages but the last)."""
    humans = [m for m in state.get("messages", []) if isinstance(m, HumanMessage)]
    return [rejected_marker(m) for m in humans[:-1] if len(m.text.strip()) > MAX_QUESTION_CHARS]


def current_question(state: AgentState) -> str:
    """The last human message's text; raises :class:`QuestionError` saying what was expected."""
    humans = [m for m in state.get("messages", []) if isinstance(m, HumanMessage)]
    if not humans:
        raise QuestionError('no question: send {"messages": [{"role": "user", "content": "<question>"}]}')
    return check_question_text(humans[-1].text)


async def prepare(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Start a question: every per-question key starts again (``QUESTION_START``); the user's answers to earlier
    questions asked back carry over. The question is kept once, as its message: the nodes derive it
    (:func:`planwerk.graph.nodes.common.question_of`), and ``user.raw`` from it where references are resolved."""
    question = current_question(state)
    runtime.stream_writer(StartEvent(event="start", question=question))
    # A question rejected earlier stays in the conversation (the input was stored before this node refused it);
    # a short marker replaces it, so later checkpoints do not copy it (a 1 MB question did, into every one).
    markers = oversized_earlier_questions(state)
    # A chat shows this at once; the plan, the calls and the answer follow as messages (planwerk.graph.nodes.chat).
    progress = progress_message(person_texts(question, profile_of(context_of(runtime))).progress_planning)
    return {
        "messages": [*markers, progress],  # the progress message marks where the question starts (question_index)
        # An older version stored the question as user.raw too: dropped, so the question is kept once.
        "user": {k: v for k, v in state.get("user", {}).items() if k != QUESTION_FIELD},
        **copy.deepcopy(dict(QUESTION_START)),
        "started_at": time.time(),
    }
