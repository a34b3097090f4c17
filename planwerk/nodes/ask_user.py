"""Asking the user: a LangGraph interrupt, resumed with ``Command(resume="<answer>")``.

The ``ask_user`` event is emitted by the node that decided to ask (``check`` or ``verify``), not here: LangGraph
runs this node again from the top on resume, and the event must appear once.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, HumanMessage
from langgraph.runtime import Runtime
from langgraph.types import interrupt

from planwerk.graph.context import Context
from planwerk.graph.state import AgentState
from planwerk.nodes.common import context_of, profile_of
from planwerk.prompts.texts import texts_for


async def ask_user(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Pause the thread with the question; the answer becomes ``user.answer`` and goes to the planner."""
    question = state.get("pending_question") or texts_for(profile_of(context_of(runtime))).default_clarification
    answer = interrupt({"kind": "ask_user", "question": question})
    # Studio and the SDK resume with a string; a form may send {"answer": ...}.
    answer_text = str(answer.get("answer", answer)) if isinstance(answer, dict) else str(answer)
    return {
        "messages": [AIMessage(question), HumanMessage(answer_text)],
        "user": {**state.get("user", {}), "answer": answer_text},
        "clarifications": [*state.get("clarifications", []), {"question": question, "answer": answer_text}],
        "pending_question": None,
        "plan": None,
        "feedback": [],
    }
