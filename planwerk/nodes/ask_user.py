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
from planwerk.nodes.prepare import MAX_QUESTION_CHARS
from planwerk.prompts.texts import texts_for

MAX_ANSWER_CHARS = MAX_QUESTION_CHARS
"""A longer answer is refused like a longer question: it would be kept in every later checkpoint and prompt."""
MAX_ANSWER_ASKS = 3
"""An answer over the limit is asked for again (naming the problem) this many times, then replaced by a note."""


def answer_text(answer: Any) -> str:
    """The text of a resume value: Studio and the SDK resume with a string; a form may send ``{"answer": ...}``."""
    return str(answer.get("answer", answer)) if isinstance(answer, dict) else str(answer)


def answer_problem(answer: Any) -> str | None:
    """Why ``answer`` cannot be taken (too long), or ``None``."""
    length = len(answer_text(answer))
    if length > MAX_ANSWER_CHARS:
        return f"the answer has {length:,} characters; at most {MAX_ANSWER_CHARS:,} are accepted"
    return None


async def ask_user(state: AgentState, runtime: Runtime[Context]) -> dict[str, Any]:
    """Pause the thread with the question; the answer becomes ``user.answer`` and goes to the planner."""
    question = state.get("pending_question") or texts_for(profile_of(context_of(runtime))).default_clarification
    request: dict[str, Any] = {"kind": "ask_user", "question": question}
    for _ in range(MAX_ANSWER_ASKS):
        answer = interrupt(request)
        problem = answer_problem(answer)
        if problem is None:
            text = answer_text(answer)
            break
        request = {**request, "error": problem}  # asked again: the thread keeps waiting, the text is not kept
    else:
        text = f"[answer rejected: {problem}]"
    return {
        "messages": [AIMessage(question), HumanMessage(text)],
        "user": {**state.get("user", {}), "answer": text},
        "clarifications": [*state.get("clarifications", []), {"question": question, "answer": text}],
        "pending_question": None,
        "plan": None,
        "feedback": [],
    }
