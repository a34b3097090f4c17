"""Every key of the graph's state is declared once as per-question or per-thread, and a new question starts every
per-question key again (planwerk.graph.state.QUESTION_START, planwerk.graph.nodes.prepare)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

from langchain_core.messages import HumanMessage

from planwerk.graph.context import Context
from planwerk.graph.nodes.chat import question_text
from planwerk.graph.nodes.prepare import prepare
from planwerk.graph.state import QUESTION_START, THREAD_KEYS, AgentState


def test_every_state_key_is_per_question_or_per_thread() -> None:
    keys = set(AgentState.__annotations__)
    assert not set(QUESTION_START) & THREAD_KEYS
    assert keys == set(QUESTION_START) | THREAD_KEYS


def test_a_new_question_starts_every_per_question_key_again() -> None:
    left: dict[str, Any] = {key: f"left by the last question: {key}" for key in QUESTION_START}
    messages = [HumanMessage("first"), HumanMessage("second?")]
    state = {**left, "messages": messages, "user": {"raw": "first", "city": "X"}}  # raw: as an older version kept it
    runtime = SimpleNamespace(context=Context(), stream_writer=lambda _event: None)
    update = asyncio.run(prepare(state, runtime))  # type: ignore[arg-type]
    assert {key: update[key] for key in QUESTION_START} == dict(QUESTION_START)
    assert "question" not in update  # kept once, as its message: derived after the progress message prepare wrote
    assert question_text([*messages, *update["messages"]]) == "second?"
    assert update["user"] == {"city": "X"}  # answers to earlier ask-backs carry over; the question is kept once
    update["plan_errors"].append("mutated")
    assert QUESTION_START["plan_errors"] == []  # each question gets its own lists
